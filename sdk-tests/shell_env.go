package sdktests

import (
	"errors"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

func checkEnvExtend(t *T, w *ws) {
	snap := envSnapshot(t, w)
	path, _ := snap.Get("PATH")
	for _, mode := range []backend.EnvMode{"", backend.EnvExtend} {
		res := w.exec(backend.ExecRequest{Shell: `printf '%s|%s' "$WAI_SDK_A" "$PATH"`, Cwd: w.p(""),
			Env: map[string]string{"WAI_SDK_A": "alpha beta"}, EnvMode: mode})
		if want := "alpha beta|" + path; res.Stdout != want {
			t.Errorf("env mode %q: got %q, want the given variable and the workspace PATH: %q", mode, res.Stdout, want)
		}
	}
	res := w.exec(backend.ExecRequest{Shell: `printf '%s' "$PATH"`, Cwd: w.p(""),
		Env: map[string]string{"PATH": "/usr/bin:/bin"}, EnvMode: backend.EnvExtend})
	if res.Stdout != "/usr/bin:/bin" {
		t.Errorf("extend with PATH=/usr/bin:/bin: command saw PATH %q", res.Stdout)
	}
	name, value, ok := otherVar(snap)
	if !ok {
		t.Logf("the environment holds only PATH; cannot check that extend keeps the others")
		return
	}
	res = w.exec(backend.ExecRequest{Shell: `printf '%s' "$` + name + `"`, Cwd: w.p(""),
		Env: map[string]string{"WAI_SDK_A": "x"}, EnvMode: backend.EnvExtend})
	if res.Stdout != value {
		t.Errorf("extend dropped %s: command saw %q, want %q from the snapshot", name, res.Stdout, value)
	}
}

func checkEnvReplace(t *T, w *ws) {
	snap := envSnapshot(t, w)
	path, _ := snap.Get("PATH")
	res := w.exec(backend.ExecRequest{Argv: []string{"env"}, Cwd: w.p(""),
		Env: map[string]string{"WAI_SDK_R": "r v"}, EnvMode: backend.EnvReplace})
	got := parseEnv(res.Stdout)
	if got["WAI_SDK_R"] != "r v" {
		t.Errorf("replace: WAI_SDK_R = %q, want %q", got["WAI_SDK_R"], "r v")
	}
	if got["PATH"] != path {
		t.Errorf("replace: PATH = %q, want the workspace's %q", got["PATH"], path)
	}
	for k := range got {
		if k != "PATH" && k != "WAI_SDK_R" && k != "PWD" {
			t.Errorf("replace: command saw %s=%q; replace keeps only PATH and the given variables", k, got[k])
		}
	}
	res = w.exec(backend.ExecRequest{Argv: []string{"env"}, Cwd: w.p(""),
		Env: map[string]string{"PATH": "/usr/bin:/bin"}, EnvMode: backend.EnvReplace})
	if p := parseEnv(res.Stdout)["PATH"]; p != "/usr/bin:/bin" {
		t.Errorf("replace with PATH given: command saw PATH %q, want the given /usr/bin:/bin", p)
	}
}

func checkCwdDefault(t *T, w *ws) {
	res := w.exec(backend.ExecRequest{Shell: "test -d " + w.p("") + " && echo root"})
	if res.Stdout != "root\n" {
		t.Errorf("with no cwd, the check's directory %s is not visible from the command's directory: stdout %q stderr %q",
			w.p(""), res.Stdout, res.Stderr)
	}
}

func checkCwdSubdir(t *T, w *ws) {
	w.write("sub/deeper/f.txt", "content\n")
	want := "/" + w.p("sub/deeper")
	for _, cwd := range []string{w.p("sub/deeper"), "/" + w.p("sub/deeper"), "./" + w.p("sub/deeper") + "/", w.p("sub/../sub/deeper")} {
		res := w.exec(backend.ExecRequest{Shell: "pwd -P; cat f.txt", Cwd: cwd})
		lines := strings.Split(res.Stdout, "\n")
		if !strings.HasSuffix(lines[0], want) {
			t.Errorf("cwd %q: pwd -P = %q, want a path ending in %q", cwd, lines[0], want)
		}
		if len(lines) < 2 || lines[1] != "content" {
			t.Errorf("cwd %q: cat f.txt gave %q (stderr %q)", cwd, res.Stdout, res.Stderr)
		}
		if !strings.HasSuffix(res.Cwd, want) {
			t.Errorf("cwd %q: result cwd %q, want it to end in %q", cwd, res.Cwd, want)
		}
	}
}

func checkCwdMissing(t *T, w *ws) {
	_, err := w.execErr(backend.ExecRequest{Argv: []string{"true"}, Cwd: w.p("no/such/dir")})
	wantKind(t, "cwd that does not exist", err, backend.ErrInvalid)
}

func checkCwdFile(t *T, w *ws) {
	w.write("file.txt", "x")
	_, err := w.execErr(backend.ExecRequest{Argv: []string{"true"}, Cwd: w.p("file.txt")})
	wantKind(t, "cwd that is a file", err, backend.ErrInvalid)
}

// insideRoot runs pwd -P in cwd and fails unless the request was refused
// as invalid or ran inside the workspace root.
func insideRoot(t *T, w *ws, root, cwd string) {
	t.Helper()
	res, err := w.execErr(backend.ExecRequest{Argv: []string{"pwd", "-P"}, Cwd: cwd})
	if err != nil {
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("cwd %q: error %q of kind %v, want ErrInvalid or a run inside the root", cwd, err, backend.KindOf(err))
		}
		return
	}
	if res.ExitCode != 0 {
		t.Errorf("cwd %q: pwd -P failed (exit %d, stderr %q); want ErrInvalid for a cwd that cannot be used, or a run inside the root",
			cwd, res.ExitCode, res.Stderr)
		return
	}
	pwd := strings.TrimSpace(res.Stdout)
	if pwd != root && !strings.HasPrefix(pwd, root+"/") {
		t.Errorf("cwd %q ESCAPED the workspace: the command ran in %q, outside the root %q", cwd, pwd, root)
	}
}

