//go:build linux && (amd64 || arm64)

package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

func TestBaseEnv(t *testing.T) {
	w := openWS(t, `{"env": {"EXTRA": "yes", "LANG": "C"}}`)
	snap, err := w.Shell().Env(bg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PATH": defaultPath, "HOME": w.Root(), "LANG": "C", "TMPDIR": os.TempDir(), "EXTRA": "yes"}
	if got := snap.Map(); !mapsEqual(got, want) || snap.Cwd != w.Root() || snap.Shell != "/bin/sh" {
		t.Fatalf("snapshot %+v, want vars %v in %s", snap, want, w.Root())
	}
	// Commands see exactly that environment (env itself adds nothing).
	res := execute(t, w, backend.ExecRequest{Argv: []string{"env"}})
	got := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	got = slices.DeleteFunc(got, func(kv string) bool { return strings.HasPrefix(kv, markerVar+"=") }) // per command, see sweep.go
	slices.Sort(got)
	var exp []string
	for _, v := range snap.Vars {
		exp = append(exp, v.Name+"="+v.Value)
	}
	if !slices.Equal(got, exp) {
		t.Fatalf("env of a command: %q, want %q", got, exp)
	}
	res = execute(t, w, backend.ExecRequest{Argv: []string{"env"}, EnvMode: backend.EnvReplace, Env: map[string]string{"ONLY": "me"}})
	if got := strings.Fields(res.Stdout); !slices.Equal(got, []string{"PATH=" + defaultPath, "ONLY=me"}) && !slices.Equal(got, []string{"ONLY=me", "PATH=" + defaultPath}) {
		t.Fatalf("replace mode: %q", got)
	}
	res = execute(t, w, backend.ExecRequest{Shell: `printf %s "$EXTRA"`, Env: map[string]string{"EXTRA": "over"}})
	if res.Stdout != "over" {
		t.Fatalf("a request variable overrides the base: %q", res.Stdout)
	}
}

func TestInheritEnv(t *testing.T) {
	t.Setenv("WAI_HOST_INHERITED", "from the host")
	w := openWS(t, `{"inherit_env": true, "env": {"WAI_ADDED": "1"}}`)
	res := execute(t, w, backend.ExecRequest{Shell: `printf '%s|%s|%s' "$WAI_HOST_INHERITED" "$WAI_ADDED" "$HOME"`})
	if want := "from the host|1|" + os.Getenv("HOME"); res.Stdout != want {
		t.Fatalf("inherited env: %q, want %q", res.Stdout, want)
	}
	w = openWS(t, "")
	if res := execute(t, w, backend.ExecRequest{Shell: `printf %s "${WAI_HOST_INHERITED-unset}"`}); res.Stdout != "unset" {
		t.Fatalf("the host env leaked without inherit_env: %q", res.Stdout)
	}
}

func TestExecResults(t *testing.T) {
	w := openWS(t, "")
	if err := os.WriteFile(filepath.Join(w.Root(), "noexec.sh"), []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.Root(), "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Root(), "bin/tool"), []byte("#!/bin/sh\necho tool \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req       backend.ExecRequest
		code, sig int
		stdout    string
		stderr    string
	}{
		{backend.ExecRequest{Argv: []string{"no-such-command-xyz"}}, 127, 0, "", "wai: no-such-command-xyz: command not found\n"},
		{backend.ExecRequest{Argv: []string{"./noexec.sh"}}, 126, 0, "", "wai: ./noexec.sh: cannot execute: permission denied\n"},
		{backend.ExecRequest{Argv: []string{"bin"}, Env: map[string]string{"PATH": "."}}, 126, 0, "", "wai: bin: cannot execute: permission denied\n"},
		{backend.ExecRequest{Argv: []string{"bin/tool", "x"}}, 0, 0, "tool x\n", ""},
		{backend.ExecRequest{Argv: []string{"tool", "y"}, Env: map[string]string{"PATH": "bin:/usr/bin:/bin"}}, 0, 0, "tool y\n", ""},
		{backend.ExecRequest{Argv: []string{"/bin/sh", "-c", "kill -TERM $$"}}, 143, 15, "", ""},
		{backend.ExecRequest{Shell: "kill -KILL $$"}, 137, 9, "", ""},
		{backend.ExecRequest{Shell: "echo out; echo err >&2; exit 5"}, 5, 0, "out\n", "err\n"},
		{backend.ExecRequest{Shell: "printf 'a\\377b'"}, 0, 0, "a\uFFFDb", ""},
		{backend.ExecRequest{Argv: []string{"cat"}, Stdin: "in\n"}, 0, 0, "in\n", ""},
		{backend.ExecRequest{Shell: "echo hidden; echo hidden >&2", DiscardOutput: true}, 0, 0, "", ""},
	} {
		res := execute(t, w, c.req)
		if res.ExitCode != c.code || res.Signal != c.sig || res.Stdout != c.stdout || res.Stderr != c.stderr ||
			res.TimedOut || res.Backend != "host" || res.Sandboxed || res.Cwd != w.Root() {
			t.Errorf("%q: %+v; want exit %d signal %d stdout %q stderr %q", c.req.Command(), res, c.code, c.sig, c.stdout, c.stderr)
		}
	}
	// The result names what really ran: the configured shell.
	w2 := openWS(t, `{"shell": "/bin/bash"}`)
	res := execute(t, w2, backend.ExecRequest{Shell: `echo "$BASH_VERSION" | cut -c1`})
	if !slices.Equal(res.Command, []string{"/bin/bash", "-c", `echo "$BASH_VERSION" | cut -c1`}) || strings.TrimSpace(res.Stdout) == "" {
		t.Fatalf("shell /bin/bash: %+v", res)
	}
}

// A command that removes the workspace root itself leaves a workspace
// that says so, rather than "command not found".
func TestRootRemoved(t *testing.T) {
	w := openWS(t, "")
	execute(t, w, backend.ExecRequest{Shell: `rm -rf "$HOME"`})
	_, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
	backendtest.WantKind(t, err, backend.ErrUnavailable, "is gone")
}

func TestCwd(t *testing.T) {
	w := openWS(t, "")
	if err := os.MkdirAll(filepath.Join(w.Root(), "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/a/b", filepath.Join(w.Root(), "ab")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(w.Root(), "etc")); err != nil {
		t.Fatal(err)
	}
	for cwd, want := range map[string]string{"": w.Root(), "a": w.Root() + "/a", "/a/b": w.Root() + "/a/b", "ab": w.Root() + "/a/b", "a/b/..": w.Root() + "/a"} {
		res := execute(t, w, backend.ExecRequest{Argv: []string{"pwd", "-P"}, Cwd: cwd})
		if res.Stdout != want+"\n" || res.Cwd != want {
			t.Errorf("cwd %q: ran in %q (result %q), want %q", cwd, res.Stdout, res.Cwd, want)
		}
	}
	for cwd, msg := range map[string]string{
		"..": "climbs above", "a/../..": "climbs above", "/../tmp": "climbs above",
		"missing": "no such directory", "etc": "symbolic links", "a/b/../../../x": "climbs above",
	} {
		_, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}, Cwd: cwd})
		backendtest.WantKind(t, err, backend.ErrInvalid, msg)
		_, err = w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "true", Cwd: cwd})
		backendtest.WantKind(t, err, backend.ErrInvalid, msg)
	}
}

