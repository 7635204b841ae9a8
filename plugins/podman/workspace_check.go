//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
)

// makeDir creates the workspace directory when it is missing and, with
// workspace_size, mounts the session's file system on it. fresh reports a
// directory (and image) this call made.
func (b *Backend) makeDir(ctx context.Context, w *Workspace) (fresh bool, err error) {
	if err := os.Mkdir(w.dir, 0o755); err == nil {
		fresh = true
	} else if !os.IsExist(err) {
		return false, backend.Errorf(backend.ErrUnavailable, "open", w.dir, "cannot create the workspace directory: %v", err)
	}
	// A session made with a size limit keeps its file system when the
	// limit is turned off later: its files are in the image.
	if _, err := os.Stat(w.imagePath); b.cfg.workspaceBytes > 0 || err == nil {
		created, err := attachVolume(ctx, w.dir, w.imagePath, b.cfg.workspaceBytes, b.owner)
		if err != nil {
			if fresh {
				os.Remove(w.dir)
			}
			return false, err
		}
		fresh = fresh || created
	}
	return fresh, nil
}

// openFS opens the confined file system of the workspace directory and
// records which directory it is, so that a workspace removed or replaced
// behind the session's back is noticed (see checkDir).
func (w *Workspace) openFS() error {
	b := w.b
	fsOpts := rootfs.Options{Limits: b.limits}
	if b.owner != nil {
		fsOpts.Owner = &rootfs.Owner{UID: b.owner.uid, GID: b.owner.gid}
	} else {
		// Without root the container user cannot be given the files;
		// make them writable for it instead (the parent is 0711).
		fsOpts.FileMode, fsOpts.DirMode = 0o666, 0o777
	}
	fs, err := rootfs.New(w.dir, fsOpts)
	if err != nil {
		return err
	}
	id, err := dirIdentity(w.dir)
	if err != nil {
		fs.Close()
		return backend.Errorf(backend.ErrUnavailable, "open", w.dir, "cannot stat the workspace directory: %v", err)
	}
	w.fs, w.dirID = fs, id
	return nil
}

// fileID tells one directory from another made at the same path.
type fileID struct{ dev, ino uint64 }

