//go:build linux && (amd64 || arm64)

package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

func TestConfigDefaults(t *testing.T) {
	state := t.TempDir()
	b, err := New(backend.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Config()
	if c.Root != filepath.Join(state, "host", "{session}") || c.Shell != "/bin/sh" ||
		time.Duration(c.KillGrace) != 500*time.Millisecond || c.InheritEnv || len(c.Env) != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	// Without a state directory, the user's cache directory holds it.
	t.Setenv("XDG_CACHE_HOME", state)
	b, err = New(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "wai", "host", "{session}"); b.Config().Root != want {
		t.Fatalf("root without a state dir: %s, want %s", b.Config().Root, want)
	}
}

func TestConfigDecoding(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		json  string
		check func(Config) bool
	}{
		{`{"kill_grace": "750ms"}`, func(c Config) bool { return time.Duration(c.KillGrace) == 750*time.Millisecond }},
		{`{"kill_grace": 0.25}`, func(c Config) bool { return time.Duration(c.KillGrace) == 250*time.Millisecond }},
		{`{"kill_grace": 2}`, func(c Config) bool { return time.Duration(c.KillGrace) == 2*time.Second }},
		{`{"root": "rel/{user}"}`, func(c Config) bool {
			wd, _ := os.Getwd()
			return c.Root == filepath.Join(wd, "rel", "{user}")
		}},
		{`{"root": "` + dir + `/{user}/{session}", "shell": "/bin/sh", "inherit_env": true, "env": {"A": "b"}}`, func(c Config) bool {
			return c.Root == dir+"/{user}/{session}" && c.InheritEnv && c.Env["A"] == "b"
		}},
		{`null`, func(c Config) bool { return c.Shell == "/bin/sh" }},
	} {
		b, err := New(backend.Options{StateDir: dir, Config: json.RawMessage(c.json)})
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if !c.check(b.Config()) {
			t.Errorf("%s decoded to %+v", c.json, b.Config())
		}
	}
	for _, c := range []struct{ json, msg string }{
		{`{"rooot": "/x"}`, "unknown field"},
		{`{"root": "/x/{sesion}"}`, "unknown placeholder {sesion}"},
		{`{"shell": "sh"}`, "absolute path"},
		{`{"shell": "/nonexistent/sh"}`, "not an executable"},
		{`{"shell": "/etc/passwd"}`, "not an executable"},
		{`{"kill_grace": "soon"}`, "500ms"},
		{`{"kill_grace": "-1s"}`, "must lie within"},
		{`{"kill_grace": "2m"}`, "must lie within"},
		{`{"kill_grace": true}`, "number of seconds"},
		{`{"env": {"1X": "y"}}`, "not of the form"},
		{`{"env": {"X": "é"}}`, "ASCII"},
		{`[1]`, "backend host"},
	} {
		_, err := New(backend.Options{StateDir: dir, Config: json.RawMessage(c.json)})
		backendtest.WantKind(t, err, backend.ErrInvalid, c.msg)
	}
	bad := backend.DefaultLimits()
	bad.MaxOutputBytes = 1
	_, err := New(backend.Options{Limits: bad})
	backendtest.WantKind(t, err, backend.ErrInvalid, "max_output_bytes")
}

