//lint:file-ignore SA1019 MCP logging and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but functional for at least twelve months; wai serves clients of 2025-11-25, which use them (RATIONALE.md).

// Package mcpserver exposes a wai kernel as a Model Context Protocol server,
// over stdio or streamable HTTP, with the official Go SDK.
//
// Every kernel tool becomes an MCP tool with its JSON Schema, description and
// annotations. One MCP session is one wai session: its own workspace (and
// container), opened on the session's first tool call and closed when the
// client goes away. The kernel stays the only enforcement point: this package
// translates, it never reaches a backend itself.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
)

// Options shape a Server.
type Options struct {
	// Name and Version are what the server reports to clients.
	Name, Version string
	// Logger receives the SDK's and the server's own events; nil discards.
	Logger *slog.Logger
	// ProgressInterval is how often a running call reports progress to a
	// client that asked for it with a progress token; 0 means one second.
	ProgressInterval time.Duration
	// CloseTimeout bounds closing a wai session after its client left;
	// 0 means 30 seconds.
	CloseTimeout time.Duration
	// HTTPIdleTimeout closes an HTTP session (and its wai session, files
	// and all) that had no request open and no background job running for
	// this long: a client that vanished without ending its session must
	// not keep a container forever, and over HTTP that silence is the only
	// sign it left. A client holding a stream open (a GET, or a call still
	// running) is connected and is never closed by it; a running job
	// keeps the session until it ends (its own max runtime bounds it).
	// 0 means 30 minutes.
	HTTPIdleTimeout time.Duration
	// MaxSessions caps the MCP sessions the server holds at once; a client
	// past it is refused at initialize. 0 means config.DefaultMCPMaxSessions.
	MaxSessions int
	// MaxSessionsPerUser caps the sessions one user holds at once, so one
	// user's clients cannot fill MaxSessions and lock the others out; a
	// client past it is refused at initialize. 0 means MaxSessions.
	// config.MCP.SessionsPerUser gives the configured one.
	MaxSessionsPerUser int
	// User is the user stdio sessions, and HTTP sessions whose token names
	// none, are opened as ("" for none).
	User string
	// ClientRoots are the host directories under which a client's roots
	// may be copied into its workspace when its session opens (never
	// mounted); empty ignores client roots (config: mcp.client_roots).
	ClientRoots []string
}

// Server serves one kernel's tools over MCP.
type Server struct {
	k     *host.Kernel
	mcp   *mcp.Server
	opts  Options
	tools map[string]bool // the kernel's tools, fixed when it is built
	// linked are the tools whose results link the file they wrote;
	// mutating, those that may change files (not read-only).
	linked, mutating map[string]bool
	log              *slog.Logger

	// stopCalls ends every running call when the server shuts down: the
	// SDK closes a session only once its calls have returned.
	stopCalls   context.Context
	cancelCalls context.CancelFunc

	mu      sync.Mutex
	clients map[*mcp.ServerSession]*client
	closed  bool
	wg      sync.WaitGroup
}

// client is one MCP session the server admitted.
type client struct {
	user string
	ws   *host.Session // opened on the first tool call
	log  *clientLog    // the kernel's events for this client (MCP logging)
	// watched are the workspace files the client subscribed to, as they
	// were when last announced; announcing, those whose update is being
	// sent to it (guarded by Server.mu).
	watched    map[string]fileState
	announcing map[string]bool
	// roots copies the client's roots into its workspace once, before
	// its first call runs.
	roots sync.Once
}

