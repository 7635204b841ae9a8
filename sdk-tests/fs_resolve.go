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

// resolution is one ResolvePath call and the path it must name.
type resolution struct {
	path       string
	followLast bool
	want       string
}

// wantResolved checks each resolution, then that resolving left absent
// uncreated: a missing parent is named, never made.
func wantResolved(t *T, w *ws, absent string, cases []resolution) {
	t.Helper()
	r := resolver(t, w)
	for _, c := range cases {
		got, err := r.ResolvePath(t.Context(), c.path, c.followLast)
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%q, followLast %v) = %q, %v; want %q", c.path, c.followLast, got, err, c.want)
		}
	}
	if w.exists(absent) {
		t.Errorf("ResolvePath created the missing %s", absent)
	}
}

// checkResolvePlain: without symlinks the resolved path is the clean one;
// missing parents are named, not created.
func checkResolvePlain(t *T, w *ws) {
	w.write("d/f.txt", "x\n")
	wantResolved(t, w, "d/new", []resolution{
		{"/d/./f.txt", true, "d/f.txt"},
		{"d/../d/f.txt", false, "d/f.txt"},
		{"d/new/deeper/g.txt", true, "d/new/deeper/g.txt"},
		{"/", true, "."},
	})
}

// checkResolveSymlinks: symlinks on the path are followed chroot-style
// inside the workspace, an absolute one from the workspace root.
func checkResolveSymlinks(t *T, w *ws) {
	w.write("protected/f", "secret\n")
	w.symlink("protected", "p")
	w.symlink("/protected", "abs")
	w.symlink("protected/f", "flink")
	wantResolved(t, w, "protected/a", []resolution{
		{"p/new", true, "protected/new"},
		{"abs/a/b/new", true, "protected/a/b/new"},
		{"flink", true, "protected/f"},
		{"flink", false, "flink"},
		{"p/f", false, "protected/f"},
	})
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
