package mcpserver_test

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
)

var (
	softMu      sync.Mutex
	softKernels = map[string]*sharedKernel{}
)

// softServer serves the noop plugin's "run" tool with a soft timeout of
// 1 s, extensions of 4 s and a hard cap of 9 s, on the host backend;
// unattended is what happens when nobody can be asked.
func softServer(t *testing.T, unattended string) *mcpserver.Server {
	t.Helper()
	softMu.Lock()
	sk := softKernels[unattended]
	if sk == nil {
		sk = &sharedKernel{}
		softKernels[unattended] = sk
	}
	softMu.Unlock()
	k := sk.get(t, func() host.Config {
		cfg := hostConfig(t, noopPlugin)
		cfg.SoftTimeouts = map[string]host.SoftTimeout{
			"run": {After: time.Second, ExtendBy: 4 * time.Second, HardCap: 9 * time.Second, Unattended: unattended},
		}
		return cfg
	})
	return serve(t, k, mcpserver.Options{})
}

// runTimed calls run with a shell string and returns the result, its
// structured exit code and how long it took.
func runTimed(t *testing.T, cs *mcp.ClientSession, shell string) (*mcp.CallToolResult, time.Duration) {
	t.Helper()
	start := time.Now()
	res := call(t, cs, "run", map[string]any{"shell": shell})
	return res, time.Since(start)
}

// exitCode is the noop run tool's structured exit code (124: timed out).
func exitCode(res *mcp.CallToolResult) float64 {
	m, _ := res.StructuredContent.(map[string]any)
	c, _ := m["exit_code"].(float64)
	return c
}

// fullText is all of a result's text content.
func fullText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var askedAfterOneSecond = regexp.MustCompile("`sleep 2\\.5; echo finished` has run 1(\\.[0-9])? s; extend by 4 s or stop\\?")

// A command past its soft timeout is put to the person: extended, it
// finishes; stopped, it ends at once with its output so far; extended
// again and again, the hard cap still stops it.
func TestSoftTimeoutAsksThePerson(t *testing.T) {
	t.Parallel() // mostly waiting out timeouts, in a session of its own
	var p person
	cs := stdioClient(t, softServer(t, host.SoftStop), &mcp.ClientOptions{ElicitationHandler: p.handle})

	p.set("accept", "extend by 4 s")
	res, _ := runTimed(t, cs, "sleep 2.5; echo finished")
	if res.IsError || !strings.Contains(text(res), "finished") || p.times() != 1 {
		t.Fatalf("extended: want the command to finish after one question; got %q, asked %d times", fullText(res), p.times())
	}
	// How long it has run is when the soft timeout fired: 1 s, later on a
	// loaded machine (a tenth of a second is shown).
	if q := p.asked[0]; !askedAfterOneSecond.MatchString(q) {
		t.Errorf("the question: %q", q)
	}
	if !strings.Contains(fullText(res), "extended by 4s") || !strings.Contains(fullText(res), "the person chose to extend") {
		t.Errorf("the result does not tell the model it was extended: %q", fullText(res))
	}

	p.set("accept", "stop")
	res, took := runTimed(t, cs, "echo partial; sleep 25; echo late")
	msg := fullText(res)
	if exitCode(res) != 124 || !strings.Contains(msg, "partial") || strings.Contains(msg, "late") || !strings.Contains(msg, "the person chose to stop") {
		t.Errorf("stopped by the person: want a timed-out result with the output so far; got %q", msg)
	}
	if took > 20*time.Second {
		t.Errorf("stopped at the soft timeout, yet the call took %s", took)
	}

	p.set("decline", "")
	res, _ = runTimed(t, cs, "echo partial; sleep 25")
	if exitCode(res) != 124 || !strings.Contains(fullText(res), "partial") || !strings.Contains(fullText(res), "the person chose to stop") {
		t.Errorf("declined form: want a stop; got %q", fullText(res))
	}

	p.set("accept", "extend by 4 s")
	before := p.times()
	res, took = runTimed(t, cs, "echo partial; sleep 25; echo late")
	msg = fullText(res)
	if exitCode(res) != 124 || !strings.Contains(msg, "partial") || strings.Contains(msg, "late") || p.times() == before {
		t.Errorf("extended every time: want the hard cap to stop it; got %q (asked %d times)", msg, p.times()-before)
	}
	if took > 24*time.Second {
		t.Errorf("the hard cap is 9 s, yet the call took %s", took)
	}
}

// Without elicitation the config decides: stop ends the command at the
// soft timeout, auto_extend lets it run to the hard cap. Output so far is
// kept either way.
func TestSoftTimeoutWithoutElicitation(t *testing.T) {
	t.Parallel() // mostly waiting out timeouts, in a session of its own
	cs := stdioClient(t, softServer(t, host.SoftStop), nil)
	res, took := runTimed(t, cs, "echo partial; sleep 25; echo late")
	msg := fullText(res)
	if exitCode(res) != 124 || !strings.Contains(msg, "partial") || strings.Contains(msg, "late") || !strings.Contains(msg, `unattended = "stop"`) {
		t.Errorf("unattended stop: %q", msg)
	}
	if took > 20*time.Second {
		t.Errorf("stopped at the soft timeout, yet the call took %s", took)
	}

	cs = stdioClient(t, softServer(t, host.SoftAutoExtend), nil)
	res, _ = runTimed(t, cs, "sleep 2.5; echo finished")
	if res.IsError || !strings.Contains(text(res), "finished") || !strings.Contains(fullText(res), `unattended = "auto_extend"`) {
		t.Errorf("auto_extend: want the command to finish; got %q", fullText(res))
	}
	res, took = runTimed(t, cs, "echo partial; sleep 25; echo late")
	msg = fullText(res)
	if exitCode(res) != 124 || !strings.Contains(msg, "partial") || strings.Contains(msg, "late") {
		t.Errorf("auto_extend to the hard cap: %q", msg)
	}
	if took > 24*time.Second {
		t.Errorf("the hard cap is 9 s, yet the call took %s", took)
	}
}
