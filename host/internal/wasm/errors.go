package wasm

import (
	"errors"
	"fmt"

	"github.com/wai-dev/wai/host/backend"
)

var (
	// ErrTrap: guest code trapped, panicked or exited. The instance that
	// did it has been thrown away; the plugin keeps serving with others.
	ErrTrap = errors.New("plugin trapped")
	// ErrDeadline: the call ran past its deadline (or its context was
	// cancelled) and was interrupted; the instance has been thrown away.
	// The error also matches the context's own error.
	ErrDeadline = errors.New("plugin call deadline exceeded")
)

// Wire error kinds (docs/ABI.md "Errors").
const (
	wireInvalid     = "invalid"
	wirePermission  = "permission"
	wireUnavailable = "unavailable"
	wireNotFound    = "not_found"
	wireExists      = "exists"
	wireInternal    = "internal"
)

// kindFromWire maps a wire kind to a backend kind; internal (and anything
// unknown) maps to nil, as backend.KindOf reports internal errors.
func kindFromWire(k string) error {
	switch k {
	case wireInvalid:
		return backend.ErrInvalid
	case wirePermission:
		return backend.ErrPermission
	case wireUnavailable:
		return backend.ErrUnavailable
	case wireNotFound:
		return backend.ErrNotFound
	case wireExists:
		return backend.ErrExist
	}
	return nil
}

// kindToWire maps an error to its wire kind.
func kindToWire(err error) string {
	switch backend.KindOf(err) {
	case backend.ErrInvalid:
		return wireInvalid
	case backend.ErrPermission:
		return wirePermission
	case backend.ErrUnavailable:
		return wireUnavailable
	case backend.ErrNotFound:
		return wireNotFound
	case backend.ErrExist:
		return wireExists
	}
	return wireInternal
}

// Error is an error out of Load, CallTool or Check. Kind is a backend kind
// (ErrInvalid, ErrPermission, ...) or nil for an internal error; Cause is
// ErrTrap, ErrDeadline, a context error or nil. errors.Is sees both.
type Error struct {
	Plugin string // the plugin's name
	Op     string // "load", "describe", "call <tool>", "check"
	Kind   error
	Cause  error
	Msg    string
	// Guest is set when the plugin itself reported the error (an
	// {"error":...} answer) rather than the runtime.
	Guest bool
}

func (e *Error) Error() string {
	s := "plugin " + e.Plugin
	if e.Op != "" {
		s += ": " + e.Op
	}
	s += ": " + e.Msg
	if e.Cause != nil && !errors.Is(e.Cause, ErrTrap) && !errors.Is(e.Cause, ErrDeadline) {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap exposes the kind and the cause.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

func errorf(plugin, op string, kind error, format string, args ...any) *Error {
	return &Error{Plugin: plugin, Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// deadlineError reports an interrupted call; it matches ErrDeadline and
// the context's error (context.DeadlineExceeded or context.Canceled).
type deadlineError struct{ ctxErr error }

func (d deadlineError) Error() string   { return "interrupted: " + d.ctxErr.Error() }
func (d deadlineError) Unwrap() []error { return []error{ErrDeadline, d.ctxErr} }

// Interface guards
var (
	_ error = (*Error)(nil)
	_ error = deadlineError{}
)
