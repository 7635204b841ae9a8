package sdktests

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// The harness is tested by running these checks in a child test process
// (SDKTESTS_CHILD=1), where they are meant to fail, and reading its output.
func TestHarnessChild(t *testing.T) {
	if os.Getenv("SDKTESTS_CHILD") != "1" {
		t.Skip("run by TestHarness in a child process")
	}
	checks := map[string]func(*T){
		"Hangs":       func(*T) { select {} },
		"SkipsItself": func(t *T) { t.Skipf("no %s here", "python3") },
		"Fatal": func(t *T) {
			t.Fatalf("stopping here")
			t.Errorf("REACHED AFTER FATAL")
		},
		"Panics":  func(*T) { panic("boom") },
		"Passes":  func(t *T) { t.Logf("fine") },
		"Cancels": func(t *T) { <-t.Context().Done(); t.Errorf("REPORTED AFTER ABANDON") },
	}
	for name, fn := range checks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			watch(t, 300*time.Millisecond, fn)
		})
	}
}

func TestHarness(t *testing.T) {
	if os.Getenv("SDKTESTS_CHILD") == "1" {
		t.Skip("parent only")
	}
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHarnessChild$", "-test.v")
	cmd.Env = append(os.Environ(), "SDKTESTS_CHILD=1")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err == nil {
		t.Fatalf("the child run passed; it has failing checks:\n%s", text)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the child run took %s: the watchdog did not stop the hanging check", d)
	}
	for _, want := range []string{
		"--- FAIL: TestHarnessChild/Hangs",
		"watchdog: TestHarnessChild/Hangs did not finish within 300ms",
		"--- SKIP: TestHarnessChild/SkipsItself",
		"no python3 here",
		"--- FAIL: TestHarnessChild/Fatal",
		"stopping here",
		"--- FAIL: TestHarnessChild/Panics",
		"check panicked: boom",
		"--- PASS: TestHarnessChild/Passes",
		"--- FAIL: TestHarnessChild/Cancels",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("child output lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"REACHED AFTER FATAL", "REPORTED AFTER ABANDON", "panic: Log in goroutine after"} {
		if strings.Contains(text, bad) {
			t.Errorf("child output holds %q:\n%s", bad, text)
		}
	}
}

func TestNeedsSayWhatIsMissing(t *testing.T) {
	noProcs := Backend{Caps: Caps{Sandboxed: true}}
	host := Backend{Caps: Caps{RealProcesses: true, Network: true, HostDir: func(backend.Workspace) string { return "" }}}
	for _, c := range []struct {
		n    needs
		b    Backend
		want string
	}{
		{needProcesses, noProcs, "Caps.RealProcesses=false"},
		{needPython, host, "Caps.Python=false"},
		{needPlant, noProcs, "neither Caps.HostDir nor Caps.RealProcesses"},
		{needHostDir, noProcs, "no Caps.HostDir"},
		{needSandbox, host, "Caps.Sandboxed=false"},
		{needSandbox | needNoNetwork, Backend{Caps: Caps{RealProcesses: true, Sandboxed: true, Network: true}}, "Caps.Network=true"},
		{needPlant | needHostDir | needProcesses, host, ""},
	} {
		if got := c.n.missing(c.b); !strings.Contains(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("needs %b on %+v: %q, want it to mention %q", c.n, c.b.Caps, got, c.want)
		}
	}
}
