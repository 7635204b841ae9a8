package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// progress reports, every ProgressInterval while a call runs, how long it
// has been running, the backend's step under way ("pulling image …",
// "starting container …") and the latest lines its commands printed since
// the previous report, to a client that sent a progress token. A step that
// begins is reported at once, so one shorter than the interval is still
// seen; output waits for the next tick, which is the rate limit, and is
// capped (outputTail). Without a token nothing is sent and nothing is
// captured. It returns the context the call runs under, which carries the
// backend's reports and the commands' live output here, and the function
// that stops reporting.
//
// also, when not nil, receives the backend's reports too.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, also backend.ProgressFunc) (context.Context, func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		if also != nil {
			ctx = backend.WithProgress(ctx, also)
		}
		return ctx, func() {}
	}
	st := &stages{kick: make(chan struct{}, 1), also: also}
	out := newOutputTail()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(s.opts.ProgressInterval)
		defer tick.Stop()
		var last time.Duration
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-st.kick:
			}
			el := time.Since(start)
			if el <= last {
				continue // progress must increase from one notification to the next
			}
			last = el
			msg := fmt.Sprintf("%s running for %s", req.Params.Name, el.Round(100*time.Millisecond))
			if cur := st.current(); cur != "" {
				msg += ": " + cur
			}
			if lines := out.take(); lines != "" {
				msg += "\n" + lines
			}
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      el.Seconds(),
				Message:       msg,
			})
			if err != nil {
				s.log.Debug("mcp.progress", "err", err)
			}
		}
	}()
	callCtx := host.WithLiveOutput(backend.WithProgress(ctx, st.report), out.write)
	return callCtx, func() { close(done); <-finished }
}

// stages are a call's backend steps under way, newest last.
type stages struct {
	mu   sync.Mutex
	list []string
	kick chan struct{}        // a step began: notify now rather than at the next tick
	also backend.ProgressFunc // the reporter the call had already, if any
}

// report is the call's backend.ProgressFunc. It never blocks: the
// notification is sent by the progress goroutine.
func (s *stages) report(p backend.Progress) {
	if s.also != nil {
		s.also(p)
	}
	s.mu.Lock()
	if p.Done {
		for i := len(s.list) - 1; i >= 0; i-- {
			if s.list[i] == p.Stage {
				s.list = append(s.list[:i], s.list[i+1:]...)
				break
			}
		}
	} else {
		s.list = append(s.list, p.Stage)
	}
	s.mu.Unlock()
	if !p.Done {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

func (s *stages) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 {
		return ""
	}
	return s.list[len(s.list)-1]
}

// Interface guards
var _ backend.ProgressFunc = (&stages{}).report
