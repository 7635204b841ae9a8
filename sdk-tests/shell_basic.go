package sdktests

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

func checkEcho(t *T, w *ws) {
	req := backend.ExecRequest{Argv: []string{"echo", "hello"}, Cwd: w.p("")}
	res := w.exec(req)
	if res.ExitCode != 0 || !res.Success() {
		t.Errorf("echo hello: exit %d (success %v), want 0", res.ExitCode, res.Success())
	}
	if res.Stdout != "hello\n" || res.Stderr != "" {
		t.Errorf("echo hello: stdout %q stderr %q, want %q and nothing", res.Stdout, res.Stderr, "hello\n")
	}
	if !slices.Equal(res.Command, req.Command()) {
		t.Errorf("result command %q, want the request's %q", res.Command, req.Command())
	}
	if !strings.HasPrefix(res.Cwd, "/") {
		t.Errorf("result cwd %q, want the absolute directory the command ran in", res.Cwd)
	}
	if res.TimedOut || res.Truncated || res.Signal != 0 {
		t.Errorf("echo hello: timed_out %v truncated %v signal %d, want none", res.TimedOut, res.Truncated, res.Signal)
	}
	if res.Duration <= 0 || res.Duration > 10*time.Second {
		t.Errorf("echo hello: duration %s, want a positive wall-clock time", res.Duration)
	}
}

func checkNonexistentCommand(t *T, w *ws) {
	res := w.exec(backend.ExecRequest{Argv: []string{"nonexistent_command_12345"}, Cwd: w.p("")})
	if res.ExitCode == 0 || res.Success() {
		t.Errorf("argv nonexistent_command_12345: exit %d, want non-zero (a result, not an error)", res.ExitCode)
	}
	t.Logf("argv nonexistent command: exit %d, stderr %q", res.ExitCode, res.Stderr)
	res = w.exec(backend.ExecRequest{Shell: "nonexistent_command_12345", Cwd: w.p("")})
	if res.ExitCode != 127 {
		t.Errorf("shell nonexistent_command_12345: exit %d, want 127 (command not found)", res.ExitCode)
	}
	if res.Stderr == "" {
		t.Errorf("shell nonexistent_command_12345: empty stderr, want the shell's complaint")
	}
}

func checkArgvNotInterpolated(t *T, w *ws) {
	argv := []string{"echo", "$HOME", "a;echo b", "`id`", "$(id)", "*", "x > y"}
	res := w.exec(backend.ExecRequest{Argv: argv, Cwd: w.p("")})
	if want := strings.Join(argv[1:], " ") + "\n"; res.Stdout != want {
		t.Errorf("argv %q: stdout %q, want the arguments verbatim %q", argv, res.Stdout, want)
	}
	if w.exists("y") {
		t.Errorf("argv %q created file y: the argv was run through a shell", argv)
	}
}

func checkShellString(t *T, w *ws) {
	res := w.sh("X=5; echo $((X*8+2)); echo a; echo b | tr b c; echo '$X'")
	if want := "42\na\nc\n$X\n"; res.Stdout != want || res.ExitCode != 0 {
		t.Errorf("shell string: exit %d stdout %q, want 0 and %q", res.ExitCode, res.Stdout, want)
	}
}

func checkExitCodes(t *T, w *ws) {
	for _, code := range []string{"0", "1", "42", "255"} {
		res := w.sh("exit " + code)
		if got := strconv.Itoa(res.ExitCode); got != code {
			t.Errorf("shell exit %s: exit code %s", code, got)
		}
		if res.Success() != (code == "0") {
			t.Errorf("shell exit %s: Success() = %v", code, res.Success())
		}
		res = w.exec(backend.ExecRequest{Argv: []string{"sh", "-c", "exit " + code}, Cwd: w.p("")})
		if got := strconv.Itoa(res.ExitCode); got != code {
			t.Errorf("argv sh -c 'exit %s': exit code %s", code, got)
		}
		if res.TimedOut || res.Signal != 0 {
			t.Errorf("exit %s: timed_out %v signal %d, want neither", code, res.TimedOut, res.Signal)
		}
	}
}

func checkKilledBySignal(t *T, w *ws) {
	for sig, name := range map[int]string{9: "KILL", 15: "TERM"} {
		res := w.sh("kill -" + name + " $$")
		if res.Signal != sig || res.TimedOut || res.ExitCode == 0 {
			t.Errorf("kill -%s $$: signal %d timed_out %v exit %d, want signal %d, not timed out, non-zero exit",
				name, res.Signal, res.TimedOut, res.ExitCode, sig)
		}
	}
}

