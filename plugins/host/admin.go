//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// The host backend records each session it opens in a small file under
// <state dir>/host/@state, so that another wai process (wai ps, wai rm,
// wai gc) can list it and tell a session in use from one a crash left
// behind. "@" cannot occur in a session name, so the directory never
// collides with a workspace under the default root.

// sessionRecord is what the backend keeps about a session on disk. The
// file's modification time is the session's last use.
type sessionRecord struct {
	Session string    `json:"session"`
	User    string    `json:"user,omitempty"`
	Root    string    `json:"root"` // the real host path of the workspace
	Keep    bool      `json:"keep"`
	Own     bool      `json:"own"` // the root is the session's own (its template has {session})
	Created time.Time `json:"created"`
	// Holders are the processes that have the session open now.
	Holders []*backend.Holder `json:"holders,omitempty"`
}

// liveHolder returns the first holder that still runs, or nil.
func (r *sessionRecord) liveHolder() *backend.Holder {
	for _, h := range r.Holders {
		if h.Alive() {
			return h
		}
	}
	return nil
}

// records is the directory of a backend's session records.
type records struct{ dir string }

func (rs records) path(session string) string { return filepath.Join(rs.dir, session+".json") }

// update locks the session's record, hands it to fn (zero, with exists
// false, when there is none), and writes back what fn returns, or removes
// the file when fn returns nil. The lock (flock) keeps processes that open,
// close and remove the same session from losing each other's changes.
func (rs records) update(session string, fn func(r sessionRecord, exists bool) (*sessionRecord, error)) error {
	if err := os.MkdirAll(rs.dir, 0o700); err != nil {
		return err
	}
	f, err := rs.lock(session)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	var r sessionRecord
	exists := len(b) > 0 && json.Unmarshal(b, &r) == nil
	next, err := fn(r, exists)
	if err != nil {
		if !exists {
			os.Remove(f.Name())
		}
		return err
	}
	if next == nil {
		return os.Remove(f.Name())
	}
	out, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append(out, '\n'), 0)
	return err
}

