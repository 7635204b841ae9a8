//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// The steps of a command's run, without a container: how the wait ends
// and how an ending becomes a result.

func stepWorkspace() *Workspace {
	return &Workspace{b: &Backend{log: slog.New(slog.DiscardHandler)}, closing: make(chan struct{})}
}

func TestAwaitREST(t *testing.T) {
	t.Parallel()
	w := stepWorkspace()
	done := make(chan error, 1)
	done <- nil
	if why, _ := w.awaitREST(t.Context(), done, time.Minute); why != stopExited {
		t.Errorf("stream ended: %v, want stopExited", why)
	}
	done <- errors.New("reset")
	if why, err := w.awaitREST(t.Context(), done, time.Minute); why != stopBroken || err == nil {
		t.Errorf("stream broke: %v %v, want stopBroken and the error", why, err)
	}
	if why, _ := w.awaitREST(t.Context(), make(chan error), time.Millisecond); why != stopTimeout {
		t.Errorf("timeout: %v, want stopTimeout", why)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if why, _ := w.awaitREST(ctx, make(chan error), time.Minute); why != stopCancel {
		t.Errorf("cancelled: %v, want stopCancel", why)
	}
	dctx, dcancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer dcancel()
	if why, _ := w.awaitREST(dctx, make(chan error), time.Minute); why != stopTimeout {
		t.Errorf("caller's deadline: %v, want stopTimeout", why)
	}
	close(w.closing)
	if why, _ := w.awaitREST(t.Context(), make(chan error), time.Minute); why != stopClosed {
		t.Errorf("closing: %v, want stopClosed", why)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	w := stepWorkspace()
	r := execRun{op: "exec", shown: []string{"x"}, quiet: true}
	cases := []struct {
		name            string
		why             stopReason
		code, killSig   int
		exit, signal    int
		timedOut        bool
		wantErr         error
		wantCancelled   bool
		wantUnavailable bool
	}{
		{name: "exit 3", why: stopExited, code: 3, exit: 3},
		{name: "killed by SIGTERM", why: stopExited, code: 143, exit: 143, signal: 15},
		{name: "timeout, root ended by TERM", why: stopTimeout, code: 143, killSig: 9, exit: 124, signal: 15, timedOut: true},
		{name: "timeout, code unknown", why: stopTimeout, code: -1, killSig: 9, exit: 124, signal: 9, timedOut: true},
		{name: "cancel", why: stopCancel, code: -1, killSig: 15, exit: -1, signal: 15, wantCancelled: true},
		{name: "closed", why: stopClosed, code: -1, killSig: 15, exit: -1, signal: 15, wantUnavailable: true},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancel(t.Context())
		if c.wantCancelled {
			cancel()
		}
		var res backend.ExecResult
		err := w.classify(ctx, nil, r, &res, c.why, c.code, c.killSig)
		cancel()
		if res.ExitCode != c.exit || res.Signal != c.signal || res.TimedOut != c.timedOut {
			t.Errorf("%s: exit %d signal %d timed_out %v, want %d %d %v", c.name, res.ExitCode, res.Signal, res.TimedOut, c.exit, c.signal, c.timedOut)
		}
		switch {
		case c.wantCancelled && !errors.Is(err, context.Canceled),
			c.wantUnavailable && !errors.Is(err, backend.ErrUnavailable),
			!c.wantCancelled && !c.wantUnavailable && err != nil:
			t.Errorf("%s: err %v", c.name, err)
		}
	}
}
