package backend

import "strings"

// Users keep sessions apart: the session "proj" of user alice and the
// session "proj" of user bob are two sessions, with their own files and
// sandboxes. A backend sees them under different names, made by
// SessionKey, so every backend keeps them apart, including one that knows
// nothing of users; a session without a user keeps its own name.

// MaxUserName is the longest user name.
const MaxUserName = 32

// userKeyPrefix starts the backend name of every user's session. A session
// without a user may not start with it (see CheckSessionName), so the two
// never collide.
const userKeyPrefix = "u."

// ValidUser checks a user name: [a-z_][a-z0-9_-]*, at most 32 bytes, as
// useradd accepts by default. It never contains '.', which SessionKey
// relies on.
func ValidUser(name string) error {
	if name == "" || len(name) > MaxUserName {
		return Errorf(ErrInvalid, "user", "", "user name %q must be 1–%d characters", name, MaxUserName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lower := c >= 'a' && c <= 'z' || c == '_'
		if !(lower || i > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return Errorf(ErrInvalid, "user", "", "user name %q must look like [a-z_][a-z0-9_-]* (lower-case letters, digits, '_' and '-', not starting with a digit or '-')", name)
		}
	}
	return nil
}

// SessionKey is the name a backend knows user's session by: the session's
// own name without a user, "u.USER.SESSION" with one.
func SessionKey(user, session string) string {
	if user == "" {
		return session
	}
	return userKeyPrefix + user + "." + session
}

// SplitSessionKey undoes SessionKey: the user ("" for none) and the
// session's own name. ok is false for a name SessionKey cannot have made
// (a "u." name without a valid user part).
func SplitSessionKey(key string) (user, session string, ok bool) {
	rest, isUser := strings.CutPrefix(key, userKeyPrefix)
	if !isUser {
		return "", key, true
	}
	user, session, found := strings.Cut(rest, ".")
	if !found || session == "" || ValidUser(user) != nil {
		return "", "", false
	}
	return user, session, true
}

// IsUserKey reports whether name is reserved for users' sessions: a
// session without a user may not be named so.
func IsUserKey(name string) bool { return strings.HasPrefix(name, userKeyPrefix) }
