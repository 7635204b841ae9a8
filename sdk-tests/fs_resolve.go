package sdktests

import (
	"github.com/wai-dev/wai/host/backend"
)

// resolver returns the workspace's PathResolver, or skips the check.
func resolver(t *T, w *ws) backend.PathResolver {
	t.Helper()
	r, ok := w.FS().(backend.PathResolver)
	if !ok {
		t.Skipf("the filesystem does not implement backend.PathResolver: the kernel refuses mutations a policy judges on it")
	}
	return r
}

func wantResolved(t *T, r backend.PathResolver, path string, followLast bool, want string) {
	t.Helper()
	got, err := r.ResolvePath(t.Context(), path, followLast)
	if err != nil || got != want {
		t.Errorf("ResolvePath(%q, followLast %v) = %q, %v; want %q", path, followLast, got, err, want)
	}
}

// checkResolvePlain: without symlinks the resolved path is the clean one;
// missing parents are named, not created.
func checkResolvePlain(t *T, w *ws) {
	r := resolver(t, w)
	w.write("d/f.txt", "x\n")
	wantResolved(t, r, "/d/./f.txt", true, "d/f.txt")
	wantResolved(t, r, "d/../d/f.txt", false, "d/f.txt")
	wantResolved(t, r, "d/new/deeper/g.txt", true, "d/new/deeper/g.txt")
	wantResolved(t, r, "/", true, ".")
	if w.exists("d/new") {
		t.Errorf("ResolvePath created the missing directory d/new")
	}
}

// checkResolveSymlinks: symlinks on the path are followed as the
// workspace's commands follow them, an absolute one from the root.
func checkResolveSymlinks(t *T, w *ws) {
	r := resolver(t, w)
	w.write("protected/f", "secret\n")
	w.symlink("protected", "p")
	w.symlink("/protected", "abs")
	w.symlink("protected/f", "flink")
	wantResolved(t, r, "p/new", true, "protected/new")
	wantResolved(t, r, "abs/a/b/new", true, "protected/a/b/new")
	wantResolved(t, r, "flink", true, "protected/f")
	wantResolved(t, r, "flink", false, "flink")
	wantResolved(t, r, "p/f", false, "protected/f")
	if w.exists("protected/a") {
		t.Errorf("ResolvePath created protected/a")
	}
}

// checkResolvedWriteUnfollowed: a write given the resolved path a policy
// judged fails, changing nothing, when a symlink is swapped onto that path
// between the check and the write.
func checkResolvedWriteUnfollowed(t *T, w *ws) {
	r := resolver(t, w)
	w.write("protected/f", "secret\n")
	w.write("allowed/f", "free\n")
	ctx, fs := t.Context(), w.FS()
	resolved, err := r.ResolvePath(ctx, "allowed/new", true)
	if err != nil || resolved != "allowed/new" {
		t.Fatalf("ResolvePath(allowed/new) = %q, %v", resolved, err)
	}
	if _, err := fs.Remove(ctx, backend.RemoveRequest{Path: "allowed", Recursive: true}); err != nil {
		t.Fatalf("Remove(allowed): %v", err)
	}
	w.symlink("protected", "allowed")
	_, err = fs.Write(ctx, backend.WriteRequest{Path: "allowed/new", Resolved: resolved, Content: "x"})
	wantKind(t, "Write through a symlink swapped onto the resolved path", err, backend.ErrInvalid)
	if w.exists("protected/new") {
		t.Errorf("Write with a resolved path followed a symlink swapped in after resolution: protected/new exists")
	}
	_, err = fs.Remove(ctx, backend.RemoveRequest{Path: "allowed/f", Resolved: "allowed/f"})
	wantKind(t, "Remove through a symlink swapped onto the resolved path", err, backend.ErrInvalid)
	if !w.exists("protected/f") {
		t.Errorf("Remove with a resolved path followed a symlink swapped in after resolution: protected/f is gone")
	}
}
