//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"fmt"
	"sync"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// outputSink is where one command's output goes: the capped buffers of
// its result and the caller's live-output callback. The host applies the
// caps here, whatever the agent sends.
type outputSink struct {
	mu      sync.Mutex
	stdout  *backend.OutputBuffer // nil when the output is discarded
	stderr  *backend.OutputBuffer
	live    backend.OutputFunc
	stopped bool // the call returned: live must not be called again
}

func newOutputSink(max int, discard bool, live backend.OutputFunc) *outputSink {
	s := &outputSink{live: live}
	if !discard {
		s.stdout, s.stderr = backend.NewOutputBuffer(max), backend.NewOutputBuffer(max)
	}
	return s
}

func (s *outputSink) write(stream backend.Stream, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.stdout == nil {
		return
	}
	if stream == backend.Stdout {
		_, _ = s.stdout.Write(p)
	} else {
		_, _ = s.stderr.Write(p)
	}
	if s.live != nil {
		s.live(stream, p)
	}
}

// stop ends the live output; a callback running now finishes first.
func (s *outputSink) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// result fills res's output fields.
func (s *outputSink) result(res *backend.ExecResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stdout == nil {
		return
	}
	res.Stdout, res.Stderr = s.stdout.String(), s.stderr.String()
	res.Truncated = s.stdout.Truncated() || s.stderr.Truncated()
}

// agentCall is one command running through the agent.
type agentCall struct {
	id   uint32
	sink *outputSink

	mu      sync.Mutex
	started *agentproto.Started // nil until the agent says so
	exit    agentproto.Exit
	err     error
	done    chan struct{} // closed by finish
	ended   bool
}

func (c *agentCall) output(t agentproto.Type, p []byte) error {
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended {
		return fmt.Errorf("%w: output after the command's exit", agentproto.ErrMalformed)
	}
	stream := backend.Stdout
	if t == agentproto.TypeStderr {
		stream = backend.Stderr
	}
	c.sink.write(stream, p)
	return nil
}

func (c *agentCall) setStarted(s agentproto.Started) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started != nil || s.PID <= 1 {
		return fmt.Errorf("%w: started frame %d for pid %d", agentproto.ErrMalformed, c.id, s.PID)
	}
	c.started = &s
	return nil
}

// root is the command's process as the agent named it, for a kill from
// outside; zero when unknown.
func (c *agentCall) root() execRoot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started == nil {
		return execRoot{}
	}
	return execRoot{pid: uint64(c.started.PID), start: c.started.Start}
}

func (c *agentCall) finish(e agentproto.Exit, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended, c.exit, c.err = true, e, err
	close(c.done)
}
