//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	hostconfig "github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// podmanKernel opens a kernel on config, adjusted by tune when not nil,
// for tests that hold or idle a session through the Go API beside the
// CLI. It has no bundled tools (the tests call the kernel) and closes with
// the test, with a minute of its own: the test's context is over by then.
func podmanKernel(t *testing.T, config string, tune func(*hostconfig.File), opts ...host.Option) *host.Kernel {
	t.Helper()
	cfg, err := hostconfig.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BundledTools = []string{}
	if tune != nil {
		tune(&cfg)
	}
	k, err := host.New(t.Context(), cfg.Kernel(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = k.Close(ctx)
	})
	return k
}

// podmanAdminConfig writes a config whose backend is podman, with a name
// prefix of its own so parallel runs do not collide.
func podmanAdminConfig(t *testing.T) (config, state, prefix string) {
	t.Helper()
	state = plugbuild.StateDir(t)
	prefix = "wai-cli-" + marker(t)[len("wai-test-"):][:8]
	config = filepath.Join(t.TempDir(), "wai.toml")
	toml := fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\n\n[backends.podman]\nimage = %q\nname_prefix = %q\n", state, podmanImage(), prefix)
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, state, prefix
}

// TestAdminPodman: wai preflight passes on a set-up machine; wai ps shows
// a kept session (each user only their own); wai gc leaves it (recently
// used) but removes a stray workspace; wai rm removes exactly one user's
// session; wai gc --all removes the kept session too.
func TestAdminPodman(t *testing.T) {
	t.Parallel()
	config, state, prefix := podmanAdminConfig(t)
	r := inProcess(t, config, "preflight", "--config", config)
	if r.code != exitOK {
		if os.Getenv("CI") != "true" && strings.Contains(r.stdout, "FAIL  service reachable") {
			t.Skipf("no Podman service (run scripts/setup-podman.sh as root): %s", r.stdout)
		}
		t.Fatalf("wai preflight: want exit 0; got %v", r)
	}
	if !strings.Contains(r.stdout, "OK    hardened container runs") {
		t.Errorf("wai preflight did not run a container: %v", r)
	}
	session := "kept"
	// Whatever happens, the sessions this test makes go, and nothing else:
	// wai rm removes exactly them, where any wai gc also sweeps the
	// service's unused files volumes of other wai builds (gcFiles), which
	// belong to no test. Already gone is fine.
	t.Cleanup(func() {
		for _, user := range []string{"", "alice"} {
			inProcess(t, config, "rm", "--user", user, "--config", config, session)
		}
	})
	for _, user := range []string{"", "alice"} {
		r = inProcess(t, config, "exec", "--user", user, "--session", session, "--", "sh", "-c", "echo "+user+"x >f")
		if r.code != 0 {
			t.Fatalf("wai exec --user %q --session: %v", user, r)
		}
	}
	r = inProcess(t, config, "exec", "--user", "alice", "--session", session, "--", "cat", "f")
	if r.code != 0 || r.stdout != "alicex\n" {
		t.Errorf("alice's session does not hold alice's file: %v", r)
	}
	r = inProcess(t, config, "ps", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, "podman   "+session) || !strings.Contains(r.stdout, "running") || strings.Contains(r.stdout, "alice") {
		t.Fatalf("wai ps: want the user-less %s listed as running, and nothing of alice's; got %v", session, r)
	}
	r = inProcess(t, config, "ps", "--json", "--user", "alice", "--config", config)
	var alice []host.SessionEntry
	if err := json.Unmarshal([]byte(r.stdout), &alice); err != nil || r.code != 0 {
		t.Fatalf("wai ps --json --user alice: %v; %v", err, r)
	}
	if len(alice) != 1 || alice[0].User != "alice" || alice[0].Name != session || alice[0].Container != prefix+"-"+backend.SessionKey("alice", session) || alice[0].Size <= 0 {
		t.Fatalf("wai ps --user alice: %+v", alice)
	}

	stray := filepath.Join(state, "podman", "stray-"+prefix)
	if err := os.MkdirAll(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	name := prefix + "-" + session
	r = inProcess(t, config, "gc", "--why", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, "removed podman workspace "+stray) || !strings.Contains(r.stdout, "kept    podman container "+name) {
		t.Errorf("wai gc --why: want the stray workspace removed and the kept session left; got %v", r)
	}
	// Not even this wai's own files volume is looked at (LimitFilesSweep).
	if strings.Contains(r.stdout, "files-volume") {
		t.Errorf("wai gc in a test considered the service's files volumes: %v", r)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the stray workspace survived wai gc: %v", err)
	}

	r = inProcess(t, config, "rm", "--user", "alice", "--config", config, session)
	if r.code != 0 || !strings.Contains(r.stdout, "removed podman session "+session) {
		t.Errorf("wai rm --user alice %s: %v", session, r)
	}
	if _, err := os.Stat(alice[0].Workspace); !os.IsNotExist(err) {
		t.Errorf("alice's workspace survived wai rm: %v", err)
	}
	r = inProcess(t, config, "exec", "--session", session, "--", "cat", "f")
	if r.code != 0 || r.stdout != "x\n" {
		t.Errorf("wai rm of alice's %s touched the user-less one: %v", session, r)
	}

	r = inProcess(t, config, "gc", "--all", "--config", config)
	if r.code != 0 || !strings.Contains(r.stdout, "removed podman container "+name) {
		t.Errorf("wai gc --all: want %s removed; got %v", name, r)
	}
	r = inProcess(t, config, "ps", "--json", "--all-users", "--config", config)
	if r.code != 0 || strings.Contains(r.stdout, name) {
		t.Errorf("wai ps after gc --all: want %s gone; got %v", name, r)
	}
}

// idleEvents is a slog handler that signals each session.idle_release.
type idleEvents struct {
	mu       sync.Mutex
	released map[string]bool
	notify   chan struct{}
}

func (h *idleEvents) Enabled(context.Context, slog.Level) bool { return true }
func (h *idleEvents) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *idleEvents) WithGroup(string) slog.Handler            { return h }
func (h *idleEvents) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "session.idle") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "session" {
			h.mu.Lock()
			h.released[a.Value.String()] = true
			h.mu.Unlock()
		}
		return true
	})
	select {
	case h.notify <- struct{}{}:
	default:
	}
	return nil
}