// New builds a server offering every tool of k. The kernel's tool set is
// fixed when it is built, so the list is read once here.
func New(k *host.Kernel, opts Options) (*Server, error) {
	if opts.Name == "" {
		opts.Name = "wai"
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = time.Second
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = 30 * time.Second
	}
	if opts.HTTPIdleTimeout <= 0 {
		opts.HTTPIdleTimeout = 30 * time.Minute
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = config.DefaultMCPMaxSessions
	}
	if opts.MaxSessionsPerUser <= 0 || opts.MaxSessionsPerUser > opts.MaxSessions {
		opts.MaxSessionsPerUser = opts.MaxSessions
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{k: k, opts: opts, log: log, clients: map[*mcp.ServerSession]*client{}, tools: map[string]bool{}}
	s.stopCalls, s.cancelCalls = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Logger:       log,
		Instructions: instructionsFor(k),
		// Only the session-based protocol versions: a wai session is a
		// workspace that lives across calls, which the sessionless
		// 2026-07-28 protocol has no place for. Clients negotiate down.
		SupportedProtocolVersions: sessionVersions(),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Logging:   &mcp.LoggingCapabilities{},
			Resources: &mcp.ResourceCapabilities{Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{},
		},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
	})
	for _, t := range k.Tools() {
		tool, err := toMCPTool(t)
		if err != nil {
			return nil, err
		}
		s.mcp.AddTool(tool, s.handler(t.Name))
		s.tools[t.Name] = true
	}
	s.addResources()
	s.addPrompts()
	s.mcp.AddReceivingMiddleware(s.admit, s.watchLevel, s.listResources, s.unknownTool)
	s.mcp.AddSendingMiddleware(s.onlyOwnUpdates)
	return s, nil
}

// unknownTool answers a call to a tool wai does not have with the
// kernel's refusal, which names the nearest tool, rather than the SDK's
// bare "unknown tool": a model that misspelt a name is told the right one.
func (s *Server) unknownTool(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || r.Params == nil || s.hasTool(r.Params.Name) {
			return next(ctx, method, req)
		}
		// Refused before any session or sandbox is made.
		if _, err := s.k.Call(ctx, "", r.Params.Name, nil); err != nil && protocolError(err) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		return next(ctx, method, req)
	}
}

func (s *Server) hasTool(name string) bool { return s.tools[name] }

func sessionVersions() []string {
	var vs []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			vs = append(vs, v)
		}
	}
	return vs
}

// MCP returns the underlying SDK server, for transports this package does
// not wrap.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client over t (a StdioTransport, for instance) until it
// disconnects or ctx ends, then shuts the server down: running calls are
// cancelled (their commands killed) and every wai session is closed.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	left := make(chan error, 1)
	go func() { left <- ss.Wait() }()
	select {
	case err = <-left:
	case <-ctx.Done():
	}
	s.Close()
	if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		return err
	}
	return nil
}

func toMCPTool(t host.Tool) (*mcp.Tool, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var probe map[string]any
	if err := json.Unmarshal(schema, &probe); err != nil || probe["type"] != "object" {
		return nil, backend.Errorf(backend.ErrInvalid, "mcp.serve", t.Name,
			"tool %q (plugin %s) has an input schema MCP cannot offer: it must be a JSON object schema with \"type\": \"object\"; fix the plugin's schema", t.Name, t.Plugin)
	}
	mt := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
	if len(t.OutputSchema) > 0 {
		// The kernel holds every result value to this schema, so the
		// structuredContent of a call always matches it.
		mt.OutputSchema = t.OutputSchema
	}
	if a := t.Annotations; a != nil {
		mt.Annotations = &mcp.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
		if a.Title != "" {
			mt.Title = a.Title
		}
	}
	return mt, nil
}

