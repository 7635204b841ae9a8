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

// Limits of the path language (seed 001, phase 2).
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
func Normalize(field, p string) (string, error) {
	s := p
	if s == workspacePrefix || strings.HasPrefix(s, workspacePrefix+"/") {
		s = s[len(workspacePrefix):]
	}
	var segs []string
	for _, seg := range strings.Split(s, "/") {
		if seg == "" {
			continue // leading, trailing and doubled slashes
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] > 0x7e || seg[i] < 0x20 {
				return "", fmt.Errorf("%s must contain only printable ASCII characters: %q", field, p)
			}
		}
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("%s may not contain '.' or '..' segments: %q", field, p)
		}
		if len(seg) > MaxSegment {
			return "", fmt.Errorf("%s has a segment longer than %d characters: %q", field, MaxSegment, seg[:MaxSegment]+"...")
		}
		segs = append(segs, seg)
	}
	if len(segs) > MaxDepth {
		return "", fmt.Errorf("%s is deeper than %d segments", field, MaxDepth)
	}
	return strings.Join(segs, "/"), nil
}

// ErrRoot is returned by File for a path naming the workspace root.
var ErrRoot = errors.New("names the workspace root, not a file")

// File normalises a path that must name a file: the root is refused.
func File(field, p string) (string, error) {
	n, err := Normalize(field, p)
	if err != nil {
		return "", err
	}
	if n == "" {
		return "", fmt.Errorf("%s %w: give a path such as \"src/main.py\"", field, ErrRoot)
	}
	return n, nil
}

// Display is how a normalised path is shown to the model: rooted at "/",
// the way the tools accept it back.
func Display(n string) string { return "/" + n }
