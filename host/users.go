package host

import (
	"github.com/wai-dev/wai/host/backend"
)

// WithUser makes user the owner of every session opened without
// SessionOptions.User (the CLI's --user). The name must pass
// backend.ValidUser.
func WithUser(user string) Option { return func(o *options) { o.user = user } }

// User is the user of sessions opened without one ("" for none).
func (k *Kernel) User() string { return k.user }

// sessionKey is the name under which the kernel and its backend know the
// session name of user. Names that start like a user's key are refused
// unless they are that user's own, so no one reaches another user's
// session by naming its key.
func sessionKey(name, user string) (string, error) {
	if backend.IsUserKey(name) {
		owner, _, ok := backend.SplitSessionKey(name)
		if ok && owner == user {
			return name, nil
		}
		return "", backend.Errorf(backend.ErrInvalid, "session", name,
			"session names starting with %q are reserved for users' sessions: pick another name (a user's own sessions are named without it)", "u.")
	}
	key := backend.SessionKey(user, name)
	if user != "" && len(key) > 64 {
		return "", backend.Errorf(backend.ErrInvalid, "session", name,
			"session name %q is too long for user %q: at most %d characters", name, user, 64-len(backend.SessionKey(user, "")))
	}
	return key, nil
}
