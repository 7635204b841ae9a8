package podman

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/atomicfile"
)

// sessionState is what the backend records about a session on disk, next
// to the workspaces, so that another wai process (wai ps, wai gc, a later
// reaper) can tell a session in use from one a crash left behind. The
// file's modification time is the session's last use.
type sessionState struct {
	Session   string    `json:"session"`
	User      string    `json:"user,omitempty"`
	Container string    `json:"container"`
	Workspace string    `json:"workspace"`
	Keep      bool      `json:"keep"`
	Created   time.Time `json:"created"`
	// Owner is the process holding the session open; nil once it closed
	// the session (which then lingers only when kept).
	Owner *backend.Holder `json:"owner,omitempty"`
	// IdleTimeout is the idle_timeout of the config that opened the
	// session: a kept session is cleaned up by its own rule, whichever
	// process sweeps.
	IdleTimeout *Duration `json:"idle_timeout,omitempty"`
}

// stateDirName holds the state files inside the workspace directory. "@"
// cannot occur in a session name, so it never collides with a workspace.
const stateDirName = "@state"

func statePath(workspaceDir, session string) string {
	return filepath.Join(workspaceDir, stateDirName, session+".json")
}

// writeState replaces the state file atomically.
func writeState(p string, s sessionState) error { return writePrivateJSON(p, s) }

// writePrivateJSON writes v as indented JSON to p atomically, readable by
// wai's user only, making p's directory as needed: how the backend keeps
// its records (session state, container and snapshot metadata).
func writePrivateJSON(p string, v any) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(p, append(data, '\n'), 0o600)
}

// readState reads a state file and its last-use time.
func readState(p string) (sessionState, time.Time, error) {
	var s sessionState
	fi, err := os.Stat(p)
	if err != nil {
		return s, time.Time{}, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return s, time.Time{}, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, time.Time{}, fmt.Errorf("state file %s: %w", p, err)
	}
	return s, fi.ModTime(), nil
}

// gcState reads a session's state file for gc: nil when there is none. A
// file that exists but cannot be read is an error, which gc must not take
// for "the session is gone" (see unreadableState).
func gcState(p string) (*sessionState, time.Time, error) {
	s, used, err := readState(p)
	switch {
	case err == nil:
		return &s, used, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, time.Time{}, nil
	}
	return nil, time.Time{}, err
}

// unreadableState is gc's verdict on a session whose state file cannot be
// read: kept, since it may be a kept session's files that removing would
// lose. Only --all removes it.
func unreadableState(err error) (bool, string) {
	return false, fmt.Sprintf("its state file cannot be read (%v): kept, as it may be a kept session; fix or remove the file, or run wai gc --all", err)
}

// touchState records a use of the session.
func touchState(p string, t time.Time) { _ = os.Chtimes(p, t, t) }

// verdict decides whether a session's leftovers go.
func verdict(s *sessionState, lastUsed time.Time, all bool, idle time.Duration, now time.Time) (bool, string) {
	if s != nil && s.IdleTimeout != nil {
		idle = time.Duration(*s.IdleTimeout)
	}
	switch {
	case s == nil:
		return true, "no state file: its session is gone"
	case s.Owner.Alive():
		return false, "in use by " + s.Owner.String()
	case s.Keep && !all && idle == 0:
		return false, "kept session (idle_timeout 0 keeps it; wai gc --all removes it)"
	case s.Keep && !all && now.Sub(lastUsed) < idle:
		return false, fmt.Sprintf("kept session, idle %s of idle_timeout %s", now.Sub(lastUsed).Round(time.Second), idle)
	case s.Keep:
		return true, fmt.Sprintf("kept session idle %s", now.Sub(lastUsed).Round(time.Second))
	case s.Owner != nil:
		return true, "left behind by " + s.Owner.String() + ", which is gone"
	}
	return true, "its session was closed"
}

// removeWorkspace removes a session's directory (unmounting the file
// system of a size-limited one and removing its image) and state file, and
// leaves a tombstone saying when, by whom (see removedBy) and why, which
// the session's next call reports (see Workspace.checkDir). The directory
// must be named after the session: a label edited to point elsewhere does
// not make gc delete it.
func removeWorkspace(dir, session, stPath, by string, reason ...string) error {
	var errs []error
	validState := stPath != "" && filepath.Base(stPath) == session+".json" && filepath.Base(filepath.Dir(stPath)) == stateDirName
	if dir != "" && filepath.IsAbs(dir) && filepath.Base(dir) == session && validSession(session) {
		if validState {
			writeTombstone(tombstonePath(stPath), by, strings.Join(reason, "; "))
		}
		image := filepath.Join(filepath.Dir(dir), stateDirName, session+imageSuffix)
		if err := detachVolume(dir, image); err != nil {
			errs = append(errs, err)
		} else if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("removing workspace %s: %w", dir, err))
		}
	}
	if validState {
		removeJobDeadlines(stPath)
		if err := os.Remove(stPath); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tombstone records the removal of a session's workspace by wai gc, wai
// rm or a serving process's sweep.
type tombstone struct {
	RemovedAt time.Time `json:"removed_at"`
	Reason    string    `json:"reason"`
}

// tombstonePath is next to the state file; its name ends in neither
// ".json" nor a session name, so gc never takes it for a session.
func tombstonePath(statePath string) string {
	return strings.TrimSuffix(statePath, ".json") + ".removed"
}

// removedBy names what removes a workspace in this process, for its
// tombstone: who ("wai rm", sweeper(); "" is wai gc) and this pid.
func removedBy(who string) string {
	if who == "" {
		who = "wai gc"
	}
	return who + " (pid " + strconv.Itoa(os.Getpid()) + ")"
}

// sweeper is who the periodic sweep of a process serving sessions (wai
// serve, say) is: a tombstone saying "wai gc" sent users after a
// command nobody ran.
func sweeper() string { return "the periodic sweep of " + filepath.Base(os.Args[0]) }

func writeTombstone(p, by, reason string) {
	if reason == "" {
		reason = "no live process held the session"
	}
	b, err := json.Marshal(tombstone{RemovedAt: time.Now().UTC(), Reason: by + " removed it: " + reason})
	if err == nil {
		_ = os.WriteFile(p, b, 0o600)
	}
}

func readTombstone(p string) (tombstone, error) {
	var t tombstone
	b, err := os.ReadFile(p)
	if err != nil {
		return t, err
	}
	return t, json.Unmarshal(b, &t)
}

func validSession(s string) bool {
	return backend.WorkspaceSpec{Session: s}.Validate() == nil
}

// Interface guards

// jobDeadlinesDir holds the host's record of a session's job deadlines
// (jobs_deadline.go), beside its state file.
func jobDeadlinesDir(statePath string) string { return statePath + ".jobs" }

// removeJobDeadlines forgets the deadlines of a session that ends.
func removeJobDeadlines(statePath string) {
	if statePath != "" {
		_ = os.RemoveAll(jobDeadlinesDir(statePath))
	}
}
