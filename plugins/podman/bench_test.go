//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/api/handlers"
	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	dockerContainer "github.com/docker/docker/api/types/container"

	"github.com/wai-dev/wai/host/backend"
)

// BenchmarkExecTrue compares one `true` through wai with the same exec
// done more directly, in the same container, the variants run round-robin
// so that a busy machine slows them alike:
//
//	wai          Shell.Execute through the container's wai-agent
//	rest         bare REST: exec create, start attached, inspect
//	bindings     the bindings' ExecStartAndAttach on a fresh connection
//	cli          `podman exec` (a process per exec)
//	wai-noagent  Shell.Execute with agent = false (another container):
//	             limits, cwd, wrapper shell, marker, a Podman exec each
//
// It reports the median (p50) of each in ms, and wai-over-rest-ms, the
// median of the paired differences: what wai adds to a bare REST exec
// (negative: the agent saves the exec round trips).
func BenchmarkExecTrue(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	w := openTest(b, be, false)
	warm(b, w)
	st := w.cur.Load()
	noAgent := openTest(b, newTestBackend(b, backend.Limits{}, map[string]any{"agent": false}), false)
	warm(b, noAgent)
	podman, cliErr := exec.LookPath("podman")
	variants := []variant{
		{"wai", execTrue(w)},
		{"rest", func() error {
			id, err := be.execCreate(bg, st.id, []string{"true"}, nil, ContainerWorkspace, false)
			if err != nil {
				return err
			}
			att, err := be.svc.startAttached(bg, id, nil)
			if err != nil {
				return err
			}
			err = att.copyOut(io.Discard, io.Discard)
			att.close()
			if code, _, _ := be.execExit(bg, id); err == nil && code != 0 {
				err = fmt.Errorf("exit %d", code)
			}
			return err
		}},
		{"bindings", func() error {
			ctx, err := bindings.NewConnection(bg, be.cfg.URL)
			if err != nil {
				return err
			}
			c, _ := bindings.GetClient(ctx)
			defer c.Client.CloseIdleConnections()
			cfg := new(handlers.ExecCreateConfig)
			cfg.ExecOptions = dockerContainer.ExecOptions{Cmd: []string{"true"}, AttachStdout: true, AttachStderr: true}
			id, err := containers.ExecCreate(ctx, st.id, cfg)
			if err != nil {
				return err
			}
			var out bytes.Buffer
			var wr io.Writer = &out
			if err := containers.ExecStartAndAttach(ctx, id, new(containers.ExecStartAndAttachOptions).
				WithOutputStream(wr).WithErrorStream(wr).WithAttachOutput(true).WithAttachError(true)); err != nil {
				return err
			}
			_, err = containers.ExecInspect(ctx, id, nil)
			return err
		}},
		{"cli", func() error {
			if cliErr != nil {
				return nil
			}
			if out, err := exec.Command(podman, "--url", be.cfg.URL, "exec", w.ContainerName(), "true").CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}},
		{"wai-noagent", execTrue(noAgent)},
	}
	took := roundRobin(b, variants)
	diff := make([]time.Duration, len(took[0]))
	for i := range diff {
		diff[i] = took[0][i] - took[1][i]
	}
	for i, v := range variants {
		if v.name == "cli" && cliErr != nil {
			continue
		}
		b.ReportMetric(ms(median(took[i])), v.name+"-ms")
	}
	b.ReportMetric(ms(median(diff)), "wai-over-rest-ms")
}

// execTrue runs true in w, through the backend.
func execTrue(w *Workspace) func() error {
	return func() error {
		res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		return err
	}
}

// variant is one way of doing what a benchmark compares.
type variant struct {
	name string
	run  func() error
}

