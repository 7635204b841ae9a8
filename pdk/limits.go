package pdk

import (
	"time"

	"github.com/wai-dev/wai/pdk/internal/imports"
)

// ShellLimits are the limits the host holds every command of the session
// to (the [limits] table of its configuration). A tool that lets the model
// choose a timeout or an output budget takes its default and its range
// from them, so that no call fails for a number the model never gave.
type ShellLimits struct {
	// DefaultTimeout applies to a command that names no timeout;
	// a timeout given must lie within MinTimeout–MaxTimeout.
	DefaultTimeout time.Duration
	MinTimeout     time.Duration
	MaxTimeout     time.Duration
	// MaxOutputBytes bounds each of stdout and stderr (head and tail
	// kept); MaxCommandBytes the argv joined with spaces, or the shell
	// string; MaxStdinBytes the standard input.
	MaxOutputBytes  int
	MaxCommandBytes int
	MaxStdinBytes   int
}

type wireLimits struct {
	DefaultTimeoutMS int64 `json:"default_timeout_ms"`
	MinTimeoutMS     int64 `json:"min_timeout_ms"`
	MaxTimeoutMS     int64 `json:"max_timeout_ms"`
	MaxOutputBytes   int   `json:"max_output_bytes"`
	MaxCommandBytes  int   `json:"max_command_bytes"`
	MaxStdinBytes    int   `json:"max_stdin_bytes"`
}

// Limits returns the limits commands are held to. It starts nothing: a
// tool may ask before it knows whether its command will be allowed.
func (ShellClient) Limits() (ShellLimits, error) {
	var w wireLimits
	if err := callHost("wai_shell_limits", imports.ShellLimits, struct{}{}, &w); err != nil {
		return ShellLimits{}, err
	}
	return ShellLimits{DefaultTimeout: time.Duration(w.DefaultTimeoutMS) * time.Millisecond,
		MinTimeout: time.Duration(w.MinTimeoutMS) * time.Millisecond, MaxTimeout: time.Duration(w.MaxTimeoutMS) * time.Millisecond,
		MaxOutputBytes: w.MaxOutputBytes, MaxCommandBytes: w.MaxCommandBytes, MaxStdinBytes: w.MaxStdinBytes}, nil
}
