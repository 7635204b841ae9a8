package mcpserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/backend"
)

// HTTPHandler serves MCP over streamable HTTP, each HTTP session its own
// wai session. With a non-empty token every request must carry
// `Authorization: Bearer TOKEN`; others get 401.
func (s *Server) HTTPHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:         s.log,
		SessionTimeout: s.opts.HTTPIdleTimeout,
	})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wai"`)
			http.Error(w, "wai: missing or wrong bearer token: send `Authorization: Bearer <token>` with the token the server was started with", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
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

// CheckListen refuses to serve a non-loopback address without a token:
// anyone who can reach it could run commands.
func CheckListen(addr, token string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return backend.Errorf(backend.ErrInvalid, "mcp.serve", addr, "listen address %q is not HOST:PORT (e.g. 127.0.0.1:8080): %v", addr, err)
	}
	if token == "" && !IsLoopback(addr) {
		return backend.Errorf(backend.ErrInvalid, "mcp.serve", addr,
			"refusing to serve %s without a bearer token: it is reachable from other machines; set [mcp] token_env (or --token-env NAME) to an environment variable holding a secret token, or listen on 127.0.0.1", addr)
	}
	return nil
}
