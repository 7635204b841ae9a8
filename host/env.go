package host

import (
	"context"
	"log/slog"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// callEnv is what a tool plugin's host functions reach: the session's
// guarded capabilities, never the workspace itself.
type callEnv struct{ s *Session }

func (e callEnv) Shell() backend.Shell         { return e.s.shell }
func (e callEnv) FS() backend.Filesystem       { return e.s.fs }
func (e callEnv) Lifecycle() backend.Lifecycle { return e.s.lc }
func (e callEnv) Session() string              { return e.s.spec.Session }
func (e callEnv) Jobs() backend.JobRunner      { return e.s.jobs }

// Limits are the ones the guards hold every command of the session to.
func (e callEnv) Limits() backend.Limits { return e.s.k.cfg.Limits }

// Containers serves wai_containers: the same path as Session.Containers.
func (e callEnv) Containers(ctx context.Context, req []byte) (any, error) {
	r, err := DecodeContainerRequest(req)
	if err != nil {
		return nil, err
	}
	resp, err := e.s.Containers(ctx, r)
	if err != nil && resp.Preflight != nil {
		// A create that found containers not ready: the tool shows the
		// checks and their guidance rather than the bare error.
		resp.Notes = append(resp.Notes, err.Error())
		return resp, nil
	}
	return resp, err
}

// guardedLifecycle starts and stops a workspace's sandbox through the
// policy chain.
type guardedLifecycle struct{ s *Session }

func (g *guardedLifecycle) Start(ctx context.Context) (backend.LifecycleState, error) {
	return g.run(ctx, ActionLifecycleStart, backend.Lifecycle.Start)
}

func (g *guardedLifecycle) Stop(ctx context.Context) (backend.LifecycleState, error) {
	return g.run(ctx, ActionLifecycleStop, g.s.stopEndingJobs)
}

func (g *guardedLifecycle) State(ctx context.Context) (backend.LifecycleState, error) {
	return g.run(ctx, "", backend.Lifecycle.State)
}

func (g *guardedLifecycle) run(ctx context.Context, action string, f func(backend.Lifecycle, context.Context) (backend.LifecycleState, error)) (backend.LifecycleState, error) {
	s := g.s
	done, err := s.begin()
	if err != nil {
		return backend.LifecycleState{}, err
	}
	defer done()
	if action != "" {
		if err := s.check(ctx, CheckRequest{Action: action}); err != nil {
			return backend.LifecycleState{}, err
		}
	}
	ws, _, err := s.workspace(ctx)
	if err != nil {
		return backend.LifecycleState{}, err
	}
	lc, ok := ws.(backend.Lifecycle)
	if !ok {
		return backend.LifecycleState{}, backend.Errorf(backend.ErrUnavailable, "lifecycle", "", "this session's backend has no sandbox to start or stop (only container backends such as podman have one)")
	}
	st, err := f(lc, ctx)
	if action != "" {
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelWarn
		}
		s.k.log.LogAttrs(ctx, level, action, slog.String("session", s.spec.Session), slog.String("name", st.Name),
			slog.Bool("running", st.Running), slog.Any("error", err))
	}
	return st, err
}

// Interface guards
var (
	_ wasm.Env          = callEnv{}
	_ wasm.JobsEnv      = callEnv{}
	_ wasm.LimitsEnv    = callEnv{}
	_ backend.Lifecycle = (*guardedLifecycle)(nil)
)
