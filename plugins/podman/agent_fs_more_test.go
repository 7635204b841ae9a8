//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// within runs op and fails the test unless it returns within d.
func within(t *testing.T, d time.Duration, what string, op func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- op() }()
	select {
	case err := <-done:
		t.Logf("%s: %s (%v)", what, time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(d):
		t.Fatalf("%s: no answer after %s", what, d)
		return nil
	}
}

// TestAgentFSConfinedInContainer: what a command of the sandbox plants,
// as the sandbox user, stays inside /workspace for the agent's files:
// a symlink leading out is not followed, ".." is refused, a FIFO fails
// at once.
func TestAgentFSConfinedInContainer(t *testing.T) {
	t.Parallel()
	w := openAgentFS(t, backend.DefaultLimits(), nil)
	sh(t, w.Workspace, "cd /workspace && ln -s /etc/passwd passwd && ln -s ../../../../etc up && mkfifo pipe && "+
		"ln -s pipe pipelink && ln -s /dev/zero zero && echo plain > plain.txt")
	ctx, fs := t.Context(), w.FS()
	for _, p := range []string{"passwd", "up/passwd", "/etc/passwd", "zero"} {
		_, err := fs.Read(ctx, backend.ReadRequest{Path: p})
		if !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("Read(%s): %v, want ErrNotFound (resolved inside /workspace)", p, err)
		}
	}
	if _, err := fs.Read(ctx, backend.ReadRequest{Path: "../etc/passwd"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("Read(../etc/passwd): %v, want ErrInvalid", err)
	}
	for _, p := range []string{"pipe", "pipelink"} {
		err := within(t, 5*time.Second, "Read("+p+")", func() error { _, err := fs.Read(ctx, backend.ReadRequest{Path: p}); return err })
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("Read(%s): %v, want ErrInvalid", p, err)
		}
		err = within(t, 5*time.Second, "Write("+p+")", func() error {
			_, err := fs.Write(ctx, backend.WriteRequest{Path: p, Content: "x", Mode: backend.WriteAppend})
			return err
		})
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("Write(%s): %v, want ErrInvalid", p, err)
		}
	}
	// A write through the symlink to /etc/passwd is refused: the file
	// tools do not follow it out, and a copy inside would be a lie.
	_, err := fs.Write(ctx, backend.WriteRequest{Path: "passwd", Content: "inside\n", Mode: backend.WriteOverwrite})
	if !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "leads outside the workspace (to /etc/passwd)") {
		t.Errorf("Write through passwd -> /etc/passwd: %v, want ErrNotFound saying it leads outside", err)
	}
	if _, err := fs.Write(ctx, backend.WriteRequest{Path: "agent.txt", Content: "inside\n"}); err != nil {
		t.Fatal(err)
	}
	res := sh(t, w.Workspace, "test -e /workspace/etc && echo made-etc; grep -c '^root:' /etc/passwd")
	if res.Stdout != "1\n" {
		t.Errorf("after the refused write: %q, want no /workspace/etc and the container's /etc/passwd intact", res.Stdout)
	}
	// The agent's files are the command's: same owner, same content.
	if fi, err := fs.Stat(ctx, "plain.txt"); err != nil || fi.Kind != backend.KindFile || fi.Size != 6 {
		t.Errorf("Stat(plain.txt) = %+v, %v", fi, err)
	}
	res = sh(t, w.Workspace, "stat -c '%u %a' /workspace/agent.txt /workspace/plain.txt")
	if f := strings.Fields(res.Stdout); len(f) != 4 || f[0] != f[2] || f[1] != "644" {
		t.Errorf("owner and mode of the agent's file and the command's: %q, want the same owner, mode 644", res.Stdout)
	}
}

// TestAgentFSDeadlines: a grep over a tree holding a huge sparse file
// returns at its deadline; so does a call to an agent that stopped
// answering (SIGSTOP): the host keeps its own deadline, and an agent that
// does not answer the cancel is replaced.
func TestAgentFSDeadlines(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.DefaultLimits(), nil)
	b.slack = time.Second // the stopped agent is dropped after 1 s, not 5
	w := openAgentFSOn(t, b)
	sh(t, w.Workspace, "mkdir -p /workspace/tree/a /workspace/tree/b && cd /workspace/tree && "+
		"for i in $(seq 1 200); do echo line $i > a/$i.txt; done && "+
		"head -c 9000 /dev/zero | tr '\\0' 'x' > b/huge.txt && truncate -s 1T b/huge.txt")
	fs := w.FS()
	err := within(t, 5*time.Second, "Grep with a 1 s deadline", func() error {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := fs.Grep(ctx, backend.GrepRequest{Pattern: "needle", Path: "tree"})
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("Grep past its deadline: %v, want ErrUnavailable wrapping context.DeadlineExceeded", err)
	}
	st, conn := liveAgent(t, w.Workspace)
	stopped := signalAgentAfter(t, 0, w.Workspace, st, conn.pid, "STOP")
	stopped()
	err = within(t, 5*time.Second, "Stat with the agent stopped", func() error {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := fs.Stat(ctx, "tree")
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stat with the agent stopped: %v, want the host's deadline", err)
	}
	for start := time.Now(); conn.alive(); time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the stopped agent, which answered no cancel, is still in use after 30 s")
		}
	}
	if fi, err := fs.Stat(t.Context(), "tree"); err != nil || fi.Kind != backend.KindDir {
		t.Errorf("Stat after the agent was replaced: %+v, %v", fi, err)
	}
}

