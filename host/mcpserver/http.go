package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
)

// Token is one bearer token HTTP clients may present, and the user their
// sessions are opened as ("" for none).
type Token struct {
	Secret string
	User   string
}

// tokenUserKey is where a verified token's user travels in the SDK's
// auth.TokenInfo.
const tokenUserKey = "wai.user"

// HTTPHandler serves MCP over streamable HTTP, each HTTP session its own
// wai session. Every request must carry `Authorization: Bearer SECRET`
// for one of tokens (the scheme matched case-insensitively, the secret in
// constant time); others get 401 with WWW-Authenticate and no session. With
// no tokens every request is refused: HTTP is never served unauthenticated.
// A token config.CheckMCPToken refuses (shorter than 16 bytes) never matches.
//
// A session runs as its token's user (else Options.User), and only that
// token's user can reach it: the SDK refuses a session id presented with
// another user's token.
func (s *Server) HTTPHandler(tokens ...Token) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.log,
		MaxRequestBodyBytes: MaxMessageBytes,
		// No SessionTimeout: the SDK's timer runs while a client holds a
		// stream open; idleCloser does not.
	})
	idle := &idleCloser{s: s, timeout: s.opts.HTTPIdleTimeout, sessions: map[string]*idleSession{}}
	return newAuthenticator(tokens, idle.wrap(newWithdrawals().wrap(sdk)))
}

// authenticator checks bearer tokens in front of the SDK's handler.
type authenticator struct {
	hashes [][sha256.Size]byte
	tokens []Token
	next   http.Handler // the SDK's auth middleware, then the MCP handler
}

func newAuthenticator(tokens []Token, h http.Handler) http.Handler {
	a := &authenticator{}
	for _, t := range tokens {
		if config.CheckMCPToken("token", t.Secret) != nil {
			continue // too short to resist guessing: never accepted
		}
		a.tokens = append(a.tokens, t)
		a.hashes = append(a.hashes, sha256.Sum256([]byte(t.Secret)))
	}
	// The SDK's middleware puts the token's identity in the request, which
	// its handler binds each session to. Requests reach it verified.
	verify := func(_ context.Context, secret string, _ *http.Request) (*auth.TokenInfo, error) {
		i := a.match(secret)
		if i < 0 {
			return nil, auth.ErrInvalidToken
		}
		t := a.tokens[i]
		// Sessions are bound to this identity: a user's, or a token's
		// own when it names no user.
		id := "user:" + t.User
		if t.User == "" {
			id = fmt.Sprintf("token:%d", i)
		}
		return &auth.TokenInfo{UserID: id, Extra: map[string]any{tokenUserKey: t.User}}, nil
	}
	a.next = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return a
}