func dirIdentity(dir string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// checkDir makes sure the session's files are still the ones it had. Idle
// cleanup never removes them (it removes containers only), but wai gc run
// by hand, or a person, can remove the workspace of a session this
// process still holds; then the next call says so plainly, once, instead
// of presenting an empty workspace, and the session goes on with an empty
// one. A session reopened after its kept workspace was removed is told the
// same way (see noticeRemoved).
func (w *Workspace) checkDir(ctx context.Context) error {
	w.dirMu.Lock()
	defer w.dirMu.Unlock()
	if msg := w.removedNotice; msg != "" {
		w.removedNotice = ""
		return backend.Errorf(backend.ErrUnavailable, "open", w.ref(), "%s", msg)
	}
	if w.volume != "" {
		// The volume cannot go while its container mounts it, and a new
		// container mounts it by name: nothing to check on this machine.
		return nil
	}
	if id, err := dirIdentity(w.dir); err == nil && id == w.dirID {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return backend.Errorf(backend.ErrUnavailable, "open", "", "the workspace of session %s is closed", w.session)
	}
	msg := w.removedMessage(time.Now())
	// The container mounts the removed directory: it goes, and the next
	// command starts one on the new directory.
	st := w.cur.Swap(nil)
	if err := w.b.remove(ctx, w.name); err != nil {
		return fmt.Errorf("%s; removing its container failed: %w", msg, err)
	}
	if st != nil {
		w.b.event(ctx, "runtime.podman.removed", w, "container_id", short(st.id), "reason", "its workspace was removed")
	}
	w.deadReason = ""
	if _, err := w.b.makeDir(ctx, w); err != nil {
		return fmt.Errorf("%s; making a new one failed: %w", msg, err)
	}
	if err := w.b.prepareDir(w.dir); err != nil {
		return fmt.Errorf("%s; making a new one failed: %w", msg, err)
	}
	if err := w.fs.Reopen(); err != nil {
		return fmt.Errorf("%s; making a new one failed: %w", msg, err)
	}
	id, err := dirIdentity(w.dir)
	if err != nil {
		return fmt.Errorf("%s; making a new one failed: %w", msg, err)
	}
	w.dirID = id
	_ = os.Remove(tombstonePath(w.statePath))
	w.b.event(ctx, "runtime.podman.workspace_lost", w, "workspace", w.dir, "message", msg)
	return backend.Errorf(backend.ErrUnavailable, "open", w.dir, "%s", msg)
}

// removedMessage explains a removed workspace, with wai gc's record of
// when and why when it left one.
func (w *Workspace) removedMessage(noticed time.Time) string {
	when := fmt.Sprintf("before %s, by hand or by another program", noticed.UTC().Format(time.RFC3339))
	if t, err := readTombstone(tombstonePath(w.statePath)); err == nil {
		when = fmt.Sprintf("at %s because %s", t.RemovedAt.UTC().Format(time.RFC3339), t.Reason)
	}
	return fmt.Sprintf("this session's workspace (%s) was removed %s: its files are gone and the session starts empty. "+
		"Run the call again to go on in the empty workspace", w.dir, when)
}

// noticeRemoved arms the notice for a kept session reopened after wai gc
// removed its workspace: its owner expected the files to be there.
func (w *Workspace) noticeRemoved() {
	p := tombstonePath(w.statePath)
	t, err := readTombstone(p)
	if err != nil {
		return
	}
	_ = os.Remove(p)
	w.removedNotice = fmt.Sprintf("this kept session's workspace was removed at %s because %s: its files are gone and the session starts empty. "+
		"Run the call again to go on in the empty workspace", t.RemovedAt.UTC().Format(time.RFC3339), t.Reason)
}

// workspaceFS is the workspace's file system as callers see it: the
// confined rootfs.FS (its other methods promoted), checked before each
// call against a removed workspace, and with "no space left" turned into
// what it means here.
type workspaceFS struct {
	*rootfs.FS
	w *Workspace
}

func (f *workspaceFS) full(err error) error {
	limit := f.w.b.cfg.workspaceBytes
	if err == nil || limit == 0 {
		return err
	}
	var be *backend.Error
	if errors.Is(err, syscall.ENOSPC) || errors.As(err, &be) && be.Kind == backend.ErrUnavailable && be.Msg == "no space left on the device (or quota exceeded)" {
		// ErrInvalid: the write breaks the session's workspace_size limit;
		// the backend serves fine, and removing files fixes it.
		return backend.Errorf(backend.ErrInvalid, "fs.write", "",
			"the workspace is full: it is limited to %s (workspace_size in [backends.podman]); remove files to make room", formatBytes(limit))
	}
	return err
}

// checked runs one call of the file system once the workspace directory
// checks out, so no call can skip the check.
func checked[Req, Res any](ctx context.Context, w *Workspace, req Req, call func(context.Context, Req) (Res, error)) (Res, error) {
	if err := w.checkDir(ctx); err != nil {
		var zero Res
		return zero, err
	}
	return call(ctx, req)
}

func (f *workspaceFS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	return checked(ctx, f.w, p, f.FS.Stat)
}

func (f *workspaceFS) List(ctx context.Context, p string) (backend.ListResult, error) {
	return checked(ctx, f.w, p, f.FS.List)
}

func (f *workspaceFS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	return checked(ctx, f.w, req, f.FS.Read)
}

func (f *workspaceFS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	res, err := checked(ctx, f.w, req, f.FS.Write)
	return res, f.full(err)
}

func (f *workspaceFS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	res, err := checked(ctx, f.w, req, f.FS.Edit)
	return res, f.full(err)
}

func (f *workspaceFS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	return checked(ctx, f.w, req, f.FS.Glob)
}

func (f *workspaceFS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	return checked(ctx, f.w, req, f.FS.Grep)
}

func (f *workspaceFS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	return checked(ctx, f.w, req, f.FS.Remove)
}

// Interface guards
var _ backend.Filesystem = (*workspaceFS)(nil)
