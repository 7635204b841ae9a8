//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// awaitREST waits for the output stream's end (done), the timeout, the
// caller or the workspace closing.
func (w *Workspace) awaitREST(ctx context.Context, done chan error, timeout time.Duration) (stopReason, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return stopBroken, err
		}
		return stopExited, nil
	case <-timer.C:
		return stopTimeout, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return stopTimeout, nil
		}
		return stopCancel, nil
	case <-w.closing:
		return stopClosed, nil
	}
}

// classify completes res for a command that ended with code (-1 unknown)
// for reason why, killSignal being the last signal its tree got, and
// returns the error the caller gets: none for an exit or a timeout, the
// caller's for a cancel, ErrUnavailable for a closed workspace.
func (w *Workspace) classify(ctx context.Context, st *ctrState, r execRun, res *backend.ExecResult, why stopReason, code, killSignal int) error {
	res.ExitCode = code
	if code > 128 && code <= 128+64 {
		res.Signal = code - 128
	}
	switch why {
	case stopTimeout:
		res.TimedOut, res.ExitCode = true, backend.TimeoutExitCode
		if res.Signal == 0 {
			res.Signal = killSignal
		}
	case stopCancel, stopClosed:
		if res.Signal == 0 {
			res.Signal = killSignal
		}
	case stopExited:
		if code == 137 {
			w.checkOOM(st, res)
		}
	}
	if !r.quiet {
		w.log(r, *res, ctx)
	}
	switch why {
	case stopCancel:
		return fmt.Errorf("%s: %s stopped: %w", r.op, r.shown[0], ctx.Err())
	case stopClosed:
		return backend.Errorf(backend.ErrUnavailable, r.op, r.shown[0], "the workspace was closed while the command ran; it was stopped")
	}
	return nil
}

// streamWriter feeds one stream of a Podman exec into a sink.
type streamWriter struct {
	sink   *outputSink
	stream backend.Stream
}

func (s streamWriter) Write(p []byte) (int, error) {
	s.sink.write(s.stream, p)
	return len(p), nil
}
