package host

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// Preflight runs the preflight checks of every linked-in backend the
// configuration uses (backend, fallback, or one with a [backends.NAME]
// table), and of the default backend (the sandbox wai runs on unless told
// otherwise), that has them (backend.Preflighter), in name order, each with its table of the
// configuration, as the kernel would open it: whether this machine can
// run the backend, and how to fix what it lacks. Nothing is opened. A
// backend whose table cannot even be checked is a *BackendError among
// errs; the others' checks are returned all the same.
func (k *Kernel) Preflight(ctx context.Context) (checks []backend.Check, errs []error) {
	def := DefaultConfig().Backend
	for _, name := range backend.Registered() {
		if _, table := k.cfg.Backends[name]; name != k.cfg.Backend && name != k.cfg.Fallback && name != def && !table {
			continue // linked in, but not what this machine is asked to run
		}
		if err := ctx.Err(); err != nil {
			return checks, append(errs, err)
		}
		opts, err := k.backendOptions(name)
		if err != nil {
			errs = append(errs, &BackendError{Backend: name, Err: err})
			continue
		}
		c, ok, err := backend.Preflight(ctx, name, opts)
		if !ok {
			continue
		}
		if err != nil {
			errs = append(errs, &BackendError{Backend: name, Err: k.atConfigLine(name, err)})
		}
		checks = append(checks, c...)
	}
	return checks, errs
}
