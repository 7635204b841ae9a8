//lint:file-ignore SA1019 MCP logging and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but functional for at least twelve months; wai serves clients of 2025-11-25, which use them (RATIONALE.md).

package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// This file sends the kernel's events about a client's calls to that
// client as notifications/message (MCP logging): policy decisions,
// workspace lifecycle steps, warnings. Nothing goes out before the client
// sets a level with logging/setLevel, and nothing below that level.

// mcpLevels maps MCP's syslog levels to slog's, as the SDK does.
var mcpLevels = map[mcp.LoggingLevel]slog.Level{
	"debug":     mcp.LevelDebug,
	"info":      mcp.LevelInfo,
	"notice":    mcp.LevelNotice,
	"warning":   mcp.LevelWarning,
	"error":     mcp.LevelError,
	"critical":  mcp.LevelCritical,
	"alert":     mcp.LevelAlert,
	"emergency": mcp.LevelEmergency,
}

func mcpLevelOf(l slog.Level) mcp.LoggingLevel {
	best, name := slog.Level(-1<<31), mcp.LoggingLevel("debug")
	for n, sl := range mcpLevels {
		if sl <= l && sl > best {
			best, name = sl, n
		}
	}
	return name
}

// clientLog is one client's host.EventSink.
type clientLog struct {
	ss    *mcp.ServerSession
	level atomic.Int64 // the slog level the client set
	set   atomic.Bool  // whether it set one
}

func newClientLog(ss *mcp.ServerSession) *clientLog { return &clientLog{ss: ss} }

func (c *clientLog) setLevel(l mcp.LoggingLevel) {
	if sl, ok := mcpLevels[l]; ok {
		c.level.Store(int64(sl))
		c.set.Store(true)
	}
}

// EventEnabled implements host.EventSink.
func (c *clientLog) EventEnabled(l slog.Level) bool {
	return c != nil && c.set.Load() && int64(l) >= c.level.Load()
}

// Event implements host.EventSink: the record becomes one notification
// whose data is {"event": message, attributes…}.
func (c *clientLog) Event(ctx context.Context, r slog.Record) {
	data := map[string]any{"event": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		data[a.Key] = a.Value.Resolve().Any()
		if d, ok := data[a.Key].(interface{ String() string }); ok {
			data[a.Key] = d.String() // durations, times: readable text
		}
		return true
	})
	c.send(ctx, r.Level, data)
}

// send logs data at level when the client wants it. Errors are dropped:
// a client that went away is not the kernel's problem.
func (c *clientLog) send(ctx context.Context, level slog.Level, data map[string]any) {
	if !c.EventEnabled(level) {
		return
	}
	if _, err := json.Marshal(data); err != nil {
		data = map[string]any{"event": data["event"], "error": "an attribute is not JSON"}
	}
	_ = c.ss.Log(context.WithoutCancel(ctx), &mcp.LoggingMessageParams{Logger: "wai", Level: mcpLevelOf(level), Data: data})
}

// step is the backend.ProgressFunc that reports a call's slow backend
// steps (pulling an image, starting a container) to the client at info.
func (c *clientLog) step(ctx context.Context) backend.ProgressFunc {
	return func(p backend.Progress) {
		if p.Done {
			return
		}
		c.send(ctx, slog.LevelInfo, map[string]any{"event": "backend.step", "step": p.Stage})
	}
}

// watchLevel records the level a client sets (logging/setLevel), which
// the SDK keeps to itself.
func (s *Server) watchLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "logging/setLevel" || err != nil {
			return res, err
		}
		p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if c := s.clientOf(ss); c != nil && p != nil {
			c.log.setLevel(p.Level)
		}
		return res, err
	}
}

// clientOf returns the admitted client of ss, or nil.
func (s *Server) clientOf(ss *mcp.ServerSession) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[ss]
}

// Interface guards
var _ host.EventSink = (*clientLog)(nil)
