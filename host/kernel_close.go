package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/wai-dev/wai/host/backend"
)

// Closing the kernel: its sessions, then its backends, policies, plugins
// and audit log.

// Close closes every session, then the backends the kernel opened and the
// audit log. Calling it again does nothing.
func (k *Kernel) Close(ctx context.Context) error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	sessions := make([]*Session, 0, len(k.sessions))
	for _, s := range k.sessions {
		sessions = append(sessions, s)
	}
	k.mu.Unlock()

	if k.stopReaper != nil {
		k.stopReaper()
		<-k.reaperDone
	}
	var errs []error
	for _, s := range sessions {
		if err := s.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	k.mu.Lock()
	backends := k.backends
	k.backends = map[string]backend.Backend{}
	k.mu.Unlock()
	for name, b := range backends {
		if err := b.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close backend %s: %w", name, err))
		}
	}
	if err := k.closePolicies(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := k.closePlugins(ctx); err != nil {
		errs = append(errs, err)
	}
	k.closeAudit()
	return errors.Join(errs...)
}

func (k *Kernel) closeAudit() {
	if k.audit != nil {
		_ = k.audit.Sync()
		_ = k.audit.Close()
	}
}

func (k *Kernel) closePolicies(ctx context.Context) error {
	var errs []error
	for _, p := range k.chain.policies {
		if c, ok := p.(interface{ Close(context.Context) error }); ok {
			if err := c.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("close policy %s: %w", p.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// forget drops a closed session from the table.
func (k *Kernel) forget(s *Session) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sessions[s.spec.Session] == s {
		delete(k.sessions, s.spec.Session)
	}
}
