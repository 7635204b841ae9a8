package backend

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits bound every request. Backends check requests against them before
// running anything (ErrInvalid), and the host checks them again before a
// request reaches a backend, so neither side has to trust the other.
type Limits struct {
	DefaultTimeout  time.Duration // used when a request names none
	MinTimeout      time.Duration
	MaxTimeout      time.Duration
	MaxOutputBytes  int // per stream; head and tail are kept
	MaxCommandBytes int // argv joined with spaces, or the shell string
	MaxStdinBytes   int
	MaxScriptBytes  int
	MaxEnvVars      int
	MaxWriteChars   int // characters per Write, and per Edit replacement
	MaxResults      int // entries of List, Glob, Grep; lines of Read
	MaxReadBytes    int // bytes one Read returns
}

// DefaultLimits returns the limits of docs/ARCHITECTURE.md.
func DefaultLimits() Limits {
	return Limits{
		DefaultTimeout:  30 * time.Second,
		MinTimeout:      100 * time.Millisecond,
		MaxTimeout:      600 * time.Second,
		MaxOutputBytes:  32 << 10,
		MaxCommandBytes: 4096,
		MaxStdinBytes:   64 << 10,
		MaxScriptBytes:  64 << 10,
		MaxEnvVars:      256,
		MaxWriteChars:   48000,
		MaxResults:      2000,
		MaxReadBytes:    1 << 20,
	}
}

// Validate checks that the limits themselves make sense.
func (l Limits) Validate() error {
	bad := func(format string, args ...any) error {
		return Errorf(ErrInvalid, "limits", "", format, args...)
	}
	switch {
	case l.MinTimeout <= 0:
		return bad("min_timeout must be positive, got %s", l.MinTimeout)
	case l.MaxTimeout < l.MinTimeout:
		return bad("max_timeout (%s) must not be below min_timeout (%s)", l.MaxTimeout, l.MinTimeout)
	case l.DefaultTimeout < l.MinTimeout || l.DefaultTimeout > l.MaxTimeout:
		return bad("default_timeout (%s) must lie within %s–%s", l.DefaultTimeout, l.MinTimeout, l.MaxTimeout)
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"max_output_bytes", l.MaxOutputBytes}, {"max_command_bytes", l.MaxCommandBytes},
		{"max_stdin_bytes", l.MaxStdinBytes}, {"max_script_bytes", l.MaxScriptBytes},
		{"max_env_vars", l.MaxEnvVars}, {"max_write_chars", l.MaxWriteChars},
		{"max_results", l.MaxResults}, {"max_read_bytes", l.MaxReadBytes},
	} {
		if c.v <= 0 {
			return bad("%s must be positive, got %d", c.name, c.v)
		}
	}
	if l.MaxOutputBytes < 64 {
		return bad("max_output_bytes must be at least 64 to keep a head and a tail, got %d", l.MaxOutputBytes)
	}
	return nil
}

// Timeout returns the effective timeout for a requested one (0 = default),
// or ErrInvalid when it lies outside [MinTimeout, MaxTimeout].
func (l Limits) Timeout(requested time.Duration) (time.Duration, error) {
	if requested == 0 {
		return l.DefaultTimeout, nil
	}
	if requested < l.MinTimeout || requested > l.MaxTimeout {
		return 0, Errorf(ErrInvalid, "exec", "", "timeout %s is outside the allowed range %s–%s",
			requested, l.MinTimeout, l.MaxTimeout)
	}
	return requested, nil
}

// CheckExec validates an ExecRequest and returns its effective timeout.
func (l Limits) CheckExec(req ExecRequest) (time.Duration, error) {
	const op = "exec"
	switch {
	case len(req.Argv) == 0 && req.Shell == "":
		return 0, Errorf(ErrInvalid, op, "", "empty command: give argv or a shell string")
	case len(req.Argv) > 0 && req.Shell != "":
		return 0, Errorf(ErrInvalid, op, "", "give argv or a shell string, not both")
	case len(req.Argv) > 0 && req.Argv[0] == "":
		return 0, Errorf(ErrInvalid, op, "", "argv[0] is empty: name the program to run")
	}
	n := len(req.Shell)
	for i, a := range req.Argv {
		if i > 0 {
			n++
		}
		n += len(a)
		if strings.IndexByte(a, 0) >= 0 {
			return 0, Errorf(ErrInvalid, op, "", "argv[%d] contains a NUL byte", i)
		}
	}
	if strings.IndexByte(req.Shell, 0) >= 0 {
		return 0, Errorf(ErrInvalid, op, "", "the shell string contains a NUL byte")
	}
	if n > l.MaxCommandBytes {
		return 0, Errorf(ErrInvalid, op, "", "command is %d bytes, over the limit of %d", n, l.MaxCommandBytes)
	}
	if len(req.Stdin) > l.MaxStdinBytes {
		return 0, Errorf(ErrInvalid, op, "", "stdin is %d bytes, over the limit of %d: pass less, or write it to a file in the workspace and have the command read that", len(req.Stdin), l.MaxStdinBytes)
	}
	if err := l.checkCommon(op, req.Cwd, req.Env, req.EnvMode); err != nil {
		return 0, err
	}
	return l.Timeout(req.Timeout)
}

