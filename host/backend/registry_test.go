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
	// A backend this test binary does not link says what to import: the
	// registry knows only what is linked, and names the convention.
	_, err = Open(context.Background(), "podman", Options{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `import _ "github.com/wai-dev/wai/plugins/podman"`) || !strings.Contains(err.Error(), "test-nop") {
		t.Fatalf("unlinked backend: %v", err)
	}
	// A misspelt linked-in backend gets the name it meant, and is a
	// configuration error (never a reason to fall back).
	_, err = Open(context.Background(), "test-nopp", Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown backend "test-nopp"; did you mean "test-nop"?`) {
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

// checkingDriver is a driver with preflight checks.
type checkingDriver struct{ Factory }

func (checkingDriver) Preflight(_ context.Context, opts Options) ([]Check, error) {
	if string(opts.Config) == `"bad"` {
		return nil, Errorf(ErrInvalid, "config", "", "bad table")
	}
	return []Check{{Name: "service", Status: CheckOK, Detail: opts.StateDir}, {Name: "image", Status: CheckFail, Fix: "pull it"}}, nil
}

// Interface guards
var _ Preflighter = checkingDriver{}

func TestPreflight(t *testing.T) {
	RegisterDriver("test-checking", checkingDriver{func(context.Context, Options) (Backend, error) { return nopBackend{}, nil }})
	ctx := context.Background()
	checks, ok, err := Preflight(ctx, "test-checking", Options{StateDir: "/state"})
	if !ok || err != nil || len(checks) != 2 || checks[0].Backend != "test-checking" || checks[0].Detail != "/state" || checks[1].Status != CheckFail {
		t.Fatalf("Preflight = %+v, %v, %v", checks, ok, err)
	}
	if _, ok, err := Preflight(ctx, "test-checking", Options{Config: json.RawMessage(`"bad"`)}); !ok || !errors.Is(err, ErrInvalid) {
		t.Fatalf("a table the driver cannot check: %v, %v", ok, err)
	}
	// A driver without checks, or no driver: nothing to check.
	Register("test-unchecked", func(context.Context, Options) (Backend, error) { return nopBackend{}, nil })
	for _, name := range []string{"test-unchecked", "test-not-linked"} {
		if checks, ok, err := Preflight(ctx, name, Options{}); ok || err != nil || checks != nil {
			t.Errorf("%s: Preflight = %v, %v, %v; want nothing to check", name, checks, ok, err)
		}
	}
	if b, err := Open(ctx, "test-checking", Options{}); err != nil || b == nil {
		t.Fatalf("a driver opens as a factory does: %v, %v", b, err)
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

func TestDecodeStrict(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	if err := DecodeStrict([]byte(`{"a": 1}`), &v); err != nil || v.A != 1 {
		t.Fatalf("a good value: %+v, %v", v, err)
	}
	for _, bad := range []string{`{"b": 1}`, `{"a": 1} {"a": 2}`, `{"a": 1} x`, ``} {
		if err := DecodeStrict([]byte(bad), &v); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