func TestScripts(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the backend puts script files
	w := openWS(t, "")
	for _, c := range []struct {
		interp, script, stdout string
	}{
		{"", "echo $0 | grep -c wai-script; echo two", "1\ntwo\n"},
		{"/bin/sh -e", "false\necho unreachable", ""},
		{"sh", "printf '%s' \"$(pwd -P)\"", w.Root()},
		{"python3 -S", "import sys; print(sys.argv[0].endswith('/script'))", "True\n"},
	} {
		if c.interp == "python3 -S" {
			if _, err := lookPath("python3", defaultPath, "/"); err != nil {
				continue
			}
		}
		res, err := w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: c.script, Interpreter: c.interp})
		if err != nil {
			t.Fatalf("%q: %v", c.interp, err)
		}
		if res.Stdout != c.stdout {
			t.Errorf("interpreter %q: %+v, want stdout %q", c.interp, res, c.stdout)
		}
	}
	res, err := w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "x", Interpreter: "no-such-interpreter"})
	if err != nil || res.ExitCode != 127 {
		t.Fatalf("missing interpreter: %+v, %v", res, err)
	}
	_, err = w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "x", Interpreter: "  "})
	backendtest.WantKind(t, err, backend.ErrInvalid, "blank")
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("script files left in the temporary directory: %v", entries)
	}
}

func TestWhich(t *testing.T) {
	w := openWS(t, "")
	if err := os.WriteFile(filepath.Join(w.Root(), "local"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"sh": true, "/bin/sh": true, "./local": true, "local": false, "no-such-cmd": false,
		"sh; touch x": false, "../sh": false, "/etc/passwd": false, "/etc": false,
	} {
		res, err := w.Shell().Which(bg, name)
		if err != nil || res.Found() != want || res.Command != name || res.Found() && !filepath.IsAbs(res.Path) {
			t.Errorf("Which(%q) = %+v, %v; want found %v", name, res, err, want)
		}
	}
	for _, name := range []string{"", "a\x00b", "a\nb"} {
		_, err := w.Shell().Which(bg, name)
		backendtest.WantKind(t, err, backend.ErrInvalid, "")
	}
	if _, err := os.Stat(filepath.Join(w.Root(), "x")); err == nil {
		t.Fatal("Which ran its argument")
	}
}

func TestInfo(t *testing.T) {
	l := backend.DefaultLimits()
	l.DefaultTimeout = 9e9
	w := openWSLimits(t, "", l)
	if info, _ := w.Shell().Info(t.Context()); info != (backend.Info{Backend: "host", Sandboxed: false, NetworkEnabled: true, DefaultTimeout: 9e9}) {
		t.Fatalf("Info() = %+v", info)
	}
}

// Limits are checked before anything runs, in the backend itself.
func TestLimitsCheckedFirst(t *testing.T) {
	l := backend.DefaultLimits()
	l.MaxCommandBytes = 20
	w := openWSLimits(t, "", l)
	marker := filepath.Join(w.Root(), "ran")
	_, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"touch", marker}})
	backendtest.WantKind(t, err, backend.ErrInvalid, "over the limit of 20")
	_, err = w.Shell().ExecuteScript(bg, backend.ScriptRequest{Script: "touch " + marker, Cwd: "a\x00"})
	backendtest.WantKind(t, err, backend.ErrInvalid, "NUL")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a request over the limits ran")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
