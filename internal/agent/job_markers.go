//go:build linux

package agent

import (
	"bytes"
	"os"
)

// execMarkers lists the markers of the container's other exec sessions:
// the processes whose parent is outside the container (ppid 0), which
// only the Podman service can start. A background job's supervisor is
// one, and carries its job's marker, so the orphans a job leaves behind
// (reparented to PID 1) are the job's, not swept as the leftovers of a
// command that ends meanwhile. A command cannot make such a process, so
// a forged marker protects nothing.
func execMarkers() map[string]bool {
	m := map[string]bool{}
	self := os.Getpid()
	for _, p := range scan() {
		if p.ppid != 0 || p.pid == self {
			continue
		}
		for _, kv := range environ(p.pid) {
			if bytes.HasPrefix(kv, []byte(markerPrefix)) {
				m[string(kv)] = true
			}
		}
	}
	return m
}

// markerPrefix starts every marker the host gives a command or a job.
const markerPrefix = "WAI_EXEC="
