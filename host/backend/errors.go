package backend

import (
	"errors"
	"fmt"
	"io/fs"
)

// Error kinds. Match them with errors.Is; every error a backend or the host
// returns for a refused or failed request wraps exactly one of them.
var (
	// ErrInvalid: the request is malformed or breaks a limit (too long, bad
	// cwd, bad env, path outside the workspace). Fix the request.
	ErrInvalid = errors.New("invalid request")
	// ErrPermission: a policy refused the request.
	ErrPermission = errors.New("permission denied")
	// ErrUnavailable: the backend cannot serve right now (service down,
	// image missing, workspace closed). Retrying later may help.
	ErrUnavailable = errors.New("backend unavailable")
	// ErrNotFound: the path does not exist. It is fs.ErrNotExist, so
	// os.IsNotExist-style checks work too.
	ErrNotFound = fs.ErrNotExist
	// ErrExist: the path exists and the request needed it not to.
	ErrExist = fs.ErrExist
)

// ErrNotBuiltIn is a cause, not a kind: the stand-in for a backend this
// build of wai lacks wraps it in ErrUnavailable, so that callers can tell
// "rebuild wai" from "set the machine up", which would not help.
var ErrNotBuiltIn = errors.New("not built into this wai")

// ErrPolicyFailed is a cause, not a kind: a refusal (ErrPermission) whose
// policy could not judge the action (it failed, trapped, ran out of time
// or answered nonsense) wraps it, so that callers can tell "the policy is
// broken, tell the operator" from a deny, which a different command may
// pass. It crosses the plugin ABI as the error code "policy_failed"
// (docs/ABI.md §5), so a tool plugin that passes such a refusal on keeps
// it. host.ErrPolicyFailed is this error.
var ErrPolicyFailed = errors.New("policy failed, denying")

// Error carries a kind, the operation and path it concerns, and a message
// written for the person (or model) who has to fix the request.
type Error struct {
	Kind error  // one of the Err* kinds above
	Op   string // e.g. "exec", "fs.write"
	Path string // workspace path or command, when there is one
	Msg  string
	Err  error // underlying cause, if any
}

func (e *Error) Error() string {
	s := e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	if s != "" {
		s += ": "
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap exposes both the kind and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// Errorf builds an *Error of the given kind for op (path may be empty).
func Errorf(kind error, op, path, format string, args ...any) error {
	return &Error{Kind: kind, Op: op, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the error kind err wraps, or nil when it wraps none of
// them (an internal error).
func KindOf(err error) error {
	for _, k := range []error{ErrInvalid, ErrPermission, ErrUnavailable, ErrNotFound, ErrExist} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}