// The backend registers itself, and backend.Open reaches it by name.
func TestRegistered(t *testing.T) {
	b, err := backend.Open(bg, "host", backend.Options{StateDir: t.TempDir(), Config: json.RawMessage(`{"kill_grace": "100ms"}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(bg)
	if time.Duration(b.(*Backend).Config().KillGrace) != 100*time.Millisecond {
		t.Fatal("config not passed through")
	}
	_, err = backend.Open(bg, "host", backend.Options{Config: json.RawMessage(`{"x": 1}`)})
	backendtest.WantKind(t, err, backend.ErrInvalid, "unknown field")
}

func TestRoots(t *testing.T) {
	base := t.TempDir()
	b := newBackend(t, `{"root": "`+base+`/users/{user}/{session}"}`, backend.Limits{})
	w, err := b.Open(bg, backend.WorkspaceSpec{Session: "s1", User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "users", "alice", "s1")
	fi, err := os.Stat(root)
	if err != nil || fi.Mode() != os.ModeDir|0o700 {
		t.Fatalf("root %s: %v, %v", root, fi.Mode(), err)
	}
	if got := w.(*Workspace).Root(); got != root {
		t.Fatalf("Root() = %s, want %s", got, root)
	}
	// The shell and the filesystem see the same directory.
	if _, err := w.FS().Write(bg, backend.WriteRequest{Path: "f.txt", Content: "from fs"}); err != nil {
		t.Fatal(err)
	}
	res := execute(t, w.(*Workspace), backend.ExecRequest{Shell: "cat f.txt; pwd -P; echo from shell > g.txt"})
	if res.Stdout != "from fs"+root+"\n" || res.Cwd != root {
		t.Fatalf("shell in %s: %+v", root, res)
	}
	if r, err := w.FS().Read(bg, backend.ReadRequest{Path: "g.txt"}); err != nil || r.Lines[0] != "from shell" {
		t.Fatalf("fs reading what the shell wrote: %+v, %v", r, err)
	}
	if err := w.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("a per-session root survived Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "users", "alice")); err != nil {
		t.Fatalf("the per-user parent went with the session: %v", err)
	}
	// A session open for one user cannot be reopened for another.
	w, err = b.Open(bg, backend.WorkspaceSpec{Session: "s9", User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Open(bg, backend.WorkspaceSpec{Session: "s9", User: "bob"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "already open")
	if err := w.Close(bg); err != nil {
		t.Fatal(err)
	}
	_, err = b.Open(bg, backend.WorkspaceSpec{Session: "s2"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "open the workspace with a user name")
	_, err = b.Open(bg, backend.WorkspaceSpec{Session: "../x", User: "alice"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "session name")
	_, err = b.Open(bg, backend.WorkspaceSpec{Session: "s3", User: ".."})
	backendtest.WantKind(t, err, backend.ErrInvalid, "user name")

	// Roots without {session} are shared and never removed.
	for _, tmpl := range []string{base + "/shared", base + "/per-user/{user}"} {
		b := newBackend(t, `{"root": "`+tmpl+`"}`, backend.Limits{})
		var roots []string
		for _, s := range []string{"a", "b"} {
			user := "bob"
			if !strings.Contains(tmpl, "{user}") {
				user = "" // users may not share a root (TestUsersNeedTheirOwnRoot)
			}
			w, err := b.Open(bg, backend.WorkspaceSpec{Session: s, User: user})
			if err != nil {
				t.Fatal(err)
			}
			roots = append(roots, w.(*Workspace).Root())
			if _, err := w.FS().Write(bg, backend.WriteRequest{Path: s, Content: s}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(bg); err != nil {
				t.Fatal(err)
			}
		}
		if roots[0] != roots[1] {
			t.Fatalf("%s: sessions got different roots %v", tmpl, roots)
		}
		for _, s := range []string{"a", "b"} {
			if _, err := os.Stat(filepath.Join(roots[0], s)); err != nil {
				t.Fatalf("%s: a shared root lost %s on Close: %v", tmpl, s, err)
			}
		}
	}
}

func TestKeepAndReattach(t *testing.T) {
	b := newBackend(t, "", backend.Limits{})
	w1, err := b.Open(bg, backend.WorkspaceSpec{Session: "k", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	root := w1.(*Workspace).Root()
	if _, err := w1.FS().Write(bg, backend.WriteRequest{Path: "kept.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	// A second Open of an open session is the same workspace.
	w2, err := b.Open(bg, backend.WorkspaceSpec{Session: "k"})
	if err != nil || w2 != w1 {
		t.Fatalf("reopen: %v, same %v", err, w2 == w1)
	}
	if err := w1.Close(bg); err != nil {
		t.Fatal(err)
	}
	if res := execute(t, w2.(*Workspace), backend.ExecRequest{Argv: []string{"cat", "kept.txt"}}); res.Stdout != "x" {
		t.Fatalf("the workspace stopped working after one of two Closes: %+v", res)
	}
	if err := w2.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(bg); err != nil {
		t.Fatalf("a third Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "kept.txt")); err != nil {
		t.Fatalf("Keep: the files are gone: %v", err)
	}
	// A later Open without Keep finds the files, and its Close removes them.
	w3, err := b.Open(bg, backend.WorkspaceSpec{Session: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w3.FS().Read(bg, backend.ReadRequest{Path: "kept.txt"}); err != nil || r.Lines[0] != "x" {
		t.Fatalf("reattach: %+v, %v", r, err)
	}
	// Even a directory a command made unwritable goes.
	execute(t, w3.(*Workspace), backend.ExecRequest{Shell: "mkdir -p ro/sub && touch ro/sub/f && chmod 0500 ro/sub ro"})
	if err := w3.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("root survived the last Close: %v", err)
	}
}

func TestClosed(t *testing.T) {
	b := newBackend(t, "", backend.Limits{})
	w, err := b.Open(bg, backend.WorkspaceSpec{Session: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(bg); err != nil {
		t.Fatal(err)
	}
	_, err = w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "closed")
	_, err = w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "true"})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "closed")
	_, err = w.FS().Stat(bg, ".")
	backendtest.WantKind(t, err, backend.ErrUnavailable, "closed")
	// The backend's Close closes what is still open, and refuses more.
	w2, err := b.Open(bg, backend.WorkspaceSpec{Session: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w2.(*Workspace).Root()); !os.IsNotExist(err) {
		t.Fatalf("backend Close left a session root: %v", err)
	}
	_, err = b.Open(bg, backend.WorkspaceSpec{Session: "e"})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "closed")
}

// TestExampleConfigShowsEveryKey: wai.example.toml's commented
// [backends.host] block names every key of Config with its default.
func TestExampleConfigShowsEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "wai.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// The block's values are TOML scalars JSON reads the same ("…",
	// false, {}), so the block becomes the backend's raw JSON config.
	// The first commented [backends.host] block lists every key; the later
	// ones are examples of nested values.
	fields := map[string]json.RawMessage{}
	for _, line := range backendtest.ExampleBlock(data, "host") {
		kv, _, _ := strings.Cut(line, "#")
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("wai.example.toml: %q in the [backends.host] block is not key = value", line)
		}
		fields[strings.TrimSpace(k)] = json.RawMessage(strings.TrimSpace(v))
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		t.Fatalf("wai.example.toml's [backends.host] values are not plain scalars: %v", err)
	}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		if key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); fields[key] == nil {
			t.Errorf("wai.example.toml's [backends.host] block lacks %s", key)
		}
	}
	state := t.TempDir()
	shown, err := parseConfig(backend.Options{StateDir: state, Config: raw})
	if err != nil {
		t.Fatalf("wai.example.toml's [backends.host] block %s: %v", raw, err)
	}
	defaults, err := parseConfig(backend.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if len(shown.Env) == 0 && defaults.Env == nil {
		shown.Env = nil // env = {} and no env mean the same
	}
	if !reflect.DeepEqual(shown, defaults) {
		t.Errorf("wai.example.toml's [backends.host] block gives %+v, but the defaults are %+v", shown, defaults)
	}
}