func checkCwdDotDot(t *T, w *ws) {
	root := w.rootPwd()
	for _, cwd := range []string{"..", "/..", "../..", "../../../../../../..", w.p("../../.."), "/../etc", "../tmp"} {
		insideRoot(t, w, root, cwd)
	}
}

func checkCwdSymlinkOut(t *T, w *ws) {
	root := w.rootPwd()
	links := map[string]string{
		"out-abs":  "/",
		"out-rel":  "../../../../../../../..",
		"out-etc":  "/etc",
		"out-tmp":  "/tmp",
		"out-up":   "..",
		"out-deep": "../../../../../../../../etc",
	}
	for name, target := range links {
		w.symlink(target, name)
	}
	for name := range links {
		insideRoot(t, w, root, w.p(name))
	}
}

func checkScriptSh(t *T, w *ws) {
	script := "# a comment\n" +
		"x='it'\"'\"'s \"quoted\"'\n" +
		"printf '%s %s\\n' \"$x\" $((6*7))\n" +
		"echo second line >&2\n" +
		"exit 3\n"
	for _, interp := range []string{"", "/bin/sh"} {
		res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: script, Interpreter: interp, Cwd: w.p("")})
		if err != nil {
			t.Fatalf("ExecuteScript with interpreter %q: %v", interp, err)
		}
		if res.Stdout != "it's \"quoted\" 42\n" || res.Stderr != "second line\n" || res.ExitCode != 3 {
			t.Errorf("script with interpreter %q: exit %d stdout %q stderr %q, want 3, %q, %q",
				interp, res.ExitCode, res.Stdout, res.Stderr, "it's \"quoted\" 42\n", "second line\n")
		}
	}
}

