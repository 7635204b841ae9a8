//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"io"
	"os/exec"
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
// done more directly, in the same container:
//
//	wai       Shell.Execute: limits, cwd, wrapper shell, marker, events
//	rest      bare REST: exec create, start attached, inspect
//	bindings  the bindings' ExecStartAndAttach on a fresh connection
//	cli       `podman exec` (a process per exec; local service only)
func BenchmarkExecTrue(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	w := openTest(b, be, false)
	st, err := w.ensure(bg)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wai", func(b *testing.B) {
		for b.Loop() {
			res, err := w.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("rest", func(b *testing.B) {
		for b.Loop() {
			id, err := be.execCreate(bg, st.id, []string{"true"}, nil, ContainerWorkspace, false)
			if err != nil {
				b.Fatal(err)
			}
			att, err := be.svc.startAttached(bg, id, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := att.copyOut(io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
			att.close()
			if code, _ := be.execExit(bg, id); code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
	})
	b.Run("bindings", func(b *testing.B) {
		for b.Loop() {
			ctx, err := bindings.NewConnection(bg, be.cfg.URL)
			if err != nil {
				b.Fatal(err)
			}
			cfg := new(handlers.ExecCreateConfig)
			cfg.ExecOptions = dockerContainer.ExecOptions{Cmd: []string{"true"}, AttachStdout: true, AttachStderr: true}
			id, err := containers.ExecCreate(ctx, st.id, cfg)
			if err != nil {
				b.Fatal(err)
			}
			var out bytes.Buffer
			var wr io.Writer = &out
			if err := containers.ExecStartAndAttach(ctx, id, new(containers.ExecStartAndAttachOptions).
				WithOutputStream(wr).WithErrorStream(wr).WithAttachOutput(true).WithAttachError(true)); err != nil {
				b.Fatal(err)
			}
			if _, err := containers.ExecInspect(ctx, id, nil); err != nil {
				b.Fatal(err)
			}
			c, _ := bindings.GetClient(ctx)
			c.Client.CloseIdleConnections()
		}
	})
	b.Run("cli", func(b *testing.B) {
		podman, err := exec.LookPath("podman")
		if err != nil {
			b.Skip("podman is not on PATH")
		}
		for b.Loop() {
			if out, err := exec.Command(podman, "--url", be.cfg.URL, "exec", w.ContainerName(), "true").CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

// BenchmarkNewSession: Open to the first command's result, with the image
// present (create, start, health check, exec). Close is not timed.
func BenchmarkNewSession(b *testing.B) {
	be := newTestBackend(b, backend.Limits{}, nil)
	for b.Loop() {
		ws, err := be.Open(bg, backend.WorkspaceSpec{Session: session("bench")})
		if err != nil {
			b.Fatal(err)
		}
		if res, err := ws.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		b.StopTimer()
		if err := ws.Close(bg); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
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