// An MCP-like session idle past session_idle_timeout on Podman loses its
// container, never its files: the next call reads what the last wrote (in
// a new container). The reaper used to close the session, removing a
// throwaway workspace with its files.
func TestIdleSessionKeepsItsFilesOnPodman(t *testing.T) {
	t.Parallel()
	config, _, _ := podmanAdminConfig(t)
	ev := &idleEvents{released: map[string]bool{}, notify: make(chan struct{}, 1)}
	ctx := t.Context()
	k := podmanKernel(t, config, func(c *hostconfig.File) { c.SessionIdleTimeout = 500 * time.Millisecond }, host.WithLogger(slog.New(ev)))
	s, err := k.Session(ctx, "", host.SessionOptions{}) // a throwaway session, as MCP opens
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Shell: "echo kept >keep.txt"})
	if err != nil {
		if os.Getenv("CI") != "true" && backend.KindOf(err) == backend.ErrUnavailable {
			t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %v", err)
		}
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("writing the file: %+v", res)
	}
	deadline := time.After(2 * time.Minute)
	for {
		ev.mu.Lock()
		done := ev.released[s.Name()]
		ev.mu.Unlock()
		if done {
			break
		}
		select {
		case <-ev.notify:
		case <-deadline:
			t.Fatal("the idle session was not released within 2 minutes")
		}
	}
	if st, err := s.Lifecycle().State(ctx); err != nil || st.Running {
		t.Errorf("after the idle release the container is %+v (%v), want gone", st, err)
	}
	got, err := s.FS().Read(ctx, backend.ReadRequest{Path: "keep.txt"})
	if err != nil || len(got.Lines) != 1 || got.Lines[0] != "kept" {
		t.Fatalf("read_file after the idle timeout: %+v, %v; want the file written before", got, err)
	}
	res, err = s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"cat", "keep.txt"}})
	if err != nil || res.Stdout != "kept\n" {
		t.Fatalf("cat after the idle timeout (in a new container): %+v, %v", res, err)
	}
}
