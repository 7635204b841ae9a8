package host

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Soft timeouts: a command of a tool with [soft_timeouts.TOOL] runs under
// a backend timeout of the hard cap, and the kernel stops it at the soft
// deadline unless a person (the session's Approver, when it is also an
// Extender) or the config's unattended rule extends it. The stop is a
// deadline on the context the backend runs the command under, so the
// backend ends it as a timeout and keeps its partial output; the hard cap
// is the backend's own timer, which nothing extends.

// SoftTimeout is one tool's [soft_timeouts.TOOL] table.
type SoftTimeout struct {
	// After is the soft timeout. A command's own timeout (the model's
	// parameter, or the tool's default) can only shorten it.
	After time.Duration
	// ExtendBy is each extension (0 means After).
	ExtendBy time.Duration
	// HardCap stops the command however often it was extended; only
	// the config sets it, and it must lie within limits.max_timeout.
	HardCap time.Duration
	// Unattended is what happens at the soft timeout when nobody can be
	// asked (a client without elicitation, the CLI): SoftStop (the
	// default) or SoftAutoExtend (extend up to HardCap).
	Unattended string
}

// What a soft timeout does when nobody can be asked.
const (
	SoftStop       = "stop"
	SoftAutoExtend = "auto_extend"
)

// checkSoftTimeouts checks [soft_timeouts.TOOL].
func checkSoftTimeouts(c Config) (errs []error) {
	for tool, st := range c.SoftTimeouts {
		switch {
		case st.After <= 0:
			errs = append(errs, c.invalid("soft_timeouts.%s.after must be positive, got %s", tool, st.After))
		case st.HardCap < st.After:
			errs = append(errs, c.invalid("soft_timeouts.%s.hard_cap (%s) must be at least after (%s)", tool, st.HardCap, st.After))
		case st.HardCap > c.Limits.MaxTimeout:
			errs = append(errs, c.invalid("soft_timeouts.%s.hard_cap (%s) must not exceed limits.max_timeout (%s)", tool, st.HardCap, c.Limits.MaxTimeout))
		case st.ExtendBy < 0:
			errs = append(errs, c.invalid("soft_timeouts.%s.extend_by must not be negative, got %s", tool, st.ExtendBy))
		case st.Unattended != "" && st.Unattended != SoftStop && st.Unattended != SoftAutoExtend:
			errs = append(errs, c.invalid("soft_timeouts.%s.unattended must be %q or %q, got %q", tool, SoftStop, SoftAutoExtend, st.Unattended))
		}
	}
	return errs
}

// softCallMargin is how much longer than its commands' hard cap a call
// with a soft timeout may take: the plugin still renders the result.
const softCallMargin = 5 * time.Second

// Extender is an optional ability of an Approver: asking a person whether
// a command that passed its soft timeout may run longer.
type Extender interface {
	// Extend blocks until the person answers or ctx ends (the command
	// finished, or the call was cancelled). An error means no answer;
	// the config's unattended rule then decides.
	Extend(ctx context.Context, req ExtendRequest) (bool, error)
}

// ExtendRequest is what a person is asked at a soft timeout.
type ExtendRequest struct {
	Tool    string
	Command string        // the command, as the person would write it
	Ran     time.Duration // how long it has run
	By      time.Duration // the extension on offer
	Left    time.Duration // until the hard cap stops it anyway
	Session string
}

// softCall is a tool call's soft-timeout settings and what happened.
type softCall struct {
	cfg   SoftTimeout
	mu    sync.Mutex
	notes []string
}

type softKey struct{}

func withSoftCall(ctx context.Context, cfg SoftTimeout) (context.Context, *softCall) {
	sc := &softCall{cfg: cfg}
	return context.WithValue(ctx, softKey{}, sc), sc
}

func (sc *softCall) note(s string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.notes = append(sc.notes, s)
}

// appendSummary ends a call's message with what its soft timeouts did.
func (sc *softCall) appendSummary(msg string) string {
	if sc == nil {
		return msg
	}
	if note := sc.summary(); note != "" {
		return strings.TrimRight(msg, "\n") + "\n\n" + note
	}
	return msg
}

// summary is the line the call's result ends with, "" if nothing happened.
func (sc *softCall) summary() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.notes) == 0 {
		return ""
	}
	return "[wai: soft timeout: " + strings.Join(sc.notes, "; ") + "]"
}

// softPlan is one command's soft deadline under its hard cap.
type softPlan struct {
	s       *Session
	call    *softCall
	soft    time.Duration
	command string
}

