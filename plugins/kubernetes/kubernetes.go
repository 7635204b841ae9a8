// Package kubernetes registers the "kubernetes" backend, which is not yet
// available: opening it fails with backend.ErrUnavailable and says so.
// Its design is docs/KUBERNETES.md; the part that can be tested without a
// cluster, the hardened pod and network policy a session would get, is
// built and tested in the podspec subpackage. This package links none of
// the Kubernetes libraries, so linking it costs a program nothing.
package kubernetes

import (
	"context"
	"fmt"

	"github.com/wai-dev/wai/host/backend"
)

// Name is the backend's name in config and on the command line.
const Name = "kubernetes"

// NotAvailable is what opening the backend says first.
const NotAvailable = "the kubernetes backend is not yet available"

// errNoClient is why. It wraps backend.ErrNotBuiltIn, as no wai is built
// with a cluster client yet: the kernel then leads with this reason, not
// with advice to set the machine up, which cannot help.
var errNoClient = fmt.Errorf("a cluster client is %w (its pod spec builder is, in plugins/kubernetes/podspec); "+
	"docs/KUBERNETES.md has the design and what is missing; use backend \"podman\" meanwhile", backend.ErrNotBuiltIn)

func init() {
	backend.RegisterDriver(Name, driver{})
}

// driver opens nothing yet, and says so in `wai preflight` too.
type driver struct{}

// Interface guards
var (
	_ backend.Driver      = driver{}
	_ backend.Preflighter = driver{}
)

func (driver) Open(context.Context, backend.Options) (backend.Backend, error) {
	return nil, &backend.Error{Kind: backend.ErrUnavailable, Op: "open", Msg: NotAvailable, Err: errNoClient}
}

// Preflight has one check, which fails: the backend is not yet available.
func (driver) Preflight(context.Context, backend.Options) ([]backend.Check, error) {
	return []backend.Check{{Name: "backend available", Status: backend.CheckFail,
		Detail: "not yet available: the pod spec builder exists, no cluster client does",
		Fix:    "use backend \"podman\" meanwhile; docs/KUBERNETES.md has the design and what is missing"}}, nil
}
