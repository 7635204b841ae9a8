package wasm

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// wai_shell_limits (capability "shell") answers the limits every command
// of the call is held to. A tool that takes a timeout or an output budget
// from the model needs them to pick its default and clamp into the range
// the host accepts: a constant of its own would fail every call on a host
// configured narrower (max_timeout = "20s" against a default of 30 s).
// Unlike wai_shell_info it opens nothing: the limits are the kernel's, so
// asking before a command does not start a container the policy chain
// might then refuse the command for.

// LimitsEnv is an Env that knows the limits its session's commands are
// held to; the kernel's does.
type LimitsEnv interface {
	Limits() backend.Limits
}

func init() {
	handlers["wai_shell_limits"] = serveShellLimits
	hostCaps["wai_shell_limits"] = CapShell
}

type limitsResult struct {
	DefaultTimeoutMS int64 `json:"default_timeout_ms"`
	MinTimeoutMS     int64 `json:"min_timeout_ms"`
	MaxTimeoutMS     int64 `json:"max_timeout_ms"`
	MaxOutputBytes   int   `json:"max_output_bytes"`
	MaxCommandBytes  int   `json:"max_command_bytes"`
	MaxStdinBytes    int   `json:"max_stdin_bytes"`
}

func serveShellLimits(_ context.Context, env Env, _ *Plugin, b []byte) (any, error) {
	if err := decodeRequest("limits", b, &empty{}); err != nil {
		return nil, err
	}
	le, ok := env.(LimitsEnv)
	if !ok {
		return nil, backend.Errorf(backend.ErrUnavailable, "limits", "", "this host does not say what limits its commands are held to")
	}
	l := le.Limits()
	return limitsResult{DefaultTimeoutMS: ms(l.DefaultTimeout), MinTimeoutMS: ms(l.MinTimeout), MaxTimeoutMS: ms(l.MaxTimeout),
		MaxOutputBytes: l.MaxOutputBytes, MaxCommandBytes: l.MaxCommandBytes, MaxStdinBytes: l.MaxStdinBytes}, nil
}