// handler runs one kernel tool for an MCP call. The kernel validates the
// params against the schema, so the SDK's raw handler form is used: one
// validation, with the kernel's messages.
func (s *Server) handler(tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := callArgs(req)
		if err != nil {
			return nil, err
		}
		ws, err := s.session(ctx, req.Session)
		if err != nil {
			return toolError(err), nil
		}
		var rootsNote string
		if c := s.clientOf(req.Session); c != nil {
			c.roots.Do(func() { rootsNote = s.copyRoots(ctx, req.Session, ws) })
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.stopCalls, cancel)()
		var steps backend.ProgressFunc
		if c := s.clientOf(req.Session); c != nil {
			ctx = host.WithEventSink(ctx, c.log)
			steps = c.log.step(ctx)
		}
		pctx, stop := s.progress(ctx, req, steps)
		res, err := s.k.Call(pctx, ws.Name(), tool, args)
		stop()
		if s.mutating[tool] && ctx.Err() == nil {
			s.announceChanges(ctx, req.Session)
		}
		if err != nil && ctx.Err() != nil {
			if s.stopCalls.Err() != nil {
				// The server, not the client, ended it: a bare
				// "context canceled" would leave the model guessing.
				return nil, &jsonrpc.Error{Code: codeUnavailable, Message: "wai: the server is shutting down, so the call was stopped " +
					"and its command killed; reconnect to a running wai serve and run it again"}
			}
			// Cancelled by the client (or it went away): the stdio
			// transport drops the SDK's answer to a cancelled request.
			return nil, ctx.Err()
		}
		var out *mcp.CallToolResult
		if err != nil {
			// Params the schema refuses, refusals and an unavailable
			// sandbox are all answers the model must read to change
			// course, so they are tool results with isError (MCP
			// 2025-11-25, SEP-1303): many hosts never show the model a
			// JSON-RPC error. Only an unknown tool (unknownTool) and a
			// malformed request stay JSON-RPC errors.
			out = toolError(err)
		} else {
			out = s.toResult(tool, res)
		}
		if rootsNote != "" {
			out.Content = append(out.Content, &mcp.TextContent{Text: rootsNote})
		}
		return out, nil
	}
}

// toResult is a kernel result as MCP: its message, its value as
// structured content, and a resource_link to the file it wrote, if any.
func (s *Server) toResult(tool string, res host.ToolResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: res.Message}},
		IsError: !res.OK,
	}
	if v := structured(res.Value); v != nil {
		out.StructuredContent = v
	}
	if l := s.link(tool, res.Value); l != nil && res.OK {
		out.Content = append(out.Content, l)
	}
	return out
}

// callArgs returns a call's arguments ({} for none). Arguments that are
// not a JSON object make a malformed request, a JSON-RPC error: only a
// well-formed call's validation failures are results the model reads.
func callArgs(req *mcp.CallToolRequest) (json.RawMessage, error) {
	args := bytes.TrimSpace(req.Params.Arguments)
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if args[0] != '{' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: tools/call arguments must be a JSON object, such as {\"name\": \"value\"}"}
	}
	return args, nil
}

// protocolError reports whether err is the kernel refusing the call itself
// (an unknown tool, params failing the schema) rather than something the
// tool ran into.
func protocolError(err error) bool {
	var be *backend.Error
	if !errors.As(err, &be) || be.Op != "call" {
		return false
	}
	return errors.Is(be.Kind, backend.ErrInvalid) || errors.Is(be.Kind, backend.ErrNotFound)
}

func toolError(err error) *mcp.CallToolResult {
	msg := err.Error()
	if h := hint(err); h != "" {
		msg += "\n(" + h + ")"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

// hint tells the model what kind of trouble an error is. A call that ran
// out of time is kinded unavailable too (docs/ABI.md), but the sandbox
// serves fine: telling the model it is down, and the operator to check
// it, sends both looking for an outage instead of at the long command.
func hint(err error) string {
	if errors.Is(err, host.ErrPolicyFailed) {
		// Another command meets the same broken policy: only the
		// operator can fix it, and the model should tell them.
		return "the policy that judges this is broken and refuses what it judges; tell the operator, who must fix or remove it"
	}
	switch backend.KindOf(err) {
	case backend.ErrPermission:
		return "a policy refused this; try a different command or approach"
	case backend.ErrUnavailable:
		if errors.Is(err, context.DeadlineExceeded) {
			return "the call ran out of time; the sandbox itself is fine: run long work in the background " +
				"(job_start, or exec_background for a managed container) and poll it, or split it into shorter steps"
		}
		return "the sandbox cannot serve right now; the operator should check the backend (wai preflight)"
	case backend.ErrNotFound:
		return "check the path, name or id"
	}
	return ""
}

// structured returns a tool's value as MCP structured content, which must
// be a JSON object: other values are wrapped as {"value": …}.
func structured(v json.RawMessage) any {
	t := strings.TrimSpace(string(v))
	switch {
	case t == "" || t == "null":
		return nil
	case strings.HasPrefix(t, "{"):
		return json.RawMessage(t)
	}
	return map[string]json.RawMessage{"value": json.RawMessage(t)}
}
