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
		return backend.Errorf(backend.ErrUnavailable, "open", w.dir, "%s", msg)
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
		return backend.Errorf(backend.ErrUnavailable, "fs.write", "",
			"the workspace is full: it is limited to %s (workspace_size in [backends.podman]); remove files to make room", formatBytes(limit))
	}
	return err
}

func (f *workspaceFS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.FileInfo{}, err
	}
	return f.FS.Stat(ctx, p)
}

func (f *workspaceFS) List(ctx context.Context, p string) (backend.ListResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.ListResult{}, err
	}
	return f.FS.List(ctx, p)
}

func (f *workspaceFS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.ReadResult{}, err
	}
	return f.FS.Read(ctx, req)
}

func (f *workspaceFS) Write(ctx context.Context, req backend.WriteRequest) (backend.WriteResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.WriteResult{}, err
	}
	res, err := f.FS.Write(ctx, req)
	return res, f.full(err)
}

func (f *workspaceFS) Edit(ctx context.Context, req backend.EditRequest) (backend.EditResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.EditResult{}, err
	}
	res, err := f.FS.Edit(ctx, req)
	return res, f.full(err)
}

func (f *workspaceFS) Glob(ctx context.Context, req backend.GlobRequest) (backend.GlobResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.GlobResult{}, err
	}
	return f.FS.Glob(ctx, req)
}

func (f *workspaceFS) Grep(ctx context.Context, req backend.GrepRequest) (backend.GrepResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.GrepResult{}, err
	}
	return f.FS.Grep(ctx, req)
}

func (f *workspaceFS) Remove(ctx context.Context, req backend.RemoveRequest) (backend.RemoveResult, error) {
	if err := f.w.checkDir(ctx); err != nil {
		return backend.RemoveResult{}, err
	}
	return f.FS.Remove(ctx, req)
}

// Interface guards
var _ backend.Filesystem = (*workspaceFS)(nil)
