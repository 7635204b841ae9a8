package podman

import (
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// markerVar is the environment variable that carries an exec's id into
// every process it starts, so a timeout can find them all.
const markerVar = "WAI_EXEC"

// Container describes one managed container, as List reports it.
type Container struct {
	Name      string
	ID        string
	Session   string
	Image     string
	State     string // Podman's state: running, exited, created, …
	Created   time.Time
	StartedAt time.Time // zero when it never ran
	// LastUsed is when a command last ran in the session (zero when
	// unknown: no state file); Idle is the time since.
	LastUsed time.Time
	Idle     time.Duration
	Keep     bool
	// Workspace is the host directory mounted at /workspace.
	Workspace string
	// Owner describes the wai process holding the session ("" when none);
	// OwnerAlive says whether that process still runs.
	Owner      string
	OwnerAlive bool
}

// GCItem is one thing GC removed or left alone.
type GCItem struct {
	Kind    string // "container" or "workspace"
	Name    string // container name, or workspace directory
	Session string
	Reason  string // why it was (or was not) removed
}

// GCReport lists what GC did.
type GCReport struct {
	Removed []GCItem
	Kept    []GCItem
	// Errors are removals that failed; the rest went ahead.
	Errors []error
}

// CheckStatus and Check are the preflight results of host/backend, which
// wai preflight reaches through the backend.Preflighter of this driver.
type (
	CheckStatus = backend.CheckStatus
	Check       = backend.Check
)

const (
	CheckOK   = backend.CheckOK
	CheckWarn = backend.CheckWarn
	CheckFail = backend.CheckFail
)