func checkScriptCwdEnv(t *T, w *ws) {
	w.write("sub/f.txt", "x")
	res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{
		Script: "pwd -P\nprintf '%s\\n' \"$WAI_SDK_S\"\n", Cwd: w.p("sub"),
		Env: map[string]string{"WAI_SDK_S": "s-val"}})
	if err != nil {
		t.Fatalf("ExecuteScript: %v", err)
	}
	lines := strings.Split(res.Stdout, "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[0], "/"+w.p("sub")) || lines[1] != "s-val" {
		t.Errorf("script in cwd %s with env: stdout %q stderr %q", w.p("sub"), res.Stdout, res.Stderr)
	}
	name, _, ok := otherVar(envSnapshot(t, w))
	if !ok {
		return
	}
	res, err = w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{
		Script: "printf '%s|%s' \"$WAI_SDK_S\" \"${" + name + "-unset}\"\n", Cwd: w.p("sub"),
		Env: map[string]string{"WAI_SDK_S": "s"}, EnvMode: backend.EnvReplace})
	if err != nil {
		t.Fatalf("ExecuteScript (replace): %v", err)
	}
	if res.Stdout != "s|unset" {
		t.Errorf("script with env mode replace: got %q, want %q (%s dropped)", res.Stdout, "s|unset", name)
	}
}

func checkScriptLeavesNoFile(t *T, w *ws) {
	w.write("sub/keep.txt", "x")
	before := listNames(t, w, ".")
	beforeSub := listNames(t, w, "sub")
	for _, cwd := range []string{"", "sub"} {
		res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: "echo hi\n", Cwd: cwd})
		if err != nil || res.Stdout != "hi\n" {
			t.Fatalf("ExecuteScript in %q: %v (stdout %q)", cwd, err, res.Stdout)
		}
	}
	if after := listNames(t, w, "."); !slices.Equal(before, after) {
		t.Errorf("ExecuteScript left files at the root: before %q, after %q", before, after)
	}
	if after := listNames(t, w, "sub"); !slices.Equal(beforeSub, after) {
		t.Errorf("ExecuteScript left files in its cwd: before %q, after %q", beforeSub, after)
	}
}

func checkScriptPython(t *T, w *ws) {
	which, err := w.Shell().Which(t.Context(), "python3")
	if err != nil || !which.Found() {
		t.Fatalf("Which(python3) = %+v, %v; the backend declares Caps.Python", which, err)
	}
	script := "import sys\nprint(sum(range(10)))\nprint('err', file=sys.stderr)\nsys.exit(5)\n"
	res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: script, Interpreter: which.Path, Cwd: w.p("")})
	if err != nil {
		t.Fatalf("ExecuteScript with %s: %v", which.Path, err)
	}
	if res.Stdout != "45\n" || res.Stderr != "err\n" || res.ExitCode != 5 {
		t.Errorf("python script: exit %d stdout %q stderr %q, want 5, %q, %q", res.ExitCode, res.Stdout, res.Stderr, "45\n", "err\n")
	}
}

func checkScriptMissingInterpreter(t *T, w *ws) {
	res, err := w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: "echo hi\n", Interpreter: "/nonexistent/interpreter", Cwd: w.p("")})
	switch {
	case err != nil:
		wantKind(t, "missing interpreter", err, backend.ErrInvalid)
	case res.ExitCode == 0:
		t.Errorf("missing interpreter: exit 0 (stdout %q), want a non-zero exit or ErrInvalid", res.Stdout)
	}
}

func checkWhichFound(t *T, w *ws) {
	res, err := w.Shell().Which(t.Context(), "sh")
	if err != nil {
		t.Fatalf("Which(sh): %v", err)
	}
	if !res.Found() || !strings.HasPrefix(res.Path, "/") || res.Command != "sh" {
		t.Fatalf("Which(sh) = %+v, want found with an absolute path", res)
	}
	run := w.exec(backend.ExecRequest{Argv: []string{res.Path, "-c", "exit 7"}, Cwd: w.p("")})
	if run.ExitCode != 7 {
		t.Errorf("running the path Which gave (%s): exit %d, want 7", res.Path, run.ExitCode)
	}
}

