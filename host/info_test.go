package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// shellTools are demoTools that declare the shell capability, as a
// command tool plugin does.
type shellTools struct{ *goTools }

func (s shellTools) Describe() wasm.Description {
	d := s.goTools.Describe()
	d.Capabilities = []string{"shell"}
	return d
}

// With no configuration the kernel runs on Podman, and without Podman
// every call fails with ErrUnavailable saying both ways out: set Podman
// up, or name the unsandboxed host backend. It never falls back silently.
func TestNoPodmanFailsWithAdvice(t *testing.T) {
	cfg := testConfig(t) // the defaults: backend podman, no fallback
	ctx := context.Background()
	k, err := New(ctx, cfg, withTools(demoTools("demo"), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	// plugins/podman is not linked into this test binary: unavailable.
	_, infoErr := k.Info(ctx)
	_, callErr := k.Call(ctx, "", "noop", nil)
	s := session(t, k, "nopodman")
	_, execErr := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"true"}})
	for what, err := range map[string]error{"Info": infoErr, "Call": callErr, "Execute": execErr} {
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Fatalf("%s: want ErrUnavailable, got %v", what, err)
		}
		for _, want := range []string{"sudo scripts/setup-podman.sh", "wai preflight", "--backend host", `backend = "host"`, `fallback = "host"`, "WITHOUT a sandbox"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error lacks %q: %v", what, want, err)
			}
		}
	}
}

// On the host backend every tool result says it was not sandboxed, the
// descriptions of command tools say commands run on the host, and Info
// carries the notice the CLI prints.
func TestHostBackendSaysUnsandboxedEverywhere(t *testing.T) {
	cfg := testConfig(t)
	cfg.Backend = "host" // linked in by e2e_test.go
	ctx := context.Background()
	k, info := chosenInfo(t, cfg, withTools(shellTools{demoTools("demo")}, nil))
	if info.Sandboxed || info.Backend != "host" || !strings.Contains(info.Notice(), "NOT sandboxed") {
		t.Fatalf("host Info: %+v, notice %q", info, info.Notice())
	}
	for _, tool := range k.Tools() {
		if !strings.Contains(tool.Description, "directly on the host") || !strings.Contains(tool.Description, "NOT in a sandbox") {
			t.Errorf("%s: description does not say commands run unsandboxed: %q", tool.Name, tool.Description)
		}
	}
	for _, name := range []string{"run", "noop"} { // with and without a command
		res, err := k.Call(ctx, "unsandboxed", name, json.RawMessage(`{"command":["true"]}`))
		if name == "noop" {
			res, err = k.Call(ctx, "unsandboxed", name, nil)
		}
		if err != nil || res.Sandboxed || !strings.HasSuffix(res.Message, unsandboxedNote(info)) {
			t.Errorf("%s: a host result must say it is not sandboxed: %+v, %v", name, res, err)
		}
	}
	// A tool that cannot run commands (a file tool) keeps its message as
	// it is; its result still says unsandboxed to a program.
	k2, err := New(ctx, cfg, withTools(demoTools("files"), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close(ctx)
	res, err := k2.Call(ctx, "files", "noop", nil)
	if err != nil || res.Sandboxed || res.Message != "nothing" {
		t.Errorf("a file tool's result on host: %+v, %v", res, err)
	}
}

// A sandboxed backend's results and descriptions carry its limits, and
// nothing claims unsandboxed.
func TestSandboxedBackendDescribesItsLimits(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxTimeout = 90 * time.Second
	k, _ := newKernel(t, cfg, withTools(shellTools{demoTools("demo")}, nil))
	ctx := context.Background()
	info, err := k.Info(ctx)
	if err != nil || !info.Sandboxed || info.Notice() != "" || info.MaxCommandTimeout != 90*time.Second {
		t.Fatalf("Info: %+v, %v", info, err)
	}
	// Where commands run, and no time limit: the host knows only its
	// outer bound, and a tool's own may be stricter (evaluate_python's
	// 5 s) — "limited to 90 s" after it would contradict it.
	for _, tool := range k.Tools() {
		if !strings.Contains(tool.Description, "Commands run in the fake backend's sandbox") ||
			strings.Contains(tool.Description, "90 s") || strings.Contains(tool.Description, "NOT") {
			t.Errorf("%s: %q", tool.Name, tool.Description)
		}
	}
	res, err := k.Call(ctx, "", "run", json.RawMessage(`{"command":["true"]}`))
	if err != nil || !res.Sandboxed || strings.Contains(res.Message, "NOT sandboxed") {
		t.Fatalf("a sandboxed result: %+v, %v", res, err)
	}
}

// The podman backend's facts come from its table: network, host mounts,
// and the command limit the kernel enforces.
func TestPodmanInfoFromConfig(t *testing.T) {
	cfg := testConfig(t)
	cfg.Backends["podman"] = map[string]any{
		"network":     "none",
		"host_mounts": []map[string]any{{"host_path": "/srv/data", "mount_path": "data"}, {"host_path": "/opt/x", "mount_path": "/workspace/x/"}},
	}
	k, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	info := k.describe("podman")
	want := []HostMount{{"/srv/data", "/workspace/data"}, {"/opt/x", "/workspace/x"}}
	if !info.Sandboxed || info.NetworkEnabled || info.MaxCommandTimeout != 120*time.Second || len(info.HostMounts) != 2 || info.HostMounts[0] != want[0] || info.HostMounts[1] != want[1] {
		t.Fatalf("podman info: %+v", info)
	}
	cfg.Backends["podman"]["network"] = "bridge"
	k.cfg = cfg
	if !k.describe("podman").NetworkEnabled {
		t.Fatal("network = bridge must say the network is enabled")
	}
}

// disabled_tools is checked against the tools the kernel loaded: a typo
// is an error that names the nearest tool, not a tool silently left on.
func TestDisabledToolTypoIsAnError(t *testing.T) {
	cfg := testConfig(t)
	cfg.DisabledTools = []string{"sleeep"}
	_, err := New(context.Background(), cfg, WithBackend(newFake("fake", true)), withTools(demoTools("demo"), nil))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), `disabled_tools names "sleeep"`) || !strings.Contains(err.Error(), `did you mean "sleep"?`) {
		t.Fatalf("want ErrInvalid with did-you-mean, got %v", err)
	}
	// An alias is the name disabled_tools uses.
	cfg.DisabledTools = []string{"b_sleep"}
	k, _ := newKernel(t, cfg, withTools(demoTools("b"), map[string]string{"sleep": "b_sleep"}))
	for _, tool := range k.Tools() {
		if tool.Name == "b_sleep" {
			t.Fatal("the disabled alias is still offered")
		}
	}
	// An alias of a tool the plugin does not have says which it meant.
	cfg.DisabledTools = nil
	_, err = New(context.Background(), cfg, WithBackend(newFake("fake", true)), withTools(demoTools("b"), map[string]string{"slep": "x"}))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), `did you mean "sleep"?`) {
		t.Fatalf("want the alias typo refused with did-you-mean, got %v", err)
	}
}

