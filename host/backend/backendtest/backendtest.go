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

// ExampleBlock returns the body of the first commented [backends.NAME]
// block of an example configuration (wai.example.toml): the lines after
// its header, their "#   " taken off, up to the next table or uncommented
// line. A backend's tests check that the block names every key of its
// config with the default; later blocks of the same table are examples
// of nested values.
func ExampleBlock(data []byte, name string) []string {
	var block []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		body, commented := strings.CutPrefix(line, "#   ")
		switch {
		case !in:
			in = commented && body == "[backends."+name+"]"
		case !commented || strings.HasPrefix(body, "["):
			return block
		default:
			block = append(block, body)
		}
	}
	return block
}
