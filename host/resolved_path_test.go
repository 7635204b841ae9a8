package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// A policy that protects a directory judges the entry a mutation changes,
// not only the path asked for: with "ln -s protected p", write_file p/new
// is denied, through the real vfs tool plugin, a real policy plugin and
// the host backend's real file system.
func TestPoliciesSeeTheResolvedPath(t *testing.T) {
	cfg := hostConfig()
	// Workspaces of its own (the session name is fixed), and the shared
	// compilation cache: compiling the two plugins afresh under -race
	// took most of a minute.
	cfg.StateDir = plugbuild.StateDir(t)
	cfg.ReadBeforeWrite = false
	cfg.PolicyTimeout = 30 * time.Second // generous: wai_describe shares it, on two busy cores under -race
	cfg.Plugins = []host.PluginConfig{{Path: pluginFile(t, "tools/vfs"), Grants: []string{"fs.read", "fs.write"}}}
	cfg.Policies = []host.PolicyConfig{{Path: pluginFile(t, "host/testdata/denypath"), Config: map[string]any{"prefix": "protected"}}}
	ctx := context.Background()
	k := startKernel(t, cfg)
	s := openSession(t, k, "resolved")
	// What a command in the workspace can do: a protected directory, and
	// symlinks into it, relative and absolute (chroot-style: /protected
	// is the workspace's protected).
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Shell: "mkdir protected && echo secret > protected/f && " +
		"ln -s protected p && ln -s /protected abs && ln -s protected/f flink"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("planting the symlinks: %+v, %v", res, err)
	}
	call := func(tool, params string) (host.ToolResult, error) {
		return k.Call(ctx, "resolved", tool, json.RawMessage(params))
	}
	denied := func(what string, err error, resolved string) {
		t.Helper()
		if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "denypath") || !strings.Contains(err.Error(), resolved) {
			t.Errorf("%s: want a deny from denypath naming %s, got %v", what, resolved, err)
		}
	}
	_, err = call("write_file", `{"file_path": "p/new", "content": "x"}`)
	denied("write_file p/new (p -> protected)", err, "protected/new")
	_, err = call("write_file", `{"file_path": "abs/deeper/new", "content": "x"}`)
	denied("write_file abs/deeper/new (abs -> /protected)", err, "protected/deeper/new")
	_, err = call("edit_file", `{"file_path": "flink", "old_string": "secret", "new_string": "gone"}`)
	denied("edit_file flink (flink -> protected/f)", err, "protected/f")
	_, err = call("rm", `{"path": "p/f"}`)
	denied("rm p/f", err, "protected/f")
	_, err = call("write_file", `{"file_path": "protected/new", "content": "x"}`)
	denied("write_file protected/new", err, "protected/new")

	fs := s.FS()
	if r, err := fs.Read(ctx, backend.ReadRequest{Path: "protected/f"}); err != nil || strings.Join(r.Lines, "\n") != "secret" {
		t.Errorf("protected/f after the denied calls: %+v, %v", r, err)
	}
	for _, p := range []string{"protected/new", "protected/deeper"} {
		if _, err := fs.Stat(ctx, p); !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("%s exists after a denied write: %v", p, err)
		}
	}

	// What the policy does not protect still works: a plain write, and
	// removing the symlink p itself (rm does not follow it).
	if r, err := call("write_file", `{"file_path": "free/new", "content": "x"}`); err != nil || !r.OK {
		t.Fatalf("write_file free/new: %+v, %v", r, err)
	}
	if r, err := call("rm", `{"path": "p"}`); err != nil || !r.OK {
		t.Fatalf("rm p (the symlink): %+v, %v", r, err)
	}
	if _, err := fs.Stat(ctx, "protected/f"); err != nil {
		t.Errorf("rm of the symlink p removed its target: %v", err)
	}
}
