// Package agentfs carries backend.Filesystem over the wai-agent protocol
// (docs/AGENT.md, "File operations"): the agent side runs each request on
// a Filesystem of its own (Handle), the host side turns the answer back
// into backend results (the Decode functions), checking it first, since
// the agent runs as the sandbox user and its answer is the sandbox's word.
// Both sides share the conversions here, so the two cannot drift apart.
//
// It imports the standard library, host/backend and internal/agentproto
// only: the agent stays a small static binary.
package agentfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// Error kinds on the wire.
var kinds = []struct {
	name string
	kind error
}{
	{"invalid", backend.ErrInvalid},
	{"permission", backend.ErrPermission},
	{"unavailable", backend.ErrUnavailable},
	{"not_found", backend.ErrNotFound},
	{"exist", backend.ErrExist},
}

// Stopped values of an FSError.
const (
	stoppedDeadline = "deadline"
	stoppedCanceled = "canceled"
)

// maxErrorMsg bounds the message of an error the agent sends that the
// host keeps: an error is a line or two, not a channel for bulk data.
const maxErrorMsg = 4 << 10

// EncodeError turns err into its wire form, keeping its kind, operation,
// path and whether a context ended it.
func EncodeError(err error) *agentproto.FSError {
	e := &agentproto.FSError{Msg: err.Error()}
	var be *backend.Error
	if errors.As(err, &be) {
		e.Op, e.Path, e.Msg = be.Op, agentproto.Text(be.Path), be.Msg
		if be.Err != nil && !isContextErr(be.Err) {
			e.Msg += ": " + be.Err.Error()
		}
	}
	k := backend.KindOf(err)
	for _, c := range kinds {
		if c.kind == k {
			e.Kind = c.name
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		e.Stopped = stoppedDeadline
	case errors.Is(err, context.Canceled):
		e.Stopped = stoppedCanceled
	}
	return e
}

func isContextErr(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// DecodeError turns the agent's error back into a backend error of the
// same kind (errors.Is works on the host as it would on the agent), with
// the context error it wrapped. An error of a kind the host does not know
// is an internal error, never a kind it did not say.
func DecodeError(e *agentproto.FSError) error {
	msg := e.Msg
	if len(msg) > maxErrorMsg {
		msg = strings.ToValidUTF8(msg[:maxErrorMsg], "") + "…"
	}
	var cause error
	switch e.Stopped {
	case stoppedDeadline:
		cause = context.DeadlineExceeded
	case stoppedCanceled:
		cause = context.Canceled
	}
	p := string(e.Path)
	if len(p) > maxErrorMsg {
		p = p[:maxErrorMsg]
	}
	for _, c := range kinds {
		if c.name == e.Kind {
			return &backend.Error{Kind: c.kind, Op: e.Op, Path: p, Msg: msg, Err: cause}
		}
	}
	err := fmt.Errorf("%s %s: %s (in the container)", e.Op, p, msg)
	if cause != nil {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	return err
}

// EncodeInfo is fi on the wire.
func EncodeInfo(fi backend.FileInfo) agentproto.FSInfo {
	return agentproto.FSInfo{Path: agentproto.Text(fi.Path), Name: agentproto.Text(fi.Name), Kind: string(fi.Kind),
		Size: fi.Size, Mode: uint32(fi.Mode), ModTime: fi.ModTime.UnixNano()}
}

// errBadAnswer is an answer that breaks the contract: the host reports
// it as ErrUnavailable and uses none of it.
func errBadAnswer(op, format string, args ...any) error {
	return backend.Errorf(backend.ErrUnavailable, op, "",
		"the in-container agent sent an answer that breaks the filesystem contract (%s); it is not used: "+
			"run the call again, or stop the session's container to start a fresh agent", fmt.Sprintf(format, args...))
}

// checkPath checks that p is a root-relative path as the contract says:
// clean, slash-separated, "." for the root, never climbing out.
func checkPath(op string, p agentproto.Text) (string, error) {
	s := string(p)
	if s == "" || strings.IndexByte(s, 0) >= 0 || path.Clean(s) != s || strings.HasPrefix(s, "/") ||
		s == ".." || strings.HasPrefix(s, "../") {
		return "", errBadAnswer(op, "path %q is not clean and relative to the workspace root", elide(s))
	}
	return s, nil
}

func elide(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// DecodeInfo is the wire form back, checked.
func DecodeInfo(op string, w agentproto.FSInfo) (backend.FileInfo, error) {
	p, err := checkPath(op, w.Path)
	if err != nil {
		return backend.FileInfo{}, err
	}
	switch k := backend.FileKind(w.Kind); k {
	case backend.KindFile, backend.KindDir, backend.KindSymlink, backend.KindOther:
	default:
		return backend.FileInfo{}, errBadAnswer(op, "unknown file kind %q", elide(w.Kind))
	}
	if w.Size < 0 || strings.ContainsRune(string(w.Name), '/') || len(w.Name) > 4096 {
		return backend.FileInfo{}, errBadAnswer(op, "entry %q with size %d and name %q", elide(p), w.Size, elide(string(w.Name)))
	}
	return backend.FileInfo{Path: p, Name: string(w.Name), Kind: backend.FileKind(w.Kind), Size: w.Size,
		Mode: fs.FileMode(w.Mode), ModTime: time.Unix(0, w.ModTime)}, nil
}