// roundRobin runs the variants in turn, each b.Loop iteration, and returns
// each one's durations: alternating spreads a busy moment of the machine
// over all of them.
func roundRobin(b *testing.B, variants []variant) [][]time.Duration {
	b.Helper()
	took := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			t0 := time.Now()
			if err := v.run(); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			took[i] = append(took[i], time.Since(t0))
		}
	}
	return took
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkNewSession: Open to the first command's result, with the image
// present (create, start, health check, exec). Close is not timed.
func BenchmarkNewSession(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	var took []time.Duration
	for b.Loop() {
		t0 := time.Now()
		ws, err := be.Open(bg, backend.WorkspaceSpec{Session: session("bench")})
		if err != nil {
			b.Fatal(err)
		}
		if res, err := ws.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		took = append(took, time.Since(t0))
		b.StopTimer()
		if err := ws.Close(bg); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(ms(median(took)), "median-ms")
}

// BenchmarkConcurrentSessions: four sessions, one goroutine each, running
// `true` as fast as they can; reports execs per second in all.
func BenchmarkConcurrentSessions(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	const n = 4
	ws := make([]*Workspace, n)
	for i := range ws {
		ws[i] = openTest(b, be, false)
		if _, err := ws[i].ensure(bg); err != nil {
			b.Fatal(err)
		}
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
					b.Errorf("%v %+v", err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "execs/s")
}

// BenchmarkExecTrueAgent times `true` through Shell.Execute and the
// agent alone, back to back: in BenchmarkExecTrue's round robin each wai
// exec follows a Podman exec or CLI run whose cleanup still loads the
// service and conmon, which the agent's frames pass through. Run both in
// one `go test -bench` for the anchors.
func BenchmarkExecTrueAgent(b *testing.B) {
	w := openTest(b, newTestBackend(b, backend.Limits{}, nil), false)
	warm(b, w)
	var took []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*9/10]), "p90-ms")
}

// warm starts w's container (and agent) and waits for its health check.
func warm(b *testing.B, w *Workspace) {
	b.Helper()
	if res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
		b.Fatalf("warm-up: %v %+v", err, res)
	}
}

// BenchmarkOutputGigabyte pushes 1 GiB of output through the agent per
// iteration and reports wai's resident memory growth (peak RSS over the
// start) against the caps (stdout and stderr, each Limits.MaxOutputBytes):
// the output is streamed and capped, never held. Run it with -benchtime 1x.
func BenchmarkOutputGigabyte(b *testing.B) {
	for _, max := range []int{backend.DefaultLimits().MaxOutputBytes, 4 << 20} {
		b.Run(fmt.Sprintf("cap=%dKiB", max>>10), func(b *testing.B) { outputGigabyte(b, max) })
	}
}

func outputGigabyte(b *testing.B, maxOutput int) {
	l := backend.DefaultLimits()
	l.MaxOutputBytes = maxOutput
	be := newTestBackend(b, l, nil)
	w := openTest(b, be, false)
	warm(b, w)
	caps := 2 * be.limits.MaxOutputBytes
	runtime.GC()
	base := rssBytes(b, "VmRSS")
	resetPeak()
	var streamed int64
	start := time.Now()
	for b.Loop() {
		res, err := w.Shell().Execute(bg, backend.ExecRequest{Shell: "head -c 1073741824 /dev/zero", Timeout: 10 * time.Minute,
			Output: func(_ backend.Stream, p []byte) { streamed += int64(len(p)) }})
		if err != nil || res.ExitCode != 0 || !res.Truncated {
			b.Fatalf("%v exit %d truncated %v", err, res.ExitCode, res.Truncated)
		}
	}
	elapsed := time.Since(start)
	growth := rssBytes(b, "VmHWM") - base
	b.ReportMetric(float64(growth)/(1<<20), "rss-growth-MiB")
	b.ReportMetric(float64(caps)/(1<<20), "caps-MiB")
	b.ReportMetric(float64(streamed)/(1<<20)/elapsed.Seconds(), "MiB/s")
	if want := int64(b.N) << 30; streamed != want {
		b.Errorf("the live output saw %d bytes, want %d", streamed, want)
	}
	// The goal is caps + 1 MiB. What this checks is the bound that holds
	// by construction: at the end the capped buffers and the result's
	// strings, built from them, are both alive, so up to twice the caps;
	// anything past that would be output held while it streams.
	if growth > 2*int64(caps)+1<<20 {
		b.Errorf("resident memory grew %d bytes, over twice the caps (%d) + 1 MiB: output is being held", growth, caps)
	}
}

// rssBytes reads a VmRSS-style field of /proc/self/status.
func rssBytes(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeak resets VmHWM to the current RSS (clear_refs 5).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
