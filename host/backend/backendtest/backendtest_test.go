package backendtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// recorder is a testing.TB that records a failure instead of ending the
// test, so WantKind's failures can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestWantKind(t *testing.T) {
	err := backend.Errorf(backend.ErrNotFound, "fs.read", "a.txt", "no such file")
	for _, c := range []struct {
		kind     error
		contains string
		fails    bool
	}{
		{backend.ErrNotFound, "", false},
		{backend.ErrNotFound, "no such file", false},
		{backend.ErrInvalid, "", true},
		{backend.ErrNotFound, "permission", true},
	} {
		r := &recorder{TB: t}
		WantKind(r, err, c.kind, c.contains)
		if (r.failed != "") != c.fails {
			t.Errorf("WantKind(%v, %q): failed %q, want failing %v", c.kind, c.contains, r.failed, c.fails)
		}
	}
	r := &recorder{TB: t}
	WantKind(r, nil, backend.ErrNotFound, "")
	if r.failed == "" {
		t.Error("WantKind accepted a nil error")
	}
}

func TestExampleBlock(t *testing.T) {
	data := []byte(`[limits]
#   [backends.other]
#   x = 1
#
#   [backends.mock]
#   a = 1   # the first
#   b = "two"
#   [backends.mock.nested]
#   c = 3

#   [backends.mock]
#   d = 4
`)
	got := strings.Join(ExampleBlock(data, "mock"), "|")
	if want := `a = 1   # the first|b = "two"`; got != want {
		t.Errorf("ExampleBlock(mock) = %q, want %q", got, want)
	}
	if got := ExampleBlock(data, "absent"); len(got) != 0 {
		t.Errorf("ExampleBlock(absent) = %q, want nothing", got)
	}
}
