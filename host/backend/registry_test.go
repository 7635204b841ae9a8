package backend

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

type nopBackend struct{ opts Options }

func (nopBackend) Open(context.Context, WorkspaceSpec) (Workspace, error) { return nil, nil }
func (nopBackend) Close(context.Context) error                            { return nil }

func TestRegistry(t *testing.T) {
	var got Options
	Register("test-nop", func(_ context.Context, o Options) (Backend, error) {
		got = o
		return nopBackend{o}, nil
	})
	Register("test-failing", func(context.Context, Options) (Backend, error) {
		return nil, Errorf(ErrUnavailable, "open", "", "no service")
	})
	if !slices.Contains(Registered(), "test-nop") || !slices.IsSorted(Registered()) {
		t.Fatalf("Registered() = %v", Registered())
	}
	if _, err := Open(context.Background(), "test-nop", Options{}); err != nil {
		t.Fatal(err)
	}
	if got.Limits != DefaultLimits() || got.Logger == nil {
		t.Fatalf("zero options not defaulted: %+v", got)
	}
	bad := DefaultLimits()
	bad.MaxResults = 0
	if _, err := Open(context.Background(), "test-nop", Options{Limits: bad}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid limits: %v", err)
	}
	_, err := Open(context.Background(), "test-failing", Options{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "open backend test-failing") {
		t.Fatalf("failing factory: %v", err)
	}
	// A bundled backend this test binary does not link says what to import.
	_, err = Open(context.Background(), "podman", Options{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `import _ "github.com/wai-dev/wai/plugins/podman"`) {
		t.Fatalf("unlinked backend: %v", err)
	}
	_, err = Open(context.Background(), "nosuch", Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "test-nop") {
		t.Fatalf("unknown backend: %v", err)
	}
	// A misspelt backend, linked in or not, gets the name it meant.
	_, err = Open(context.Background(), "podmn", Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown backend "podmn"; did you mean "podman"?`) {
		t.Fatalf("misspelt backend: %v", err)
	}
	for name, f := range map[string]Factory{"test-nop": func(context.Context, Options) (Backend, error) { return nil, nil }, "test-nil": nil} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			Register(name, f)
		}()
	}
}

func TestDecodeConfig(t *testing.T) {
	type cfg struct {
		Root  string `json:"root"`
		Count int    `json:"count"`
	}
	c := cfg{Root: "default"}
	for _, raw := range []string{"", "null"} {
		if err := DecodeConfig("x", json.RawMessage(raw), &c); err != nil || c.Root != "default" {
			t.Fatalf("empty config %q: %+v, %v", raw, c, err)
		}
	}
	if err := DecodeConfig("x", json.RawMessage(`{"count": 3}`), &c); err != nil || c.Root != "default" || c.Count != 3 {
		t.Fatalf("partial config: %+v, %v", c, err)
	}
	for raw, msg := range map[string]string{`{"rot": "x"}`: `unknown field "rot" in [backends.x]: did you mean "root"?`, `{"count": "3"}`: "cannot unmarshal", `{`: "unexpected EOF"} {
		err := DecodeConfig("x", json.RawMessage(raw), &c)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "backend x") || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestWorkspaceSpec(t *testing.T) {
	for _, s := range []WorkspaceSpec{{Session: "a"}, {Session: "A-b_c.1", User: "alice"}, {Session: strings.Repeat("s", 64)}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, s := range []WorkspaceSpec{
		{}, {Session: "."}, {Session: ".."}, {Session: "a/b"}, {Session: "a b"}, {Session: strings.Repeat("s", 65)},
		{Session: "é"}, {Session: "a", User: ".."}, {Session: "a", User: "x/y"},
	} {
		if err := s.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", s, err)
		}
	}
}
