// Package vfspath normalises the paths the VFS tools accept, so every
// backend sees the same narrow shape: relative POSIX paths of at most 16
// ASCII segments of at most 80 characters, never "." or "..". The backends
// confine paths to the workspace anyway; these rules exist for the model —
// a short, predictable path language whose mistakes get a clear message
// before anything touches the workspace.
package vfspath

import (
	"errors"
	"fmt"
	"strings"
)

// Limits of the path language (docs/ARCHITECTURE.md).
const (
	MaxDepth   = 16
	MaxSegment = 80
)

// workspacePrefix is how the sandbox names its root; models copy paths from
// shell output, so "/workspace/x" means "x".
const workspacePrefix = "/workspace"

// Normalize returns p as a relative, slash-separated path ("" is the
// workspace root), or an error whose message the model can act on. field
// names the parameter in messages.
//
// The messages are sentences for the model, worded as weakincentives' VFS
// tools word them (models learn them), hence capitals and full stops.
func Normalize(field, p string) (string, error) {
	s := p
	if s == workspacePrefix || strings.HasPrefix(s, workspacePrefix+"/") {
		s = s[len(workspacePrefix):]
	}
	if strings.Trim(s, "/") == "." {
		// "." alone is how the shell names the working directory, the
		// root: models pass it to grep and ls. Inside a path ("a/./b") it
		// is still refused, to keep one spelling per path.
		return "", nil
	}
	var segs []string
	for _, seg := range strings.Split(s, "/") {
		if seg == "" {
			continue // leading, trailing and doubled slashes
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] > 0x7e || seg[i] < 0x20 {
				return "", problem(nil, "%s must contain only printable ASCII characters: %q.", field, p)
			}
		}
		if seg == "." || seg == ".." {
			return "", problem(nil, "Path segments may not include '.' or '..'.")
		}
		if len(seg) > MaxSegment {
			return "", problem(nil, "Path segment exceeds the allowed length (%d characters): %q", MaxSegment, seg[:20]+"...")
		}
		segs = append(segs, seg)
	}
	if len(segs) > MaxDepth {
		return "", problem(nil, "Path depth exceeds the allowed limit (%d segments).", MaxDepth)
	}
	return strings.Join(segs, "/"), nil
}

// OutsideHint is what to add when a path the model gave was absolute
// and outside /workspace ("/etc/passwd"): the tools took it as a path
// inside the workspace, which the model most likely did not mean, so it is
// told what they see and how to reach the rest. "" for any other path.
func OutsideHint(p string) string {
	if !strings.HasPrefix(p, "/") || p == workspacePrefix || strings.HasPrefix(p, workspacePrefix+"/") ||
		strings.Trim(p, "/") == "" {
		return ""
	}
	return fmt.Sprintf("The file tools see only the workspace and read %s as a path inside it; "+
		"to reach %s outside the workspace, run a command (the shell) instead", p, p)
}

// TookInside is what to add to the answer of a change made through an
// absolute path outside /workspace ("/tmp/x.txt"): the tools changed the
// workspace's file n, which a command reaches as /workspace/n, not at the
// path the model gave, where it would look for it next. "" for any other
// path.
func TookInside(given, n string) string {
	if OutsideHint(given) == "" {
		return ""
	}
	return fmt.Sprintf(" The file tools took %s as a path inside the workspace: a command finds this file at %s/%s, not at %s.",
		given, workspacePrefix, n, given)
}

// ErrRoot is returned by File for a path naming the workspace root.
var ErrRoot = errors.New("must reference a file")

// File normalises a path that must name a file: the root is refused.
func File(field, p string) (string, error) {
	n, err := Normalize(field, p)
	if err != nil {
		return "", err
	}
	if n == "" {
		return "", problem(ErrRoot, "%s must reference a file, not the workspace root.", field)
	}
	return n, nil
}

// Problem is a path the rules refuse. Its message is a sentence for the
// model (capitalised, with a full stop), unlike a Go error string.
type Problem struct {
	Message string
	kind    error
}

func (p *Problem) Error() string { return p.Message }

// Unwrap lets errors.Is find the kind of problem (ErrRoot), if any.
func (p *Problem) Unwrap() error { return p.kind }

func problem(kind error, format string, args ...any) error {
	return &Problem{Message: fmt.Sprintf(format, args...), kind: kind}
}

// Display is how a normalised path is shown to the model: relative to
// the workspace root, "." for the root itself. That is one spelling true in
// both the file tools (which take it back as is) and the shell, whose
// commands start in the workspace root; "/plan.txt" would name the
// sandbox's read-only root file system there.
func Display(n string) string {
	if n == "" {
		return "."
	}
	return n
}

// Where names a directory inside a sentence: its Display form, or "the
// workspace root" for the root ("under ." reads as a typo).
func Where(n string) string {
	if n == "" {
		return "the workspace root"
	}
	return n
}

// Interface guards
var _ error = (*Problem)(nil)