// A backend this build lacks (its stand-in wraps backend.ErrNotBuiltIn)
// is not a machine to set up: the error leads with the cause, gives the
// build hint it carries, and still names the host backend as the
// unsandboxed way out.
func TestNotBuiltInSaysRebuild(t *testing.T) {
	const name = "wai-test-not-built"
	backend.Register(name, func(context.Context, backend.Options) (backend.Backend, error) {
		return nil, &backend.Error{Kind: backend.ErrUnavailable, Op: "open", Msg: "this wai was built without it: rebuild", Err: backend.ErrNotBuiltIn}
	})
	cfg := testConfig(t)
	cfg.Backend = name
	ctx := context.Background()
	k, err := New(ctx, cfg, withTools(demoTools("demo"), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	_, err = k.Info(ctx)
	if !errors.Is(err, backend.ErrUnavailable) || !errors.Is(err, backend.ErrNotBuiltIn) {
		t.Fatalf("Info: %v, want ErrUnavailable from ErrNotBuiltIn", err)
	}
	msg := err.Error()
	hint, way := strings.Index(msg, "built without it: rebuild"), strings.Index(msg, "--backend host")
	if hint < 0 || way < hint || strings.Contains(msg, "setup") || strings.Contains(msg, "preflight") {
		t.Errorf("Info: %q, want the build hint first, no machine setup, and the host backend named", msg)
	}
}

// The tools whose timeout and output follow the host's limits say them as
// configured, in whatever order the config narrows them, with the backend
// chosen or not; no other tool is told them.
func TestHostTimedToolsStateTheConfiguredLimits(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxTimeout, cfg.Limits.DefaultTimeout, cfg.Limits.MaxOutputBytes = 20*time.Second, 10*time.Second, 1000
	shell := &goTools{name: "shell", tools: map[string]func(context.Context, wasm.Env, json.RawMessage) (wasm.ToolResult, error){
		"shell_execute": demoTools("x").tools["noop"],
		"other":         demoTools("x").tools["noop"],
	}}
	k, _ := newKernel(t, cfg, withTools(shell, nil), withTools(demoTools("demo"), nil))
	const want = "timeout_seconds defaults to 10 s and is clamped to 1–20 s; stdout and stderr are each cut to at most 1000 bytes (head and tail kept)."
	for _, tool := range k.Tools() {
		if got := strings.Contains(tool.Description, want); got != (tool.Name == "shell_execute") {
			t.Errorf("%s (plugin %s): %q", tool.Name, tool.Plugin, tool.Description)
		}
	}
	for _, c := range []struct {
		limits func(*backend.Limits)
		want   string
	}{
		{func(*backend.Limits) {}, "defaults to 30 s and is clamped to 1–120 s; stdout and stderr are each cut to at most 32 KiB"},
		{func(l *backend.Limits) { l.DefaultTimeout = 300 * time.Second }, "defaults to 120 s and is clamped to 1–120 s"},
		{func(l *backend.Limits) { l.MinTimeout, l.DefaultTimeout = 5*time.Second, 5*time.Second }, "defaults to 5 s and is clamped to 5–120 s"},
		{func(l *backend.Limits) { l.MaxTimeout, l.DefaultTimeout = 500*time.Millisecond, 200*time.Millisecond }, "defaults to 0.5 s and is clamped to 0.5–0.5 s"},
	} {
		l := backend.DefaultLimits()
		c.limits(&l)
		if got := limitsNote(l); !strings.Contains(got, c.want) {
			t.Errorf("limits %+v: %q, want %q", l, got, c.want)
		}
	}
}
