package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wai exec prints a command's output as it comes: the command prints a
// line, then waits for a file the test creates only after reading that
// line from wai's stdout pipe. Were the output held to the end, the test
// would never see the line, never create the file, and time out.
func TestExecPrintsOutputAsItComes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	gate := filepath.Join(t.TempDir(), "go")
	script := "for i in 1 2; do echo line$i; echo err$i >&2; done; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo line3"
	cmd := e.command(t.Context(), "exec", "--config", e.config, "--session", "live", "-c", script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	for _, want := range []string{"line1", "line2"} {
		if !lines.Scan() {
			t.Fatalf("wai's stdout ended before %q; stderr: %s", want, stderr.String())
		}
		if lines.Text() != want {
			t.Fatalf("read %q from wai's stdout, want %q", lines.Text(), want)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "line3" {
		t.Fatalf("after the gate: %q, want line3; stderr: %s", lines.Text(), stderr.String())
	}
	if lines.Scan() {
		t.Errorf("more output after line3: %q (was the output printed twice?)", lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wai exec: %v; stderr: %s", err, stderr.String())
	}
	if _, rest := splitNotice(stderr.String()); rest != "err1\nerr2\n" {
		t.Errorf("stderr %q, want the command's own err1 and err2 once", rest)
	}
}
