//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	hostconfig "github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/plugins/podman"
)

// The Podman checks of the CLI run in this test process rather than in a
// second binary: the test binary already links the real backend when the
// Podman tags are set (make test sets them), and building wai again with
// them would compile the bindings a second time.

// podmanImage is the image scripts/setup-podman.sh builds without a
// registry, unless WAI_PODMAN_IMAGE names another.
func podmanImage() string {
	if v := os.Getenv("WAI_PODMAN_IMAGE"); v != "" {
		return v
	}
	return "localhost/wai-python:bookworm"
}

// inProcess runs wai's run function with the given config file.
func inProcess(t *testing.T, config string, args ...string) result {
	t.Helper()
	if len(args) > 0 && args[0] == "exec" {
		args = append([]string{"exec", "--config", config}, args[1:]...)
	}
	// Not t.Context(): cleanups run wai too (`containers rm`), and that
	// context is cancelled before they run, which made every such rm
	// answer "interrupted" and leave its container behind.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code, took: time.Since(start)}
}

// The issues' checks of `wai exec --backend podman`: it runs as the
// container user; a throwaway session's container is gone when the command
// ends; a named session's container stays, and a timeout there kills the
// command's whole tree inside it.
func TestExecPodman(t *testing.T) {
	t.Parallel()
	state := plugbuild.StateDir(t)
	prefix := "wai-cli-" + marker(t)[len("wai-test-"):][:8]
	config := filepath.Join(t.TempDir(), "wai.toml")
	toml := fmt.Sprintf("backend = \"host\"\nstate_dir = %q\n\n[backends.podman]\nimage = %q\nname_prefix = %q\n", state, podmanImage(), prefix)
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := hostconfig.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	pcfg := podmanConfig(t, cfg)
	mine := func() []podman.Container {
		t.Helper()
		// Not t.Context(): this also runs in a cleanup, after it ends.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := podman.List(ctx, pcfg)
		if err != nil {
			t.Fatalf("listing containers: %v", err)
		}
		var out []podman.Container
		for _, c := range cs {
			if strings.HasPrefix(c.Name, prefix+"-") {
				out = append(out, c)
			}
		}
		return out
	}

	r := inProcess(t, config, "exec", "--backend", "podman", "--", "id", "-u")
	if r.code == exitExecFailed && strings.Contains(r.stderr, "hint: the backend cannot serve") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Podman is required on CI (make test runs scripts/setup-podman.sh first): %v", r)
		}
		t.Skipf("no usable Podman service (run scripts/setup-podman.sh as root): %s", r.stderr)
	}
	if r.code != 0 || r.stdout != "65534\n" {
		t.Fatalf("wai exec --backend podman -- id -u: want 65534; got %v", r)
	}
	if left := mine(); len(left) > 0 {
		t.Errorf("the throwaway session's container outlived the command: %+v", left)
	}
	// One shell.exec event per exec, whoever else records it: the event
	// stream and the audit file count commands by it.
	r = inProcess(t, config, "exec", "-v", "--backend", "podman", "--", "true")
	if n := strings.Count(r.stderr, "msg=shell.exec "); r.code != 0 || n != 1 {
		t.Errorf("wai exec -v --backend podman -- true: %d shell.exec events, want 1; got %v", n, r)
	}

	const session = "t1"
	t.Cleanup(func() { closeSession(t, config, session, mine) })
	r = inProcess(t, config, "exec", "--backend", "podman", "--session", session, "--timeout", "1s", "--", "sh", "-c", "sleep 300 & sleep 300")
	if r.code != 124 {
		t.Fatalf("timeout in a kept podman session: want 124; got %v", r)
	}
	if r.took > 5*time.Second {
		t.Errorf("the timed-out command took %s to return, want about 1s", r.took)
	}
	if cs := mine(); len(cs) != 1 || cs[0].Session != session {
		t.Fatalf("want the kept session's container to stay; have %+v", cs)
	}
	// The same session again: the kill reached every process in the
	// container, the backgrounded sleep included. (The pattern's [3]
	// keeps the grep itself from matching.)
	r = inProcess(t, config, "exec", "--backend", "podman", "--session", session, "-c",
		`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep [3]00' || true`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "0" {
		t.Errorf("want no sleep left in the session's container; got %v", r)
	}
}

func podmanConfig(t *testing.T, cfg hostconfig.File) podman.Config {
	t.Helper()
	raw, err := json.Marshal(cfg.Backends["podman"])
	if err != nil {
		t.Fatal(err)
	}
	pcfg, err := podman.ParseConfig(raw, cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	return pcfg
}

// closeSession ends a kept session through the Go API (reattaching
// without Keep removes it on close), and removes by force whatever
// still carries the test's prefix, failing the test if anything did.
func closeSession(t *testing.T, config, session string, mine func() []podman.Container) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := hostconfig.Load(config)
	if err != nil {
		t.Error(err)
		return
	}
	cfg.Backend = "podman"
	cfg.BundledTools = nil
	k, err := host.New(ctx, cfg.Kernel())
	if err != nil {
		t.Error(err)
		return
	}
	if s, err := k.Session(ctx, session, host.SessionOptions{}); err == nil {
		_, _ = s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"true"}})
	}
	if err := k.Close(ctx); err != nil {
		t.Errorf("closing session %s: %v", session, err)
	}
	for _, c := range mine() {
		t.Errorf("container %s outlived its session's close; removing it", c.Name)
		_ = exec.CommandContext(ctx, "podman", "rm", "-f", c.Name).Run()
	}
}
