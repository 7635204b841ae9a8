package pdk

import (
	"errors"
	"fmt"
)

// Kind is the kind of an error, as the ABI names it on the wire.
type Kind string

// The error kinds of docs/ABI.md.
const (
	KindInvalid     Kind = "invalid"     // bad request: fix it
	KindPermission  Kind = "permission"  // a policy (or a missing grant) said no
	KindUnavailable Kind = "unavailable" // the backend cannot serve now; retrying may help
	KindNotFound    Kind = "not_found"   // the path does not exist
	KindExists      Kind = "exists"      // the path exists and must not
	KindInternal    Kind = "internal"    // a bug, in the host or the plugin
)

// Sentinels to match with errors.Is: every *Error matches the one of its kind.
var (
	ErrInvalid     = errors.New("invalid request")
	ErrPermission  = errors.New("permission denied")
	ErrUnavailable = errors.New("unavailable")
	ErrNotFound    = errors.New("not found")
	ErrExist       = errors.New("already exists")
	ErrInternal    = errors.New("internal error")
)

var sentinels = map[Kind]error{
	KindInvalid: ErrInvalid, KindPermission: ErrPermission, KindUnavailable: ErrUnavailable,
	KindNotFound: ErrNotFound, KindExists: ErrExist, KindInternal: ErrInternal,
}

// Code is a finer cause within a Kind, as the ABI names it on the wire
// (docs/ABI.md §5). Most errors have none.
type Code string

// The error codes of docs/ABI.md §5, a closed set.
const (
	// CodePolicyFailed, with KindPermission: the action was refused
	// because the policy that judges it is broken (it crashed, ran out
	// of time or answered nonsense), not because it said no. Another
	// command meets the same broken policy; the operator must fix or
	// remove it. Match it with errors.Is(err, ErrPolicyFailed).
	CodePolicyFailed Code = "policy_failed"
)

// ErrPolicyFailed matches an *Error of KindPermission with
// CodePolicyFailed (and the ErrPermission sentinel matches it too).
var ErrPolicyFailed = errors.New("policy failed, denying")

// Error is an error with a kind: what host functions return, and what a
// tool may return to keep its kind on the way to the kernel. Code, when
// the host sets it, travels with it: a tool that returns the error it got
// (or wraps it with %w) passes both on.
type Error struct {
	Kind    Kind   `json:"kind"`
	Code    Code   `json:"code,omitempty"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Is matches the sentinel of e's kind (ErrPermission for KindPermission...)
// and, for CodePolicyFailed with KindPermission, ErrPolicyFailed.
func (e *Error) Is(target error) bool {
	if target == ErrPolicyFailed {
		return e.Kind == KindPermission && e.Code == CodePolicyFailed
	}
	s, ok := sentinels[e.Kind]
	return ok && s == target
}

// Errorf returns an *Error of the given kind.
func Errorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err: that of an *Error in its chain, else the
// kind of a sentinel it wraps, else KindInternal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		if _, ok := sentinels[e.Kind]; ok {
			return e.Kind
		}
		return KindInternal
	}
	for k, s := range sentinels {
		if errors.Is(err, s) {
			return k
		}
	}
	return KindInternal
}

// codeOf returns the code of err for the wire: CodePolicyFailed when it
// is a permission error that matches ErrPolicyFailed, else none. The
// code comes from the host, in a refusal the tool passes on: it goes back
// only to a host that knows the field (an older one would refuse it).
func codeOf(err error) Code {
	if KindOf(err) == KindPermission && errors.Is(err, ErrPolicyFailed) {
		return CodePolicyFailed
	}
	return ""
}

// toWire turns any error into the wire error, keeping its kind and code.
func toWire(err error) *Error {
	return &Error{Kind: KindOf(err), Code: codeOf(err), Message: err.Error()}
}

// Interface guards
var _ error = (*Error)(nil)
