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

// wireCodePolicyFailed is the one error code of docs/ABI.md §5: a
// permission error whose policy could not judge (backend.ErrPolicyFailed).
const wireCodePolicyFailed = "policy_failed"

// codeFromWire maps a wire code to the cause it names, or nil. A code
// means something only with its kind: policy_failed on another kind is a
// guest's mistake, and would make a bad request read as a broken policy.
// Unknown codes are ignored, as a later ABI may add some.
func codeFromWire(kind, code string) error {
	if kind == wirePermission && code == wireCodePolicyFailed {
		return backend.ErrPolicyFailed
	}
	return nil
}

// codeToWire is the wire code of err, "" for none.
func codeToWire(err error) string {
	if errors.Is(err, backend.ErrPolicyFailed) && backend.KindOf(err) == backend.ErrPermission {
		return wireCodePolicyFailed
	}
	return ""
}

// Error is an error out of Load, CallTool or Check. Kind is a backend kind
// (ErrInvalid, ErrPermission, ...) or nil for an internal error; Cause is
// ErrTrap, ErrDeadline, a context error or nil; Code is the finer cause a
// guest's error named with its wire code (backend.ErrPolicyFailed) or nil.
// errors.Is sees all three.
type Error struct {
	Plugin string // the plugin's name
	Op     string // "load", "describe", "call <tool>", "check"
	Kind   error
	Cause  error
	// Code is not in the message: the guest's message already says it,
	// being the text of the host's error the code came with.
	Code error
	Msg  string
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

// Unwrap exposes the kind, the cause and the code.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	if e.Code != nil {
		errs = append(errs, e.Code)
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
