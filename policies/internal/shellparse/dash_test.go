//go:build linux

package shellparse

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The oracle for the front end is dash itself: a command string runs
// under dash in a throwaway chroot whose PATH holds only stub programs
// that log their own name, plus the real wrappers whose option grammars
// the front end models (env, nice, nohup, timeout, xargs, find), and no
// other program. Every name dash ran must be among the names the front
// end says will run, or the front end must have refused to judge the
// string (failing closed is always acceptable).

// stubNames are the programs a fuzzed string can run and be seen running.
var stubNames = []string{"a", "b", "c", "x", "y", "cmd", "run", "whoami", "id", "ls", "rm", "cat", "touch", "curl", "echo", "printf", "true", "false", "test", "["}

// realWrappers are copied from the host into the sandbox.
var realWrappers = []string{"env", "nice", "nohup", "timeout", "xargs", "find"}

// sandboxUID runs the fuzzed strings: not root, and not 65534, whose
// process limit containers on this machine share.
const sandboxUID = 54321

type dashSandbox struct{ root string }

// newDashSandbox builds the chroot, or skips when this machine cannot.
func newDashSandbox(tb testing.TB) *dashSandbox {
	tb.Helper()
	dash, err := exec.LookPath("dash")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("dash is the oracle of this test and is missing: apt-get install dash")
		}
		tb.Skip("dash is not installed (apt-get install dash)")
	}
	if os.Geteuid() != 0 {
		tb.Skip("the dash oracle runs fuzzed strings in a chroot, which needs root")
	}
	root := tb.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, d := range []string{"bin", "log", "dev", "work"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for _, d := range []string{"log", "work"} {
		if err := os.Chown(filepath.Join(root, d), sandboxUID, sandboxUID); err != nil {
			tb.Fatal(err)
		}
	}
	devNull := filepath.Join(root, "dev/null")
	if err := syscall.Mknod(devNull, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(devNull, 0o666); err != nil { // past the umask
		tb.Fatal(err)
	}
	copyWithLibs(tb, root, dash, "bin/dash")
	copyWithLibs(tb, root, dash, "bin/sh")
	for _, w := range realWrappers {
		p, err := exec.LookPath(w)
		if err != nil {
			tb.Fatalf("%s: %v", w, err)
		}
		copyWithLibs(tb, root, p, "bin/"+w)
	}
	stub := "#!/bin/dash\necho \"${0##*/}\" >>/log/ran\n"
	for _, n := range stubNames {
		if err := os.WriteFile(filepath.Join(root, "bin", n), []byte(stub), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return &dashSandbox{root: root}
}

var lddPath = regexp.MustCompile(`(/\S+)`)

// copyWithLibs copies a dynamically linked program and the libraries ldd
// names into the chroot.
func copyWithLibs(tb testing.TB, root, prog, dst string) {
	tb.Helper()
	copyFile(tb, prog, filepath.Join(root, dst))
	out, err := exec.Command("ldd", prog).Output()
	if err != nil {
		tb.Fatalf("ldd %s: %v", prog, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if m := lddPath.FindStringSubmatch(line); m != nil {
			copyFile(tb, m[1], filepath.Join(root, m[1]))
		}
	}
}

func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	if _, err := os.Stat(dst); err == nil {
		return
	}
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		tb.Fatal(err)
	}
}

// run runs s under dash in the sandbox and returns the names of the
// stub programs that ran. Limits: 64 processes, 1 s of CPU, 1 MiB files,
// 3 s of wall time, then the whole process group is killed.
func (sb *dashSandbox) run(tb testing.TB, s string) []string {
	tb.Helper()
	logPath := filepath.Join(sb.root, "log/ran")
	_ = os.Remove(logPath)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/dash", "-c", `ulimit -p 64 -t 1 -f 2048; exec /bin/dash -c "$1"`, "dash", s)
	cmd.Dir = "/work"
	cmd.Env = []string{"PATH=/bin", "HOME=/work"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     sb.root,
		Credential: &syscall.Credential{Uid: sandboxUID, Gid: sandboxUID},
		Setpgid:    true,
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && ctx.Err() == nil {
		tb.Fatalf("running dash: %v", err)
	}
	// Background commands may still be running: wait for the group to
	// empty (they cannot outlive the CPU limit), then read the log.
	if cmd.Process != nil {
		pgid := cmd.Process.Pid
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-pgid, 0) == nil; {
			if time.Now().After(deadline) {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	data, _ := os.ReadFile(logPath)
	names := strings.Fields(string(data))
	sort.Strings(names)
	return names
}

// dashSeeds are the bypass classes and constructs the corpus covers.
var dashSeeds = []string{
	"a",
	"a; b && c || x",
	"a | b | c",
	"echo a\r# x; whoami",
	"ls &>/dev/null whoami",
	"echo `echo \\$(whoami)`",
	"echo $(echo a # )\nwhoami\n)",
	"echo $(echo a # ) '\nwhoami\necho \"'\")",
	"v=-exec; find . $v whoami \\;",
	"echo q | xargs -i whoami ls",
	"echo q | xargs -e whoami ls",
	"echo q | xargs -l whoami ls",
	"echo q | xargs -I ls whoami",
	"echo . -exec whoami \\; | xargs find",
	"find . -maxdepth 0 -exec whoami \\;",
	"find . -maxdepth 0 -exec a {} + -exec b {} \\;",
	"cat <<EOF\n$(whoami)\nEOF\n",
	"cat <<'EOF'\n$(whoami)\nEOF\n",
	"echo ${x:-$(whoami)}",
	"echo $(( $(id) ))",
	"ls > $(whoami)",
	"A=$(whoami)",
	"case x in $(whoami)) a;; esac",
	"f() { whoami; }; f",
	"alias ls=whoami\nls",
	"{ whoami; }",
	"(a; b)",
	"who\\\nami",
	"ls # x\nwhoami",
	"\"who\"ami",
	"env -i A=1 nice -n 5 timeout 5 nohup whoami",
	"env -u whoami ls",
	"nice -10 whoami",
	"timeout -k 1 -s KILL 5 whoami",
	"sh -c 'sh -c whoami'",
	"eval 'a; b'",
	"trap whoami EXIT",
	"command whoami",
	"command -v whoami",
	"exec whoami",
	"if a; then b; elif c; then x; else y; fi",
	"for i in a b; do $i; done",
	"while false; do a; done; until true; do b; done",
	"! a & b",
	"$'whoami'",
	"ls\u00a0whoami",
	"echo $((whoami) )",
	"echo $( (whoami) )",
	"x=$((1))$(whoami)",
	"echo $(cat <<EOF\n)\nEOF\nwhoami)",
	"case x in (x) whoami;; esac",
	"echo \"`whoami`\" '$(id)' \\$(ls)",
	"[ x ] && whoami",
	"echo ${x?$(whoami)} ${y=$(id)} ${z+`ls`}",
	"for x in; do whoami; done",
	"exec 3>&1; whoami <&-",
	"cat <<E\nx\nE\nwhoami",
	"cat <<-E\n\t$(whoami)\n\tE",
	"cat << E; whoami\nbody $(id)\nE",
	"cat <<E$(whoami)\nE$(whoami)\n",
	"echo x \\\n whoami",
	"ls;whoami&id|a&&b||c",
	"whoami=1 a",
	"a=1 whoami",
	"echo ${x:-`whoami`}",
	"echo \"${x:-\"$(whoami)\"}\"",
	"echo $(( $(id) + ${x:-$(whoami)} ))",
	"a #\\\n whoami", // found by fuzzing: mvdan continued the comment
}

// FuzzAgainstDash checks the front end against dash: every program dash
// runs for a string is one the front end said would run, unless it
// refused to judge the string.
func FuzzAgainstDash(f *testing.F) {
	sb := newDashSandbox(f)
	for _, s := range dashSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 300 {
			return
		}
		checkAgainstDash(t, sb, s)
	})
}

// fragments are the pieces FuzzAgainstDashFragments builds strings from:
// the words, quotes, operators and keywords where readers disagree.
var fragments = []string{
	" ", " ", "\t", "\n", ";", "&", "|", "&&", "||", "#", "\\", "'", "\"", "`",
	"$(", ")", "(", "{", "}", "$((", "))", "${x:-", "${x#", "}", "$x", "$'", "=",
	"<", ">", ">>", "&>", "2>&1", "<<E\n", "<<'E'\n", "<<-E\n", "\nE\n", "\\\n",
	"whoami", "a", "b", "id", "ls", "x=", "-exec", "\\;", "+", "{}", "--",
	"find . -maxdepth 0", "echo q | xargs", "xargs -i", "xargs -e", "xargs -l", "xargs -I x",
	"env", "env -i", "env -u", "nice -n 1", "nice -1", "timeout 5", "timeout -k 1 5", "nohup",
	"sh -c", "eval", "command", "exec", "trap", "EXIT", "alias a=", "f()",
	"case x in", "x)", ";;", "esac", "if", "then", "else", "fi", "for i in", "do", "done",
	"while", "until", "!", "\u00a0", "*", "?", "[", "]", "~",
}

// FuzzAgainstDashFragments is FuzzAgainstDash on strings built from
// fragments: each input byte picks one, so mutations explore how shell
// constructs combine rather than single characters.
func FuzzAgainstDashFragments(f *testing.F) {
	sb := newDashSandbox(f)
	for _, seed := range [][]string{
		{"a", ";", "whoami"},
		{"echo q | xargs", " ", "xargs -i", "whoami", " ", "a"},
		{"find . -maxdepth 0", " ", "-exec", " ", "whoami", " ", "\\;"},
		{"a", " ", "$(", "a", " ", "#", ")", "\n", "whoami", "\n", ")"},
		{"a", "<<E\n", "$(", "whoami", ")", "\nE\n"},
		{"env -u", " ", "a", " ", "whoami"},
		{"case x in", " ", "x)", " ", "whoami", ";;", " ", "esac"},
	} {
		f.Add(pick(f, seed...))
	}
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 40 {
			return
		}
		var sb2 strings.Builder
		for _, p := range picks {
			sb2.WriteString(fragments[int(p)%len(fragments)])
		}
		checkAgainstDash(t, sb, sb2.String())
	})
}

// pick returns the input bytes that build the given fragments.
func pick(t testing.TB, parts ...string) []byte {
	var out []byte
	for _, p := range parts {
		i := slices.Index(fragments, p)
		if i < 0 {
			t.Fatalf("%q is not a fragment", p)
		}
		out = append(out, byte(i))
	}
	return out
}

// checkAgainstDash fails when dash runs a program for s that the front
// end did not report, unless the front end refused to judge s.
func checkAgainstDash(t *testing.T, sb *dashSandbox, s string) {
	t.Helper()
	a := AnalyzeShell(s, POSIX)
	if len(a.Problems) > 0 {
		return // refused: always acceptable
	}
	said := map[string]bool{}
	for _, r := range a.Runs {
		if r.Opaque != "" {
			return // a policy refuses code it cannot see
		}
		said[r.Name()] = true
	}
	for _, ran := range sb.run(t, s) {
		if !said[ran] {
			t.Fatalf("dash ran %q for %q, which the front end did not report (it reported %v)", ran, s, keys(said))
		}
	}
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// TestDashOracleSeesCommands guards the oracle itself: a sandbox that
// saw nothing would make the fuzz target pass vacuously.
func TestDashOracleSeesCommands(t *testing.T) {
	sb := newDashSandbox(t)
	for s, want := range map[string]string{
		"a; b | c":                      "a b c",
		"echo a\r# x; whoami":           "whoami",
		"ls &>/dev/null whoami":         "ls whoami",
		"echo q | xargs -i whoami ls":   "whoami",
		"env -i A=1 nice -n 5 whoami":   "whoami",
		"v=-exec; find . $v whoami \\;": "whoami",
		"alias ls=whoami\nls":           "whoami",
		"echo > /etc/wai-dash-oracle":   "",
	} {
		if got := strings.Join(sb.run(t, s), " "); got != want {
			t.Errorf("dash ran %q for %q, want %q", got, s, want)
		}
	}
	if _, err := os.Stat("/etc/wai-dash-oracle"); err == nil {
		t.Fatal("a fuzzed string wrote outside the sandbox")
	}
}
