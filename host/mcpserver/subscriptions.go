package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
)

// Subscriptions: a client subscribes to workspace files; after each of its
// tool calls that may change files, the files it watches are compared with
// what they were, and each changed one is announced with
// notifications/resources/updated, to that client only (wai://workspace/x
// of another client is another file).

// fileState is what a watched file was: absent, or its size and time.
type fileState struct {
	exists bool
	size   int64
	mod    time.Time
}

func (s *Server) stateOf(ctx context.Context, ws *host.Session, uri string) fileState {
	p, err := resourcePath(uri)
	if err != nil || ws == nil {
		return fileState{}
	}
	fi, err := ws.FS().Stat(ctx, p)
	if err != nil {
		return fileState{}
	}
	return fileState{exists: true, size: fi.Size, mod: fi.ModTime}
}

func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if _, err := resourcePath(uri); err != nil {
		return err
	}
	c := s.clientOf(req.Session)
	if c == nil {
		return fmt.Errorf("this MCP session was not initialized or has ended; reconnect")
	}
	st := s.stateOf(ctx, s.openedSession(req.Session), uri)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := c.watched[uri]; !ok && len(c.watched) >= maxSubscriptions {
		return fmt.Errorf("a client may watch at most %d files; unsubscribe from some first", maxSubscriptions)
	}
	if c.watched == nil {
		c.watched = map[string]fileState{}
	}
	c.watched[uri] = st
	return nil
}

func (s *Server) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	if c := s.clientOf(req.Session); c != nil {
		s.mu.Lock()
		delete(c.watched, req.Params.URI)
		s.mu.Unlock()
	}
	return nil
}

// announceChanges tells the client which of its watched files the call
// just made changed.
func (s *Server) announceChanges(ctx context.Context, ss *mcp.ServerSession) {
	c := s.clientOf(ss)
	ws := s.openedSession(ss)
	if c == nil || ws == nil {
		return
	}
	s.mu.Lock()
	uris := make([]string, 0, len(c.watched))
	for u := range c.watched {
		uris = append(uris, u)
	}
	s.mu.Unlock()
	for _, u := range uris {
		now := s.stateOf(ctx, ws, u)
		s.mu.Lock()
		before, still := c.watched[u]
		changed := still && now != before
		if changed {
			c.watched[u] = now
			if c.announcing == nil {
				c.announcing = map[string]bool{}
			}
			c.announcing[u] = true
		}
		s.mu.Unlock()
		if changed {
			_ = s.mcp.ResourceUpdated(context.WithoutCancel(ctx), &mcp.ResourceUpdatedNotificationParams{URI: u})
		}
	}
}

// onlyOwnUpdates drops a resources/updated notification bound for a
// client whose file did not change: the SDK sends one to every session
// subscribed to the URI, and each client's wai://workspace/x is its own.
func (s *Server) onlyOwnUpdates(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		c := s.clientOf(ss)
		if p == nil || c == nil {
			return nil, nil
		}
		s.mu.Lock()
		mine := c.announcing[p.URI]
		delete(c.announcing, p.URI)
		s.mu.Unlock()
		if !mine {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}
