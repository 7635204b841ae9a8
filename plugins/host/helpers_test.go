//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

var bg = context.Background()

// newBackend opens a host backend whose state lives in a temporary
// directory; cfg is its JSON config (may be empty).
func newBackend(t testing.TB, cfg string, l backend.Limits) *Backend {
	t.Helper()
	opts := backend.Options{StateDir: t.TempDir(), Limits: l}
	if cfg != "" {
		opts.Config = json.RawMessage(cfg)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(bg) })
	return b
}

// openWS opens a session of a fresh backend with default limits.
func openWS(t testing.TB, cfg string) *Workspace {
	t.Helper()
	return openWSLimits(t, cfg, backend.Limits{})
}

func openWSLimits(t testing.TB, cfg string, l backend.Limits) *Workspace {
	t.Helper()
	b := newBackend(t, cfg, l)
	w, err := b.Open(bg, backend.WorkspaceSpec{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close(bg) })
	return w.(*Workspace)
}

func execute(t testing.TB, w *Workspace, req backend.ExecRequest) backend.ExecResult {
	t.Helper()
	return backendtest.Execute(t, w.Shell(), req)
}

// marker returns a sleep duration unique to the calling test, so its
// processes can be told apart from everyone else's in /proc.
func marker() string {
	return fmt.Sprintf("30.%09d", rand.IntN(1e9))
}

// living returns the pids of live (not zombie) processes whose command
// line contains arg.
func living(t testing.TB, arg string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), arg) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// noneLeft fails if a process with arg on its command line is still alive
// a moment after the call returned (the kernel needs that moment to tear
// a killed process down).
func noneLeft(t testing.TB, arg, what string) {
	t.Helper()
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		pids := living(t, arg)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("%s: processes left behind: %v", what, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