// lock opens and locks the session's record file, creating it empty if
// needed. A file another process removed while this one waited for the
// lock is not the record any more: lock then tries again on the new one.
func (rs records) lock(session string) (*os.File, error) {
	for {
		f, err := os.OpenFile(rs.path(session), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(rs.path(session))
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
	}
}

// read returns a session's record and its last use, without locking: a
// record caught mid-write reads as an error, and the caller skips it.
func (rs records) read(session string) (sessionRecord, time.Time, error) {
	var r sessionRecord
	fi, err := os.Stat(rs.path(session))
	if err != nil {
		return r, time.Time{}, err
	}
	b, err := os.ReadFile(rs.path(session))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	return r, fi.ModTime(), err
}

// sessions lists the sessions that have a record.
func (rs records) sessions() ([]string, error) {
	ents, err := os.ReadDir(rs.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && validSession(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// touch records a use of the session.
func (rs records) touch(session string) {
	now := time.Now()
	_ = os.Chtimes(rs.path(session), now, now)
}

func validSession(s string) bool { return backend.WorkspaceSpec{Session: s}.Validate() == nil }

// hold records that this process opens the session, whose root (own: the
// session's alone) is root.
// It reports whether the session had a record already (a kept session).
func (b *Backend) hold(spec backend.WorkspaceSpec, root string, own bool) (existed bool, err error) {
	me := backend.CurrentHolder()
	err = b.records.update(spec.Session, func(r sessionRecord, exists bool) (*sessionRecord, error) {
		existed = exists
		if !exists {
			r = sessionRecord{Session: spec.Session, Created: time.Now().UTC()}
		}
		r.User, r.Root, r.Own = spec.User, root, own
		r.Keep = r.Keep || spec.Keep
		r.Holders = append(liveHolders(r.Holders, me), me)
		return &r, nil
	})
	return existed, err
}

// letGo records that this process closed the session: the record goes
// with a removed workspace (gone: nothing is left to list), and stays
// without this process for a kept one.
func (b *Backend) letGo(session, root string, own, keep, gone bool) error {
	me := backend.CurrentHolder()
	return b.records.update(session, func(r sessionRecord, exists bool) (*sessionRecord, error) {
		r.Holders = liveHolders(r.Holders, me)
		if gone && len(r.Holders) == 0 {
			return nil, nil
		}
		if !exists {
			r = sessionRecord{Session: session, Root: root, Own: own, Keep: keep, Created: time.Now().UTC()}
		}
		return &r, nil
	})
}

// liveHolders drops holders that are gone, and this process (me).
func liveHolders(hs []*backend.Holder, me *backend.Holder) []*backend.Holder {
	return slices.DeleteFunc(slices.Clone(hs), func(h *backend.Holder) bool { return *h == *me || !h.Alive() })
}

// ListSessions lists the sessions recorded under the state directory, in
// use or kept, with their size on disk and the process holding each.
func (b *Backend) ListSessions(ctx context.Context) ([]backend.SessionInfo, error) {
	names, err := b.records.sessions()
	if err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "ps", b.records.dir, "cannot read the session records: %v", err)
	}
	out := make([]backend.SessionInfo, 0, len(names))
	for _, n := range names {
		r, used, err := b.records.read(n)
		if err != nil {
			continue // removed meanwhile, or caught mid-write
		}
		out = append(out, b.info(ctx, r, used))
	}
	return out, ctx.Err()
}

func (b *Backend) info(ctx context.Context, r sessionRecord, used time.Time) backend.SessionInfo {
	si := backend.SessionInfo{Backend: "host", Session: r.Session, Created: r.Created, LastUsed: used,
		Size: -1, Keep: r.Keep, Workspace: r.Root}
	if h := r.liveHolder(); h != nil {
		si.Holder = h.String()
	}
	if n, err := backend.DiskUsage(ctx, r.Root); err == nil {
		si.Size = n
	}
	return si
}

// RemoveSession removes a session no live process holds: its root when it
// is the session's own (a shared root stays: other sessions use it) and
// its record.
func (b *Backend) RemoveSession(ctx context.Context, session string) (backend.SessionInfo, error) {
	if !validSession(session) {
		return backend.SessionInfo{}, backend.Errorf(backend.ErrInvalid, "rm", session, "not a session name")
	}
	if _, err := os.Stat(b.records.path(session)); err != nil {
		return backend.SessionInfo{}, backend.Errorf(backend.ErrNotFound, "rm", session, "no such session on the host backend (wai ps lists them)")
	}
	var si backend.SessionInfo
	err := b.records.update(session, func(r sessionRecord, exists bool) (*sessionRecord, error) {
		if !exists {
			return nil, backend.Errorf(backend.ErrNotFound, "rm", session, "no such session on the host backend (wai ps lists them)")
		}
		si = b.info(ctx, r, time.Now())
		if h := r.liveHolder(); h != nil {
			return &r, backend.Errorf(backend.ErrPermission, "rm", session,
				"the session is in use by %s: wai never removes a session a running process holds; end it there (close the client, or stop that process) and run wai rm again", h)
		}
		if err := b.removeFiles(r); err != nil {
			return &r, err
		}
		return nil, nil
	})
	return si, err
}

// removeFiles kills the session's jobs and removes its own root; a
// shared root stays.
func (b *Backend) removeFiles(r sessionRecord) error {
	if err := b.endJobs(r.Session); err != nil {
		return err
	}
	if !r.Own || r.Root == "" || !filepath.IsAbs(r.Root) {
		return nil
	}
	if err := removeRoot(r.Root); err != nil {
		return backend.Errorf(backend.ErrUnavailable, "rm", r.Session, "cannot remove the workspace root %s: %v", r.Root, err)
	}
	return nil
}

// CollectGarbage removes sessions no live process holds: those a process
// left behind when it died, and kept ones unused for longer than keep_for
// (every kept one with opts.All).
func (b *Backend) CollectGarbage(ctx context.Context, opts backend.GCOptions) (backend.GCReport, error) {
	var rep backend.GCReport
	names, err := b.records.sessions()
	if err != nil {
		return rep, backend.Errorf(backend.ErrUnavailable, "gc", b.records.dir, "cannot read the session records: %v", err)
	}
	now := time.Now()
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if !opts.Matches(n) {
			continue
		}
		_, used, _ := b.records.read(n)
		var item backend.GCItem
		err := b.records.update(n, func(r sessionRecord, exists bool) (*sessionRecord, error) {
			if !exists {
				return nil, nil // removed meanwhile
			}
			item = backend.GCItem{Kind: "workspace", Name: r.Root, Session: n}
			remove, why := b.verdict(r, used, opts.All, now)
			item.Reason = why
			if !remove {
				rep.Kept = append(rep.Kept, item)
				return &r, nil
			}
			if err := b.removeFiles(r); err != nil {
				return &r, err
			}
			if !r.Own {
				item.Reason += " (its root is shared: only the record went)"
			}
			rep.Removed = append(rep.Removed, item)
			return nil, nil
		})
		if err != nil {
			rep.Errors = append(rep.Errors, err)
		}
	}
	return rep, nil
}

// verdict decides whether a session no one may still need goes.
func (b *Backend) verdict(r sessionRecord, used time.Time, all bool, now time.Time) (bool, string) {
	keepFor := time.Duration(b.cfg.KeepFor)
	idle := now.Sub(used).Round(time.Second)
	if h := r.liveHolder(); h != nil {
		return false, "in use by " + h.String()
	}
	switch {
	case r.Keep && !all && keepFor == 0:
		return false, "kept session (keep_for 0 keeps it until wai rm or wai gc --all)"
	case r.Keep && !all && now.Sub(used) < keepFor:
		return false, fmt.Sprintf("kept session, idle %s of keep_for %s", idle, keepFor)
	case r.Keep:
		return true, fmt.Sprintf("kept session idle %s", idle)
	case len(r.Holders) > 0:
		return true, "left behind by " + r.Holders[0].String() + ", which is gone"
	}
	return true, "its session was closed"
}