func checkStdin(t *T, w *ws) {
	in := "line one\nline two\n"
	res := w.exec(backend.ExecRequest{Argv: []string{"cat"}, Stdin: in, Cwd: w.p("")})
	if res.Stdout != in {
		t.Errorf("cat with stdin %q: stdout %q", in, res.Stdout)
	}
	res = w.exec(backend.ExecRequest{Shell: `read a; read b; echo "$b-$a"`, Stdin: "x\ny\n", Cwd: w.p("")})
	if res.Stdout != "y-x\n" {
		t.Errorf("shell reading stdin: stdout %q, want %q", res.Stdout, "y-x\n")
	}
}

func checkNoStdin(t *T, w *ws) {
	start := time.Now()
	res := w.exec(backend.ExecRequest{Argv: []string{"cat"}, Timeout: 60 * time.Second, Cwd: w.p("")})
	if res.TimedOut || time.Since(start) > killSlack {
		t.Errorf("cat without stdin took %s (timed out %v): stdin must be empty, not left open", time.Since(start), res.TimedOut)
	}
	if res.ExitCode != 0 || res.Stdout != "" {
		t.Errorf("cat without stdin: exit %d stdout %q, want 0 and nothing", res.ExitCode, res.Stdout)
	}
}

func checkLargeStdin(t *T, w *ws) {
	in := strings.Repeat("0123456789abcde\n", w.limits.MaxStdinBytes/16)
	res := w.exec(backend.ExecRequest{Argv: []string{"wc", "-c"}, Stdin: in, Cwd: w.p("")})
	if got := strings.TrimSpace(res.Stdout); got != strconv.Itoa(len(in)) {
		t.Errorf("wc -c of %d bytes of stdin: %q", len(in), got)
	}
	// The command answers with four times its input while the stdin is
	// still being written: the backend must read and write at once.
	res = w.exec(backend.ExecRequest{Argv: []string{"sed", "s/.*/&&&&/"}, Stdin: in, Cwd: w.p(""), Timeout: 20 * time.Second})
	if res.TimedOut || res.ExitCode != 0 || !res.Truncated {
		t.Errorf("sed amplifying %d bytes of stdin: exit %d timed_out %v truncated %v", len(in), res.ExitCode, res.TimedOut, res.Truncated)
	}
}

func checkSharedFiles(t *T, w *ws) {
	w.write("from-fs.txt", "fs-data\n")
	if res := w.sh("cat from-fs.txt"); res.Stdout != "fs-data\n" {
		t.Errorf("a file written through the filesystem reads %q in the shell (stderr %q)", res.Stdout, res.Stderr)
	}
	w.sh("printf 'sh-data\\n' > from-sh.txt")
	if got := w.content("from-sh.txt"); got != "sh-data" {
		t.Errorf("a file written in the shell reads %q through the filesystem", got)
	}
}

func checkInfo(t *T, w *ws) {
	info, err := w.Shell().Info(t.Context())
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.Backend == "" || (w.b.Name != "" && info.Backend != w.b.Name) {
		t.Errorf("Info().Backend = %q, want %q", info.Backend, w.b.Name)
	}
	if info.Sandboxed != w.b.Caps.Sandboxed {
		t.Errorf("Info().Sandboxed = %v, the backend declares %v", info.Sandboxed, w.b.Caps.Sandboxed)
	}
	if info.NetworkEnabled != w.b.Caps.Network {
		t.Errorf("Info().NetworkEnabled = %v, the backend declares %v", info.NetworkEnabled, w.b.Caps.Network)
	}
	if info.DefaultTimeout != w.limits.DefaultTimeout {
		t.Errorf("Info().DefaultTimeout = %s, want the limits' %s", info.DefaultTimeout, w.limits.DefaultTimeout)
	}
}

func checkResultsStamped(t *T, w *ws) {
	info, err := w.Shell().Info(t.Context())
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	res := w.exec(backend.ExecRequest{Argv: []string{"echo", "hi"}, Cwd: w.p("")})
	if res.Backend != info.Backend || res.Sandboxed != info.Sandboxed {
		t.Errorf("Execute result says backend %q sandboxed %v; Info says %q %v", res.Backend, res.Sandboxed, info.Backend, info.Sandboxed)
	}
	res, err = w.Shell().ExecuteScript(t.Context(), backend.ScriptRequest{Script: "echo hi\n", Cwd: w.p("")})
	if err != nil {
		t.Fatalf("ExecuteScript: %v", err)
	}
	if res.Backend != info.Backend || res.Sandboxed != info.Sandboxed {
		t.Errorf("ExecuteScript result says backend %q sandboxed %v; Info says %q %v", res.Backend, res.Sandboxed, info.Backend, info.Sandboxed)
	}
}

// listNames lists a directory of the workspace (relative to the check's
// directory) by name.
func listNames(t *T, w *ws, dir string) []string {
	t.Helper()
	res, err := w.FS().List(t.Context(), w.p(dir))
	if err != nil {
		t.Fatalf("List(%s): %v", w.p(dir), err)
	}
	names := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		names[i] = e.Name
	}
	return names
}