// TestAgentFSAgentDies: the agent killed under a call fails it with
// ErrUnavailable at once, and the next call starts a new agent.
func TestAgentFSAgentDies(t *testing.T) {
	t.Parallel()
	w := openAgentFS(t, backend.DefaultLimits(), nil)
	sh(t, w.Workspace, "head -c 9000 /dev/zero | tr '\\0' 'x' > /workspace/huge.txt && truncate -s 1T /workspace/huge.txt")
	st, conn := liveAgent(t, w.Workspace)
	killed := signalAgentAfter(t, 500*time.Millisecond, w.Workspace, st, conn.pid, "KILL")
	err := within(t, 30*time.Second, "Grep while the agent is killed", func() error {
		_, err := w.FS().Grep(t.Context(), backend.GrepRequest{Pattern: "needle"})
		return err
	})
	killed()
	if !errors.Is(err, backend.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Grep under a killed agent: %v, want ErrUnavailable", err)
	}
	if _, err := w.FS().Stat(t.Context(), "huge.txt"); err != nil {
		t.Fatalf("Stat after the agent died: %v", err)
	}
	if _, conn2 := liveAgent(t, w.Workspace); conn2 == conn {
		t.Errorf("the dead agent is still in use")
	}
}

// TestAgentFSConcurrent: calls share the connection with each other and
// with commands (run with -race).
func TestAgentFSConcurrent(t *testing.T) {
	t.Parallel()
	w := openAgentFS(t, backend.DefaultLimits(), nil)
	fs, ctx := w.FS(), t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 6 {
		wg.Go(func() {
			for j := range 10 {
				p := fmt.Sprintf("c%d/f%d.txt", i, j)
				body := strings.Repeat(fmt.Sprintf("%d-%d ", i, j), 5000) // answers of several frames
				if _, err := fs.Write(ctx, backend.WriteRequest{Path: p, Content: body, Mode: backend.WriteOverwrite}); err != nil {
					errs <- err
					return
				}
				res, err := fs.Read(ctx, backend.ReadRequest{Path: p})
				if err != nil || len(res.Lines) != 1 || res.Lines[0] != body {
					errs <- fmt.Errorf("read back %s: %v (%d lines)", p, err, len(res.Lines))
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if res, err := w.Shell().Execute(ctx, backend.ExecRequest{Shell: "ls /workspace >/dev/null; echo ok"}); err != nil || res.Stdout != "ok\n" {
				errs <- fmt.Errorf("a command meanwhile: %v %q", err, res.Stdout)
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	res, err := fs.Glob(ctx, backend.GlobRequest{Pattern: "**/*.txt"})
	if err != nil || len(res.Paths) != 60 {
		t.Errorf("Glob after the writes: %d paths, %v; want 60", len(res.Paths), err)
	}
	// Latency of one call on a warm connection, for docs/AGENT.md.
	var took []time.Duration
	for range 50 {
		start := time.Now()
		if _, err := fs.Stat(ctx, "c0/f0.txt"); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("Stat through the agent: p50 %s, p90 %s", took[len(took)/2], took[len(took)*9/10])
}

// TestAgentFSUnavailable: without an agent, or with one too old to serve
// files, calls fail with ErrUnavailable saying what to do.
func TestAgentFSUnavailable(t *testing.T) {
	t.Parallel()
	w := openAgentFS(t, backend.DefaultLimits(), map[string]any{"agent": false})
	if _, err := w.FS().Stat(t.Context(), "."); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "turn the agent on") {
		t.Errorf("Stat without the agent: %v, want ErrUnavailable saying to turn it on", err)
	}
	w = openAgentFS(t, backend.DefaultLimits(), nil)
	_, conn := liveAgent(t, w.Workspace)
	conn.version = 1 // as an agent bind-mounted by an older wai answers
	if _, err := w.FS().Stat(t.Context(), "."); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "older wai") {
		t.Errorf("Stat through a version-1 agent: %v, want ErrUnavailable naming the old agent", err)
	}
}

// TestAgentFSCopyIn: a file streamed in through the agent arrives whole,
// with its mode, owned as the sandbox's own files; an existing one is
// ErrExist.
func TestAgentFSCopyIn(t *testing.T) {
	t.Parallel()
	w := openAgentFS(t, backend.DefaultLimits(), nil)
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i*7 + i/4096)
	}
	sum := sha256.Sum256(data)
	cfs := w.FS().(backend.CopyInFS)
	n, err := cfs.CopyIn(t.Context(), "in/data.bin", bytes.NewReader(data), 0o755)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("CopyIn: %d bytes, %v", n, err)
	}
	res := sh(t, w.Workspace, "sha256sum /workspace/in/data.bin | cut -d' ' -f1; stat -c '%a %u' /workspace/in/data.bin; id -u")
	f := strings.Fields(res.Stdout)
	if len(f) != 4 || f[0] != hex.EncodeToString(sum[:]) || f[1] != "755" || f[2] != f[3] {
		t.Errorf("the copied file: %q, want sha256 %x, mode 755, the sandbox user's", res.Stdout, sum)
	}
	if _, err := cfs.CopyIn(t.Context(), "in/data.bin", strings.NewReader("x"), 0o644); !errors.Is(err, backend.ErrExist) {
		t.Errorf("CopyIn over an existing file: %v, want ErrExist", err)
	}
}
