//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// wai exec on podman prints output as the command writes it: the command
// prints a line and waits for a gate file the test creates (in the
// workspace, from the host side) only after reading that line from wai's
// stdout. Output held to the end would never let it finish.
func TestExecPodmanPrintsOutputAsItComes(t *testing.T) {
	t.Parallel()
	state := plugbuild.StateDir(t)
	m := marker(t)
	config := filepath.Join(t.TempDir(), "wai.toml")
	toml := fmt.Sprintf("backend = \"podman\"\nstate_dir = %q\n\n[backends.podman]\nimage = %q\nname_prefix = %q\n",
		state, podmanImage(), "wai-live-"+m[len("wai-test-"):][:8])
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	defer pr.Close() // a failed check never leaves wai blocked on a write
	var stderr strings.Builder
	done := make(chan int, 1)
	script := "echo line1; : > ready-" + m + "; while [ ! -e gate-" + m + " ]; do sleep 0.05; done; echo line2"
	go func() {
		code := run(ctx, []string{"exec", "--config", config, "-c", script}, strings.NewReader(""), pw, &stderr)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		code := <-done
		if code == exitExecFailed && strings.Contains(stderr.String(), "hint: the backend cannot serve") && os.Getenv("CI") != "true" {
			t.Skipf("no usable Podman service: %s", stderr.String())
		}
		t.Fatalf("no output; exit %d, stderr %s", code, stderr.String())
	}
	if lines.Text() != "line1" {
		t.Fatalf("first line %q", lines.Text())
	}
	// The ready file is in the workspace, bind-mounted from the state dir.
	var ready string
	for ready == "" && ctx.Err() == nil {
		_ = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "ready-"+m {
				ready = p
				return filepath.SkipAll
			}
			return nil
		})
		time.Sleep(50 * time.Millisecond)
	}
	if ready == "" {
		t.Fatal("the command's ready file never showed up in the workspace")
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(ready), "gate-"+m), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "line2" {
		t.Fatalf("after the gate: %q; stderr %s", lines.Text(), stderr.String())
	}
	for lines.Scan() {
		t.Errorf("more output: %q", lines.Text())
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d; stderr %s", code, stderr.String())
	}
}