// CheckScript validates a ScriptRequest and returns its effective timeout.
func (l Limits) CheckScript(req ScriptRequest) (time.Duration, error) {
	const op = "exec.script"
	if req.Script == "" {
		return 0, Errorf(ErrInvalid, op, "", "empty script")
	}
	if len(req.Script) > l.MaxScriptBytes {
		return 0, Errorf(ErrInvalid, op, "", "script is %d bytes, over the limit of %d", len(req.Script), l.MaxScriptBytes)
	}
	if strings.IndexByte(req.Script, 0) >= 0 {
		return 0, Errorf(ErrInvalid, op, "", "the script contains a NUL byte")
	}
	if strings.ContainsAny(req.Interpreter, "\x00\n") || len(req.Interpreter) > l.MaxCommandBytes {
		return 0, Errorf(ErrInvalid, op, "", "invalid interpreter %q", req.Interpreter)
	}
	if err := l.checkCommon(op, req.Cwd, req.Env, req.EnvMode); err != nil {
		return 0, err
	}
	return l.Timeout(req.Timeout)
}

func (l Limits) checkCommon(op, cwd string, env map[string]string, mode EnvMode) error {
	if strings.IndexByte(cwd, 0) >= 0 {
		return Errorf(ErrInvalid, op, "", "cwd contains a NUL byte")
	}
	switch mode {
	case "", EnvExtend, EnvReplace:
	default:
		return Errorf(ErrInvalid, op, "", "env mode %q is neither %q nor %q", mode, EnvExtend, EnvReplace)
	}
	return l.CheckEnv(op, env)
}

// CheckEnv validates environment variables: at most MaxEnvVars, names
// [A-Za-z_][A-Za-z0-9_]*, values printable-or-space ASCII without NUL.
func (l Limits) CheckEnv(op string, env map[string]string) error {
	if len(env) > l.MaxEnvVars {
		return Errorf(ErrInvalid, op, "", "%d environment variables, over the limit of %d", len(env), l.MaxEnvVars)
	}
	for k, v := range env {
		if !ValidEnvName(k) {
			return Errorf(ErrInvalid, op, "", "environment variable name %q is not of the form [A-Za-z_][A-Za-z0-9_]*", k)
		}
		for i := 0; i < len(v); i++ {
			if v[i] == 0 || v[i] >= utf8.RuneSelf {
				return Errorf(ErrInvalid, op, "", "environment variable %s must be ASCII without NUL (byte %d is 0x%02x)", k, i, v[i])
			}
		}
	}
	return nil
}

// ValidEnvName reports whether s is an ASCII variable name.
func ValidEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// CheckWrite validates the size of content bound for Write or Edit.
func (l Limits) CheckWrite(op, path, content string) error {
	if n := utf8.RuneCountInString(content); n > l.MaxWriteChars {
		return Errorf(ErrInvalid, op, path, "content is %d characters, over the limit of %d", n, l.MaxWriteChars)
	}
	return nil
}

// ReadLimit returns the effective line limit of a read.
func (l Limits) ReadLimit(req ReadRequest) (int, error) {
	switch {
	case req.Offset < 0:
		return 0, Errorf(ErrInvalid, "fs.read", req.Path, "offset must not be negative, got %d", req.Offset)
	case req.Limit < 0 || req.Limit > l.MaxResults:
		return 0, Errorf(ErrInvalid, "fs.read", req.Path, "limit must lie within 0–%d lines, got %d", l.MaxResults, req.Limit)
	case req.Limit == 0:
		return l.MaxResults, nil
	}
	return req.Limit, nil
}

// String renders the limits for humans.
func (l Limits) String() string {
	return fmt.Sprintf("timeout %s (%s–%s), output %d B/stream, command %d B, stdin %d B, env %d vars, write %d chars, results %d",
		l.DefaultTimeout, l.MinTimeout, l.MaxTimeout, l.MaxOutputBytes, l.MaxCommandBytes, l.MaxStdinBytes,
		l.MaxEnvVars, l.MaxWriteChars, l.MaxResults)
}
