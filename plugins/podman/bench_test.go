//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
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
// done more directly, in the same container, the four run round-robin so
// that a busy machine slows them alike:
//
//	wai       Shell.Execute: limits, cwd, wrapper shell, marker, events
//	rest      bare REST: exec create, start attached, inspect
//	bindings  the bindings' ExecStartAndAttach on a fresh connection
//	cli       `podman exec` (a process per exec)
//
// It reports the median of each in ms, and wai-over-rest-ms, the median of
// the paired differences: what wai adds to a bare REST exec.
func BenchmarkExecTrue(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	w := openTest(b, be, false)
	st, err := w.ensure(bg)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.wait(bg); err != nil {
		b.Fatal(err)
	}
	podman, cliErr := exec.LookPath("podman")
	variants := []struct {
		name string
		run  func() error
	}{
		{"wai", func() error {
			res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
			}
			return err
		}},
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
	}
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
