package mcpserver

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host/config"
)

// TokenRecheck is how often, at most, a TokenSet looks at its token files
// again: a request costs one stat per file per interval, and a token
// rotated or removed stops working within it.
const TokenRecheck = time.Second

// TokenSet is the bearer tokens a running `wai serve --http` accepts. A
// token kept in a file is read again when the file changes (its inode,
// size, mode, owner or times), so an operator rotates or revokes a token
// by rewriting or removing its file, without a restart: the new token is
// accepted and the old one refused. A file that becomes unreadable,
// insecure (others can read it) or not a valid token fails closed: its
// user's requests are refused until the file is fixed, and Log is told
// why. Inline tokens and the environment's are fixed for the server's life.
type TokenSet struct {
	// Log is told of every change to the tokens and every file that
	// fails; nil tells nobody. Set it before serving.
	Log io.Writer

	mu      sync.Mutex
	checked time.Time
	slots   []tokenSlot
}

// tokenSlot is one accepted token: one [[mcp.tokens]] entry, the
// environment's token or wai's own.
type tokenSlot struct {
	what  string // where it is configured, for messages
	user  string
	path  string // its file; "" for a token not kept in a file
	made  bool   // the file is wai's own (see readTokenFile)
	stamp fileStamp
	ok    bool // the secret is usable; false while its file fails
	hash  [sha256.Size]byte
	// inner is the slot's name in the handler TokenSet wraps (see
	// HTTPHandlerFor): fixed for the slot's life, so sessions stay bound
	// to their user across rotations.
	inner string
}

// fileStamp is what changes when a token file is rewritten, replaced,
// removed or made insecure.
type fileStamp struct {
	ino, size, uid int64
	mode           os.FileMode
	mtime, ctime   syscall.Timespec
	err            string
}

// LoadTokens returns the tokens the config names: [[mcp.tokens]] (files
// read and checked here) and the one in the environment variable tokenEnv
// (no user) when it is set. getenv is os.Getenv outside tests. Any token
// that is refused now is an error: a server does not start half-configured.
func LoadTokens(cfg config.MCP, tokenEnv string, getenv func(string) string) (*TokenSet, error) {
	ts := &TokenSet{}
	for i, t := range cfg.Tokens {
		what := fmt.Sprintf("mcp.tokens[%d]", i)
		if t.TokenFile != "" {
			if err := ts.AddFile(what, t.TokenFile, t.User, false); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			continue
		}
		if err := ts.add(tokenSlot{what: what, user: t.User}, t.Token); err != nil {
			return nil, err
		}
	}
	if tokenEnv != "" {
		if secret := strings.TrimSpace(getenv(tokenEnv)); secret != "" {
			if err := ts.add(tokenSlot{what: "$" + tokenEnv}, secret); err != nil {
				return nil, err
			}
		}
	}
	return ts, nil
}

// AddFile adds the token kept in the file at path, read again whenever
// the file changes; what names it in messages, made says the file is
// wai's own (its state directory's token).
func (ts *TokenSet) AddFile(what, path, user string, made bool) error {
	sl := tokenSlot{what: what, user: user, path: path, made: made, stamp: stampOf(path)}
	secret, err := readTokenFile(path, made)
	if err != nil {
		return err
	}
	return ts.add(sl, secret)
}

func (ts *TokenSet) add(sl tokenSlot, secret string) error {
	if err := config.CheckMCPToken(sl.what, secret); err != nil {
		return err
	}
	sl.ok, sl.hash, sl.inner = true, sha256.Sum256([]byte(secret)), NewToken()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.slots = append(ts.slots, sl)
	return nil
}

// Len is the number of tokens configured, usable or not.
func (ts *TokenSet) Len() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.slots)
}

// HTTPHandlerFor is HTTPHandler with the tokens of ts, as they are at each
// request. The handler it wraps knows each token by a secret of its own,
// made here and never shown: a request whose token ts accepts reaches it
// carrying that secret, any other without one (and is refused there), so
// rotating a token changes what clients send, not the sessions' users.
// Tokens added to ts after this call are not served.
func (s *Server) HTTPHandlerFor(ts *TokenSet) http.Handler {
	ts.mu.Lock()
	inner := make([]Token, len(ts.slots))
	for i, sl := range ts.slots {
		inner[i] = Token{Secret: sl.inner, User: sl.user}
	}
	ts.mu.Unlock()
	h := s.HTTPHandler(inner...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := ts.inner(bearerSecret(r), time.Now())
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
		if ok {
			r.Header.Set("Authorization", "Bearer "+secret)
		}
		h.ServeHTTP(w, r)
	})
}

// inner returns the inner secret of the token whose secret is secret, if
// ts accepts it now; it looks at the token files first when they are due.
func (ts *TokenSet) inner(secret string, now time.Time) (string, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if now.Sub(ts.checked) >= TokenRecheck {
		ts.checked = now
		for i := range ts.slots {
			ts.recheck(&ts.slots[i])
		}
	}
	a := authenticator{hashes: make([][sha256.Size]byte, len(ts.slots))}
	for i, sl := range ts.slots {
		a.hashes[i] = sl.hash
	}
	i := a.match(secret)
	if i < 0 || !ts.slots[i].ok {
		return "", false
	}
	return ts.slots[i].inner, true
}

// recheck reads a slot's token file again when it changed since it was
// last read, and tells Log what that did.
func (ts *TokenSet) recheck(sl *tokenSlot) {
	if sl.path == "" {
		return
	}
	st := stampOf(sl.path)
	if st == sl.stamp {
		return
	}
	sl.stamp = st
	secret, err := readTokenFile(sl.path, sl.made)
	if err == nil {
		err = config.CheckMCPToken(sl.what, secret)
	}
	if err != nil {
		if sl.ok {
			ts.logf("%s%s: %v: its token is refused until the file is fixed", sl.what, userOf(sl.user), err)
		}
		sl.ok = false
		return
	}
	h := sha256.Sum256([]byte(secret))
	if sl.ok && h == sl.hash {
		return // rewritten with the same token
	}
	sl.ok, sl.hash = true, h
	ts.logf("%s%s: the token file %s changed: the token now in it is accepted, any before it no longer", sl.what, userOf(sl.user), sl.path)
}

func (ts *TokenSet) logf(format string, args ...any) {
	if ts.Log != nil {
		fmt.Fprintf(ts.Log, "wai serve: "+format+"\n", args...)
	}
}

func userOf(user string) string {
	if user == "" {
		return ""
	}
	return " (user " + user + ")"
}

// stampOf is the token file's stamp now, without following a symbolic
// link (readTokenFile refuses one).
func stampOf(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{err: err.Error()}
	}
	st := fileStamp{size: fi.Size(), mode: fi.Mode()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino, st.uid = int64(sys.Ino), int64(sys.Uid)
		st.mtime, st.ctime = sys.Mtim, sys.Ctim
	}
	return st
}