// softTimeout returns the timeout to run a command with and its plan:
// with a soft timeout for the call's tool, the hard cap, and the soft
// deadline (the config's, shortened by the command's own timeout); else
// the requested timeout and nil.
func (s *Session) softTimeout(ctx context.Context, requested time.Duration, command string) (time.Duration, *softPlan) {
	sc, _ := ctx.Value(softKey{}).(*softCall)
	if sc == nil {
		return requested, nil
	}
	own, err := s.k.cfg.Limits.Timeout(requested)
	if err != nil {
		return requested, nil // the limits refuse the request with their message
	}
	soft := min(sc.cfg.After, own)
	if soft >= sc.cfg.HardCap {
		return sc.cfg.HardCap, nil
	}
	if len(command) > 200 {
		command = command[:200] + "…"
	}
	return sc.cfg.HardCap, &softPlan{s: s, call: sc, soft: soft, command: command}
}

// start returns the context to run the command under, stopped at the
// soft deadline unless extended, and the function to call when the
// command returned.
func (p *softPlan) start(ctx context.Context) (context.Context, func()) {
	if p == nil {
		return ctx, func() {}
	}
	c := &softCtx{Context: ctx, done: make(chan struct{})}
	askCtx, stopAsking := context.WithCancel(ctx)
	finished := make(chan struct{})
	go p.watch(askCtx, c, finished)
	return c, func() { stopAsking(); close(finished) }
}

// watch stops c at the soft deadline unless extended, and passes on the
// parent's end.
func (p *softPlan) watch(askCtx context.Context, c *softCtx, finished <-chan struct{}) {
	start := time.Now()
	hard := p.call.cfg.HardCap
	timer := time.NewTimer(p.soft)
	defer timer.Stop()
	soft := timer.C
	for {
		select {
		case <-finished:
			return
		case <-c.Context.Done():
			c.stop(c.Context.Err())
			return
		case <-soft:
			asked := time.Now()
			ran := asked.Sub(start)
			by, who := p.decide(askCtx, ran, hard-ran)
			if askCtx.Err() != nil {
				continue // finished or cancelled while asking
			}
			if by <= 0 {
				p.call.note(fmt.Sprintf("stopped after %s (%s); output so far is kept", ran.Round(time.Second/10), who))
				c.stop(context.DeadlineExceeded)
				return
			}
			p.call.note(fmt.Sprintf("extended by %s after %s (%s)", by.Round(time.Second/10), ran.Round(time.Second/10), who))
			if ran+by >= hard {
				soft = nil // the hard cap, the backend's own timer, ends it
				continue
			}
			timer.Reset(max(time.Until(asked.Add(by)), 0))
		}
	}
}

// decide settles one soft timeout: the person when one can be asked, else
// the config. by is the extension (0: stop); who says who decided.
func (p *softPlan) decide(ctx context.Context, ran, left time.Duration) (by time.Duration, who string) {
	s, cfg := p.s, p.call.cfg
	by = cfg.ExtendBy
	if by <= 0 {
		by = cfg.After
	}
	by = min(by, left)
	tool := callTool(ctx)
	defer func() {
		decision := "stop"
		if by > 0 {
			decision = "extend"
		}
		s.k.log.LogAttrs(ctx, slog.LevelInfo, "shell.soft_timeout", slog.String("session", s.spec.Session),
			slog.String("tool", tool), slog.String("command", p.command), slog.Duration("ran", ran),
			slog.String("decision", decision), slog.Duration("by", by), slog.String("decided_by", who))
	}()
	if ext, ok := s.approver.(Extender); ok {
		yes, err := ext.Extend(ctx, ExtendRequest{Tool: tool, Command: p.command, Ran: ran, By: by, Left: left, Session: s.spec.Session})
		if err == nil {
			if yes {
				return by, "the person chose to extend"
			}
			return 0, "the person chose to stop"
		}
		if ctx.Err() != nil {
			return 0, "the command ended while the person was asked"
		}
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "shell.soft_timeout_ask_failed", slog.String("session", s.spec.Session), slog.String("error", err.Error()))
	}
	if cfg.Unattended == SoftAutoExtend {
		return by, "nobody could be asked; the config's unattended = \"auto_extend\""
	}
	return 0, "nobody could be asked; the config's unattended = \"stop\""
}

// softCtx is its parent until stopped: then Done is closed and Err is the
// reason, context.DeadlineExceeded for a soft timeout, which backends end
// as a timed-out command with its output so far.
type softCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

func (c *softCtx) Done() <-chan struct{} { return c.done }

func (c *softCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *softCtx) stop(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	})
}

// Interface guards
var _ context.Context = (*softCtx)(nil)
