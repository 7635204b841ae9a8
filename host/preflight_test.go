package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// checkedDriver is a driver with preflight checks that reports the
// options it was given.
type checkedDriver struct{}

// Interface guards
var (
	_ backend.Driver      = checkedDriver{}
	_ backend.Preflighter = checkedDriver{}
)

func (checkedDriver) Open(context.Context, backend.Options) (backend.Backend, error) {
	return nil, backend.Errorf(backend.ErrUnavailable, "open", "", "never opened by preflight")
}

func (checkedDriver) Preflight(_ context.Context, opts backend.Options) ([]backend.Check, error) {
	var table struct {
		Image string `json:"image"`
	}
	if err := backend.DecodeConfig("zz-checked", opts.Config, &table); err != nil {
		return nil, err
	}
	return []backend.Check{
		{Name: "state", Status: backend.CheckOK, Detail: opts.StateDir},
		{Name: "image", Status: backend.CheckFail, Detail: table.Image, Fix: "pull it"},
	}, nil
}

var registerChecked sync.Once

// Kernel.Preflight runs a linked-in driver's checks with its table of the
// configuration and the kernel's state directory, without opening it, and
// reports a table the driver cannot check with the file and line.
func TestKernelPreflight(t *testing.T) {
	registerChecked.Do(func() {
		backend.RegisterDriver("zz-checked", checkedDriver{})
		backend.RegisterDriver("zz-unused", checkedDriver{})
	})
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Backends = map[string]map[string]any{"zz-checked": {"image": "img:1"}}
	k, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	checks, errs := k.Preflight(ctx)
	var mine []backend.Check
	for _, c := range checks {
		if c.Backend == "zz-checked" {
			mine = append(mine, c)
		}
		if c.Backend == "zz-unused" {
			t.Errorf("a linked-in backend the config does not use was checked: %+v", c)
		}
	}
	if len(errs) != 0 || len(mine) != 2 || mine[0].Detail != cfg.StateDir || mine[1].Detail != "img:1" || mine[1].Status != backend.CheckFail {
		t.Fatalf("Preflight = %+v, %v", checks, errs)
	}

	cfg.Backends = map[string]map[string]any{"zz-checked": {"imag": "img:1"}}
	cfg.Source = "wai.toml"
	cfg.BackendKeyLine = func(b, field string) int {
		if b == "zz-checked" && field == "imag" {
			return 7
		}
		return 0
	}
	k2, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close(ctx)
	_, errs = k2.Preflight(ctx)
	var be *BackendError
	if len(errs) != 1 || !errors.As(errs[0], &be) || be.Backend != "zz-checked" || !errors.Is(errs[0], backend.ErrInvalid) ||
		!strings.Contains(errs[0].Error(), "wai.toml, line 7") {
		t.Fatalf("a table the driver cannot check: %v", errs)
	}
}
