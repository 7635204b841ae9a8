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

// Error is an error with a kind: what host functions return, and what a
// tool may return to keep its kind on the way to the kernel.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Is matches the sentinel of e's kind (ErrPermission for KindPermission...).
func (e *Error) Is(target error) bool {
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

// toWire turns any error into the wire error, keeping its kind.
func toWire(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e.Message == err.Error() {
		return &Error{Kind: KindOf(err), Message: e.Message}
	}
	return &Error{Kind: KindOf(err), Message: err.Error()}
}

// Interface guards
var _ error = (*Error)(nil)
