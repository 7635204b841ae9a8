//go:build linux && (amd64 || arm64)

package host

import (
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/jobring"
)

// readRing reads a stream's ring file (internal/jobring) from since on, at
// most max bytes. A missing file is a stream with nothing in it.
func readRing(path string, budget int, since int64, max int) backend.JobOutput {
	head, tail, total := jobring.Read(path, budget)
	return backend.ReadJobOutput(head, tail, total, since, max)
}
