//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// BenchmarkRemoteVsLocal compares, in the same run and round-robin so that
// a busy machine slows them alike, the same operations through the local
// socket and over ssh:// through the test sshd (same service, same
// machine: what is measured is the ssh transport):
//
//	exec  Shell.Execute of `true` in a running container
//	file  FS Write then Read of a 4 KiB file: on the local socket through
//	      a bind workspace (wai's own directory, no connection used) and a
//	      volume workspace (wai-agent in the container), over ssh:// on a
//	      volume workspace (ssh://'s default).
//
// Reports the median of each in ms.
func BenchmarkRemoteVsLocal(b *testing.B) {
	s := needSSHD(b)
	if !inHome(b, s.home()) {
		return
	}
	local := openTest(b, newTestBackend(b, backend.Limits{}, nil), false)
	localVol := openTest(b, newTestBackend(b, backend.Limits{}, volumeExtra), false)
	remote := openTest(b, newRemoteBackend(b, s, backend.Limits{}), false)
	content := string(make([]byte, 4096))
	fileRoundTrip := func(w *Workspace) func() error {
		return func() error {
			fs := w.FS()
			if _, err := fs.Write(bg, backend.WriteRequest{Path: "bench.txt", Content: content, Mode: backend.WriteOverwrite}); err != nil {
				return err
			}
			_, err := fs.Read(bg, backend.ReadRequest{Path: "bench.txt"})
			return err
		}
	}
	variants := []variant{
		{"local-exec", execTrue(local)}, {"ssh-exec", execTrue(remote)},
		{"local-file", fileRoundTrip(local)}, {"localvol-file", fileRoundTrip(localVol)}, {"ssh-file", fileRoundTrip(remote)},
	}
	for _, v := range variants { // start both containers, outside the timing
		if err := v.run(); err != nil {
			b.Fatalf("%s: %v", v.name, err)
		}
	}
	took := roundRobin(b, variants)
	for i, v := range variants {
		b.ReportMetric(ms(median(took[i])), v.name+"-ms")
	}
}

// BenchmarkRemoteNewSession: Open to the first command's result over the
// local socket (bind workspace) and over ssh:// (volume workspace: the
// volume is made at Open), alternately (image present; Close not
// timed). The ssh:// backend keeps its connection between sessions, as a
// long-running wai does; the first dial is outside the timing.
func BenchmarkRemoteNewSession(b *testing.B) {
	s := needSSHD(b)
	if !inHome(b, s.home()) {
		return
	}
	backends := []struct {
		name string
		be   *Backend
	}{
		{"local", newTestBackend(b, backend.Limits{}, nil)},
		{"ssh", newRemoteBackend(b, s, backend.Limits{})},
	}
	took := make([][]time.Duration, len(backends))
	for b.Loop() {
		for i, c := range backends {
			t0 := time.Now()
			ws, err := c.be.Open(bg, backend.WorkspaceSpec{Session: session("bench")})
			if err != nil {
				b.Fatal(err)
			}
			if res, err := ws.Shell().Execute(bg, backend.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
				b.Fatalf("%s: %v %+v", c.name, err, res)
			}
			took[i] = append(took[i], time.Since(t0))
			b.StopTimer()
			if err := ws.Close(bg); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	for i, c := range backends {
		b.ReportMetric(ms(median(took[i])), c.name+"-ms")
	}
}