func checkWhichMissing(t *T, w *ws) {
	res, err := w.Shell().Which(t.Context(), "nonexistent_command_12345")
	if err != nil {
		t.Fatalf("Which(nonexistent): error %v, want a not-found result", err)
	}
	if res.Found() || res.Command != "nonexistent_command_12345" {
		t.Errorf("Which(nonexistent) = %+v, want not found, command echoed", res)
	}
}

func checkWhichEmpty(t *T, w *ws) {
	_, err := w.Shell().Which(t.Context(), "")
	wantKind(t, "Which(\"\")", err, backend.ErrInvalid)
}

func checkWhichNoInjection(t *T, w *ws) {
	marker := w.p("which-marker")
	for _, cmd := range []string{"sh; touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`", "sh\ntouch " + marker} {
		res, err := w.Shell().Which(t.Context(), cmd)
		if err == nil && res.Found() {
			t.Errorf("Which(%q) = %+v, want not found or ErrInvalid", cmd, res)
		}
		if err != nil && !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("Which(%q): error of kind %v (%v), want ErrInvalid or not found", cmd, backend.KindOf(err), err)
		}
	}
	if w.exists("which-marker") {
		t.Errorf("Which ran its argument through a shell: %s was created", marker)
	}
}

func checkEnvSnapshot(t *T, w *ws) {
	snap := envSnapshot(t, w)
	if p, ok := snap.Get("PATH"); !ok || p == "" {
		t.Errorf("env snapshot has no PATH: %v", snap.Vars)
	}
	for i := 1; i < len(snap.Vars); i++ {
		if snap.Vars[i-1].Name >= snap.Vars[i].Name {
			t.Errorf("env snapshot not sorted by unique name: %q before %q", snap.Vars[i-1].Name, snap.Vars[i].Name)
		}
	}
	if !strings.HasPrefix(snap.Cwd, "/") {
		t.Errorf("env snapshot cwd %q, want an absolute path", snap.Cwd)
	}
	if snap.Shell == "" {
		t.Errorf("env snapshot names no shell")
	}
}

func checkEnvSnapshotMatches(t *T, w *ws) {
	snap := envSnapshot(t, w)
	path, _ := snap.Get("PATH")
	if res := w.exec(backend.ExecRequest{Shell: `printf '%s' "$PATH"`}); res.Stdout != path {
		t.Errorf("commands see PATH %q, the snapshot says %q", res.Stdout, path)
	}
	res := w.exec(backend.ExecRequest{Argv: []string{"sh", "-c", `cd -- "$1" && pwd -P`, "sh", snap.Cwd}})
	if got, root := strings.TrimSpace(res.Stdout), w.rootPwd(); got != root {
		t.Errorf("snapshot cwd %q is %q for commands, want the root %q", snap.Cwd, got, root)
	}
	if res := w.exec(backend.ExecRequest{Argv: []string{snap.Shell, "-c", "exit 4"}}); res.ExitCode != 4 {
		t.Errorf("snapshot shell %q -c 'exit 4': exit %d, stderr %q", snap.Shell, res.ExitCode, res.Stderr)
	}
}

// envSnapshot returns the workspace's environment snapshot.
func envSnapshot(t *T, w *ws) backend.EnvSnapshot {
	t.Helper()
	snap, err := w.Shell().Env(t.Context())
	if err != nil {
		t.Fatalf("Env: %v", err)
	}
	return snap
}

// otherVar picks a variable of the snapshot that is neither PATH nor one
// a shell sets by itself, with a value a shell prints back verbatim.
func otherVar(snap backend.EnvSnapshot) (name, value string, ok bool) {
	for _, v := range snap.Vars {
		switch v.Name {
		case "PATH", "PWD", "OLDPWD", "SHLVL", "_":
			continue
		}
		if backend.ValidEnvName(v.Name) && v.Value != "" && !strings.ContainsAny(v.Value, "\n\x00") {
			return v.Name, v.Value, true
		}
	}
	return "", "", false
}

// parseEnv parses the output of env(1).
func parseEnv(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}
