//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/internal/atomicfile"
)

// A job's deadline is kept on the host, beside the session's state file
// (SESSION.json.jobs/ID), where no command in the container reaches it:
// the record in the container (start time, max runtime) is the sandbox's
// word, which a command can rewrite to keep its job alive. The host stops
// a job past this deadline whatever the container's record says.

// recordJobDeadline writes a job's deadline (start + max runtime).
func (w *Workspace) recordJobDeadline(id string, deadline time.Time) error {
	dir := w.deadlinesDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, id), []byte(deadline.UTC().Format(time.RFC3339Nano)), 0o600)
}

// jobDeadline returns the host's deadline of a job; ok is false for a job
// the host has no record of (its record was lost with the state file).
func (w *Workspace) jobDeadline(id string) (deadline time.Time, ok bool) {
	if !jobIDPattern.MatchString(id) {
		return time.Time{}, false
	}
	b, err := os.ReadFile(filepath.Join(w.deadlinesDir(), id))
	if err != nil || len(b) > 64 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	return t, err == nil
}
