package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/wai-dev/wai/host/backend"
)

// The kernel's backends: opened by name on first use, each with its table
// of the configuration, and the workspaces sessions open on them.

// openWorkspace opens the session's workspace on the kernel's backend:
// the configured one, or the fallback when the configured one was
// unavailable when the kernel chose (see Info).
func (k *Kernel) openWorkspace(ctx context.Context, spec backend.WorkspaceSpec) (ws backend.Workspace, fellBack bool, err error) {
	r, err := k.resolve(ctx)
	if err != nil {
		return nil, false, err
	}
	ws, err = r.b.Open(ctx, spec)
	return ws, r.info.Fallback, err
}

// backend returns the named backend, opening it on first use. A failed
// open is not remembered, so a service that comes up later is found.
func (k *Kernel) backend(ctx context.Context, name string) (backend.Backend, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errKernelClosed()
	}
	if b, ok := k.backends[name]; ok {
		return b, nil
	}
	opts, err := k.backendOptions(name)
	if err != nil {
		return nil, err
	}
	b, err := backend.Open(ctx, name, opts)
	if err != nil {
		return nil, k.atConfigLine(name, err)
	}
	k.backends[name] = b
	return b, nil
}

// backendOptions are what the named backend is opened (or checked) with:
// its table of the configuration, as JSON, the limits and the state
// directory.
func (k *Kernel) backendOptions(name string) (backend.Options, error) {
	var raw json.RawMessage
	if t, ok := k.cfg.Backends[name]; ok {
		var err error
		if raw, err = json.Marshal(t); err != nil {
			return backend.Options{}, backend.Errorf(backend.ErrInvalid, "config", "", "[backends.%s] cannot be passed on as JSON: %v", name, err)
		}
	}
	return backend.Options{
		Config:   raw,
		Limits:   k.cfg.Limits,
		StateDir: k.stateDir,
		Logger:   k.log.With(slog.String("backend", name)),
	}, nil
}

// unknownBackendField matches the backend parsers' message for a key they
// do not know (backend.DecodeConfig).
var unknownBackendField = regexp.MustCompile(`unknown field "([^"]+)" in \[backends\.`)

// atConfigLine adds the file and line of the key a backend refused, which
// the backend, given its table as JSON, cannot know.
func (k *Kernel) atConfigLine(name string, err error) error {
	m := unknownBackendField.FindStringSubmatch(err.Error())
	if m == nil || !errors.Is(err, backend.ErrInvalid) {
		return err
	}
	if k.cfg.BackendKeyLine == nil {
		return err
	}
	if n := k.cfg.BackendKeyLine(name, m[1]); n > 0 {
		return fmt.Errorf("%w (%s, line %d)", err, k.cfg.Source, n)
	}
	return err
}
