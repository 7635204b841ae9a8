package sdktests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

func checkSandboxHostFiles(t *T, w *ws) {
	secret := "wai-sdk-secret-" + sleepMarker()
	file := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(file, []byte(secret), 0o644); err != nil {
		t.Fatalf("writing the host file: %v", err)
	}
	res := w.exec(backend.ExecRequest{Argv: []string{"cat", file}})
	if strings.Contains(res.Stdout, secret) {
		t.Errorf("a sandboxed command read the host file %s", file)
	}
}

func checkSandboxHostProcesses(t *T, w *ws) {
	m := sleepMarker()
	cmd := exec.Command("sleep", m)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting a host process: %v", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	if procs := processesWith(t, w, m); len(procs) > 0 {
		t.Errorf("a sandboxed command sees host process %d: %v", cmd.Process.Pid, procs)
	}
}

func checkSandboxNoNetwork(t *T, w *ws) {
	res := w.exec(backend.ExecRequest{Argv: []string{"cat", "/proc/net/dev"}})
	if res.ExitCode != 0 {
		t.Fatalf("cat /proc/net/dev: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	lines := strings.Split(res.Stdout, "\n")
	for _, line := range lines[min(2, len(lines)):] {
		name, _, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); ok && name != "lo" {
			t.Errorf("the backend declares no network, but commands see interface %q", name)
		}
	}
}