func (a *authenticator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.match(bearerSecret(r)) < 0 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="wai"`)
		msg := "wai: missing or wrong bearer token: send the header `Authorization: Bearer <token>` with a token wai serve accepts (the operator's configuration says which: the token file wai serve printed at start, the variable its [mcp] token_env names, or [[mcp.tokens]])"
		if len(a.tokens) == 0 {
			msg = "wai: this server has no bearer token configured, so it refuses every request: configure one ([mcp] in wai.toml)"
		}
		http.Error(w, msg, http.StatusUnauthorized)
		return
	}
	a.next.ServeHTTP(w, r)
}

// bearerSecret returns the secret of an `Authorization: Bearer …` header,
// the scheme in any case (RFC 9110 makes it case-insensitive).
func bearerSecret(r *http.Request) string {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(secret)
}

// match returns the index of the token whose secret is secret, or -1. It
// compares with every token in constant time; hashing first makes the
// comparison independent of the lengths too.
func (a *authenticator) match(secret string) int {
	if secret == "" {
		return -1
	}
	h := sha256.Sum256([]byte(secret))
	found := -1
	for i := range a.hashes {
		if subtle.ConstantTimeCompare(h[:], a.hashes[i][:]) == 1 {
			found = i
		}
	}
	return found
}

// idleCloser closes an HTTP session that had no request open and no
// background job running for the timeout; closing it closes its wai
// session, removing its workspace and files. A request open (a GET stream
// the client listens on, a call still running) is a client still
// connected, and a running job is work the client will come back for
// (its own max runtime bounds it): such a session is never closed for
// idleness, whatever the timeout. Idleness counts from the last request's
// end or the last check that saw a job run.
type idleCloser struct {
	s       *Server
	timeout time.Duration

	mu       sync.Mutex
	sessions map[string]*idleSession // by Mcp-Session-Id
}

type idleSession struct {
	open  int
	since time.Time // idle since: the last request's end, or a job seen running
	timer *time.Timer
}

// jobCheckEvery is how often, as a share of the timeout, a session whose
// jobs run is asked again: it is closed at most a quarter of the timeout
// late after its last job ended.
const jobCheckEvery = 4

const sessionIDHeader = "Mcp-Session-Id"

func (c *idleCloser) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		if id != "" && c.begin(id) {
			defer c.end(id)
		}
		if id != "" {
			h.ServeHTTP(w, r)
			return
		}
		// A new session: its id is in the answer's header, and tracking
		// must begin before the client can read it and open a stream.
		h.ServeHTTP(&onFirstWrite{ResponseWriter: w, first: func(hd http.Header) {
			if created := hd.Get(sessionIDHeader); created != "" {
				c.start(created)
			}
		}}, r)
	})
}

// onFirstWrite calls first with the headers just before they are sent.
type onFirstWrite struct {
	http.ResponseWriter
	once  sync.Once
	first func(http.Header)
}

func (w *onFirstWrite) sent() { w.once.Do(func() { w.first(w.Header()) }) }

func (w *onFirstWrite) WriteHeader(code int) {
	w.sent()
	w.ResponseWriter.WriteHeader(code)
}

func (w *onFirstWrite) Write(b []byte) (int, error) {
	w.sent()
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming (SSE) working through the wrapper.
func (w *onFirstWrite) Flush() {
	w.sent()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *onFirstWrite) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// start begins tracking a session the SDK just created.
func (c *idleCloser) start(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sessions[id]; ok {
		return
	}
	is := &idleSession{since: time.Now()}
	is.timer = time.AfterFunc(c.timeout, func() { c.expire(id, is) })
	c.sessions[id] = is
}

// begin marks a request open on a known session; false for an id wai did
// not hand out (the SDK answers it 404), which is not tracked.
func (c *idleCloser) begin(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	is, ok := c.sessions[id]
	if !ok {
		return false
	}
	is.open++
	is.timer.Stop()
	return true
}

func (c *idleCloser) end(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	is, ok := c.sessions[id]
	if !ok {
		return
	}
	is.open--
	if is.open == 0 {
		is.since = time.Now()
		is.timer.Reset(c.timeout)
	}
}

// expire closes a session idle for the whole timeout; a request that
// began meanwhile keeps it, and so does a background job running in its
// workspace (asked outside the lock: it may query a container).
func (c *idleCloser) expire(id string, is *idleSession) {
	c.mu.Lock()
	idle := c.idle(id, is)
	c.mu.Unlock()
	if !idle {
		return
	}
	ss := c.s.mcpSession(id)
	jobs := ss != nil && c.s.jobsRun(ss)
	c.mu.Lock()
	if !c.idle(id, is) {
		c.mu.Unlock()
		return
	}
	if jobs {
		is.since = time.Now()
	}
	if rest := time.Until(is.since.Add(c.timeout)); rest > 0 {
		// A job ran lately: ask again while jobs run, else once the
		// rest of the timeout has passed.
		is.timer.Reset(min(rest, c.timeout/jobCheckEvery))
		c.mu.Unlock()
		return
	}
	delete(c.sessions, id)
	c.mu.Unlock()
	if ss != nil {
		c.s.log.Info("mcp.session.idle_close", "mcp_session", id, "idle", c.timeout)
		_ = ss.Close()
	}
}

// idle reports whether is is still the session id's record with no
// request open. The caller holds c.mu.
func (c *idleCloser) idle(id string, is *idleSession) bool {
	return c.sessions[id] == is && is.open == 0
}

// mcpSession is the SDK's session of id, nil once it is gone.
func (s *Server) mcpSession(id string) *mcp.ServerSession {
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// jobsRun reports whether background jobs run in ss's wai session; one
// that cannot say counts as running them (closing would remove what it
// could not see), and is asked again later.
func (s *Server) jobsRun(ss *mcp.ServerSession) bool {
	s.mu.Lock()
	var ws *host.Session
	if c := s.clients[ss]; c != nil {
		ws = c.ws
	}
	s.mu.Unlock()
	if ws == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := ws.RunningJobs(ctx)
	if err != nil {
		s.log.Warn("mcp.session.idle_jobs_unknown", "mcp_session", ss.ID(), "session", ws.Name(), "err", err)
		return true
	}
	if n > 0 {
		s.log.Debug("mcp.session.idle_jobs_run", "mcp_session", ss.ID(), "session", ws.Name(), "jobs", n)
	}
	return n > 0
}

// IsLoopback reports whether addr (host:port) listens only on the local
// machine. An empty host means every interface, so it is not.
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// CheckListen checks a listen address, and refuses a non-loopback one
// unless the operator configured a token (configured false means wai made
// one up): a token created in the state directory is meant for local
// clients, and plain HTTP to other machines carries it in the clear.
func CheckListen(addr string, configured bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return backend.Errorf(backend.ErrInvalid, "mcp.serve", addr, "listen address %q is not HOST:PORT (e.g. 127.0.0.1:8080): %v", addr, err)
	}
	if !configured && !IsLoopback(addr) {
		return backend.Errorf(backend.ErrInvalid, "mcp.serve", addr,
			"refusing to serve %s with a token wai created: it is reachable from other machines; configure a token yourself ([[mcp.tokens]] in wai.toml, or [mcp] token_env / --token-env NAME naming an environment variable that holds it), or listen on 127.0.0.1", addr)
	}
	return nil
}
