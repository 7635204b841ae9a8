// Package backendtest holds the checks that tests of backends and of
// their parts share, so each reads a backend.Error the same way.
package backendtest

import (
	"errors"
	"strings"
	"testing"
)

// WantKind fails t unless err is of kind (one of backend's Err* sentinels)
// and, when contains is not empty, says contains.
func WantKind(t testing.TB, err, kind error, contains string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v: want kind %v", err, kind)
	}
	if contains != "" && !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not say %q", err, contains)
	}
}
