package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// This file is the sessions' lifecycle: a client admitted at initialize
// (under MaxSessions), its wai session opened on the first call and closed
// when the client leaves, and Shutdown closing them all.

// Close shuts the server down within CloseTimeout; see Shutdown.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CloseTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		s.log.Warn("mcp.shutdown", "err", err)
	}
}

// Shutdown refuses new sessions and calls, cancels the running calls (the
// backend kills their commands), closes every wai session (removing its
// workspace) and every MCP session, however its client left. It returns
// when all of that is done, or with ctx's error when ctx ends first.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	clients := s.clients
	s.clients = map[*mcp.ServerSession]*client{}
	s.mu.Unlock()
	s.cancelCalls()

	var closing sync.WaitGroup
	for ss := range s.mcp.Sessions() {
		c := clients[ss]
		delete(clients, ss)
		closing.Go(func() { s.closeClient(ctx, ss, c) })
	}
	for ss, c := range clients { // admitted, but already gone from the SDK's list
		closing.Go(func() { s.closeClient(ctx, ss, c) })
	}
	done := make(chan struct{})
	go func() {
		closing.Wait()
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcp: shutdown left sessions closing: %w", ctx.Err())
	}
}

// closeClient closes a client's wai session, then its MCP session, which
// the SDK closes once the client's calls (already cancelled) returned.
func (s *Server) closeClient(ctx context.Context, ss *mcp.ServerSession, c *client) {
	if c != nil && c.ws != nil {
		s.closeSessionCtx(ctx, c.ws)
	}
	_ = ss.Close()
}

// admit counts a client in at initialize, refusing it past MaxSessions or
// once the server is shutting down, and records the user its token names.
func (s *Server) admit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if method != "initialize" || !ok {
			return next(ctx, method, req)
		}
		fresh, err := s.reserve(ss, s.userOf(req))
		if err != nil {
			return nil, err
		}
		res, err := next(ctx, method, req)
		if err != nil && fresh {
			s.release(ss)
		}
		return res, err
	}
}

// userOf is the user a request's bearer token names, else Options.User.
func (s *Server) userOf(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		if u, ok := ex.TokenInfo.Extra[tokenUserKey].(string); ok && u != "" {
			return u
		}
	}
	return s.opts.User
}

// reserve admits ss under the session cap; fresh is false when ss was
// admitted already.
func (s *Server) reserve(ss *mcp.ServerSession, user string) (fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, &jsonrpc.Error{Code: codeUnavailable, Message: "wai: the server is shutting down; reconnect to a running wai serve"}
	}
	if _, ok := s.clients[ss]; ok {
		return false, nil
	}
	if err := s.overCap(ss, user); err != nil {
		return false, err
	}
	s.clients[ss] = &client{user: user, log: newClientLog(ss)}
	s.wg.Go(func() {
		_ = ss.Wait()
		s.release(ss)
	})
	return true, nil
}

// overCap refuses a new client of user past the user's cap or the
// server's; the user's cap is checked first, since it is the one that
// user can do something about. Called with s.mu held.
func (s *Server) overCap(ss *mcp.ServerSession, user string) error {
	held := 0
	for _, c := range s.clients {
		if c.user == user {
			held++
		}
	}
	if held >= s.opts.MaxSessionsPerUser {
		s.log.Warn("mcp.session.refused", "mcp_session", ss.ID(), "user", user, "max_sessions_per_user", s.opts.MaxSessionsPerUser)
		return &jsonrpc.Error{Code: codeUnavailable, Message: fmt.Sprintf(
			"wai: you already hold %d MCP sessions, the cap for one user (mcp.max_sessions_per_user in wai.toml); end a session you no longer need (clients that vanished are closed after the HTTP idle timeout) or ask the operator to raise it", held)}
	}
	if len(s.clients) >= s.opts.MaxSessions {
		s.log.Warn("mcp.session.refused", "mcp_session", ss.ID(), "max_sessions", s.opts.MaxSessions)
		return &jsonrpc.Error{Code: codeUnavailable, Message: fmt.Sprintf(
			"wai: the server already holds %d MCP sessions, its cap (mcp.max_sessions in wai.toml); end a session you no longer need (clients that vanished are closed after the HTTP idle timeout) or raise mcp.max_sessions", s.opts.MaxSessions)}
	}
	return nil
}

// release forgets a client that left, closing its wai session.
func (s *Server) release(ss *mcp.ServerSession) {
	s.mu.Lock()
	c := s.clients[ss]
	delete(s.clients, ss)
	s.mu.Unlock()
	if c != nil && c.ws != nil {
		s.closeSession(c.ws)
	}
}

// codeUnavailable is the JSON-RPC error (in the range the spec leaves to
// servers) for a server that cannot take the client now.
const codeUnavailable = -32000

// session returns the wai session of an MCP session, opening it on the
// first call; it is closed when the client goes away. A wai session that
// was closed under a connected client (an operator's `wai rm`, a kernel
// closing) is reported once, plainly, rather than replaced in silence by an
// empty workspace.
func (s *Server) session(ctx context.Context, ss *mcp.ServerSession) (*host.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, backend.Errorf(backend.ErrUnavailable, "mcp.serve", "", "the server is shutting down; reconnect to a running wai serve")
	}
	c, ok := s.clients[ss]
	if !ok {
		return nil, backend.Errorf(backend.ErrUnavailable, "mcp.serve", "", "this MCP session was not initialized or has ended; reconnect")
	}
	if c.ws != nil {
		if s.kernelHolds(c.ws) {
			return c.ws, nil
		}
		name := c.ws.Name()
		c.ws = nil
		return nil, backend.Errorf(backend.ErrUnavailable, "mcp.serve", name,
			"this session's workspace was closed by wai while you were connected (an operator removed it, or the kernel shut it down); the files in it are gone. The next call starts a new, empty workspace")
	}
	// An empty name gives a fresh random one: MCP session ids are chosen
	// by the transport (and empty on stdio), and a workspace name must
	// never let one client land in another's workspace.
	opts := host.SessionOptions{User: c.user}
	if e := elicitorFor(ss); e != nil {
		// Policies that ask are put to the person at this client;
		// without elicitation the kernel denies them.
		opts.Approver = e
	}
	ws, err := s.k.Session(ctx, "", opts)
	if err != nil {
		return nil, err
	}
	c.ws = ws
	s.log.Info("mcp.session.open", "mcp_session", ss.ID(), "session", ws.Name(), "user", c.user)
	c.log.send(ctx, slog.LevelInfo, map[string]any{"event": "session.open", "session": ws.Name()})
	return ws, nil
}

// kernelHolds reports whether ws is still open in the kernel.
func (s *Server) kernelHolds(ws *host.Session) bool {
	return slices.Contains(s.k.Sessions(), ws.Name())
}

func (s *Server) closeSession(ws *host.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CloseTimeout)
	defer cancel()
	s.closeSessionCtx(ctx, ws)
}

func (s *Server) closeSessionCtx(ctx context.Context, ws *host.Session) {
	if err := ws.Close(ctx); err != nil {
		s.log.Warn("mcp.session.close", "session", ws.Name(), "err", err)
		return
	}
	s.log.Info("mcp.session.close", "session", ws.Name())
}
