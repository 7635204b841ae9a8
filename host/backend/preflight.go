package backend

import "context"

// Preflighter is implemented by drivers (see RegisterDriver) that can check
// whether this machine can run their backend, before one is opened: a
// backend that cannot open (its service is down) is exactly what the
// checks are for. `wai preflight` runs the checks of every linked-in
// driver that has them.
type Preflighter interface {
	// Preflight checks, in order, what the backend needs, given the
	// options it would be opened with. Each check that does not pass says
	// how to fix it. The error is for options it cannot check at all (its
	// config table is invalid); a failed check is not an error.
	Preflight(ctx context.Context, opts Options) ([]Check, error)
}

// CheckStatus is the outcome of one preflight check.
type CheckStatus string

const (
	CheckOK   CheckStatus = "ok"
	CheckWarn CheckStatus = "warn" // works, but something is off
	CheckFail CheckStatus = "fail" // the backend will not work until fixed
)

// Check is one preflight check, with a concrete fix when it did not pass.
type Check struct {
	// Backend is the backend checked; Preflight fills it in.
	Backend string `json:",omitempty"`
	Name    string
	Status  CheckStatus
	Detail  string
	Fix     string
}

// Preflight runs the named backend's preflight checks with opts (defaulted
// as Open does). ok is false when the backend has none: it is not linked
// in, or its driver is no Preflighter.
func Preflight(ctx context.Context, name string, opts Options) (checks []Check, ok bool, err error) {
	d, err := driver(name)
	if err != nil {
		return nil, false, nil
	}
	p, ok := d.(Preflighter)
	if !ok {
		return nil, false, nil
	}
	if opts, err = opts.WithDefaults(); err != nil {
		return nil, true, err
	}
	checks, err = p.Preflight(ctx, opts)
	for i := range checks {
		checks[i].Backend = name
	}
	return checks, true, err
}
