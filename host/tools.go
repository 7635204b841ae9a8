package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// Tool describes one callable tool.
type Tool struct {
	// Name is what callers use: the plugin's name for the tool, or the
	// alias config gave it.
	Name string
	// Plugin is the name of the plugin that provides it.
	Plugin string
	// Original is the plugin's own name for the tool when it is aliased.
	Original    string
	Description string
	// InputSchema is the JSON Schema params are validated against.
	InputSchema json.RawMessage
	// OutputSchema, when the plugin declares one, is the JSON Schema (an
	// object schema) every result Value of the tool satisfies: the kernel
	// checks each one against it (see checkOutput).
	OutputSchema json.RawMessage
	Annotations  *ToolAnnotations
}

// ToolAnnotations are hints about a tool's behaviour, as MCP defines them.
// Pointers are hints whose default is true.
type ToolAnnotations struct {
	Title           string
	ReadOnlyHint    bool
	DestructiveHint *bool
	IdempotentHint  bool
	OpenWorldHint   *bool
}

// ToolResult is a tool's answer. A failed result (OK false) is an answer
// for the model, not an error: errors are for calls that produced none.
type ToolResult struct {
	OK      bool
	Message string
	Value   json.RawMessage // JSON, or nil
	// Sandboxed is false when the session runs unsandboxed (the host
	// backend, named or as fallback). The model is told too: the Message
	// of a tool that may run commands then ends with unsandboxedNote (a
	// file tool's stays as it is: its files are confined to the workspace
	// on every backend, and a line after a file's text would read as part
	// of it). Value stays the plugin's own.
	Sandboxed bool
	// Duration is how long the call took, validation included.
	Duration time.Duration
}

// toolPlugin is what the kernel needs of a loaded tool plugin; the Wasm
// runtime's *wasm.Plugin is one.
type toolPlugin interface {
	Describe() wasm.Description
	CallTool(ctx context.Context, env wasm.Env, req wasm.ToolCall) (wasm.ToolResult, error)
	Close(ctx context.Context) error
}

// toolEntry is one tool in the kernel's table.
type toolEntry struct {
	tool   Tool
	plugin toolPlugin
	schema *jsonschema.Resolved
	output *jsonschema.Resolved // nil: the tool declares no output schema
	// runsCommands: the plugin may use the shell capability, so its
	// description must say where commands run (backendNote).
	runsCommands bool
}

// registerTools adds a plugin's tools under their names or aliases. A name
// two plugins export is refused: one tool silently shadowing another
// would send calls to code nobody chose.
func (k *Kernel) registerTools(p toolPlugin, aliases map[string]string, where string) error {
	d := p.Describe()
	if d.Kind != wasm.KindTool {
		return backend.Errorf(backend.ErrInvalid, "config", where, "plugin %s is a %s plugin, not a tool plugin: list it under [[policies]]", d.Name, d.Kind)
	}
	has := map[string]bool{}
	for _, spec := range d.Tools {
		has[spec.Name] = true
	}
	for orig := range aliases {
		if !has[orig] {
			names := slices.Sorted(maps.Keys(has))
			return backend.Errorf(backend.ErrInvalid, "config", where, "aliases names tool %q, which plugin %s does not have (it has: %s)%s",
				orig, d.Name, strings.Join(names, ", "), didYouMean(orig, names))
		}
	}
	disabled := map[string]bool{}
	for _, t := range k.cfg.DisabledTools {
		disabled[t] = true
	}
	for _, spec := range d.Tools {
		name := spec.Name
		if a, ok := aliases[spec.Name]; ok {
			if !wasm.ValidName(a) {
				return backend.Errorf(backend.ErrInvalid, "config", where, "alias %q for tool %s must be 1–64 characters of [A-Za-z0-9_-]", a, spec.Name)
			}
			name = a
		}
		k.exported[name] = true
		if disabled[name] {
			continue
		}
		if prev, dup := k.tools[name]; dup {
			return backend.Errorf(backend.ErrInvalid, "config", where,
				"tool %q is exported by both plugin %s and plugin %s: rename one with aliases = { %s = \"new_name\" } in its [[plugins]] entry",
				name, prev.tool.Plugin, d.Name, spec.Name)
		}
		schema, err := resolveSchema(spec.InputSchema)
		if err != nil {
			return backend.Errorf(backend.ErrInvalid, "plugin", d.Name, "tool %s has an unusable input schema: %v", spec.Name, err)
		}
		output, err := resolveOutputSchema(spec.OutputSchema)
		if err != nil {
			return backend.Errorf(backend.ErrInvalid, "plugin", d.Name, "tool %s has an unusable output schema: %v", spec.Name, err)
		}
		t := Tool{Name: name, Plugin: d.Name, Description: spec.Description, InputSchema: spec.InputSchema, OutputSchema: spec.OutputSchema}
		if name != spec.Name {
			t.Original = spec.Name
		}
		if a := spec.Annotations; a != nil {
			t.Annotations = &ToolAnnotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
				IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
		}
		k.tools[name] = &toolEntry{tool: t, plugin: p, schema: schema, output: output, runsCommands: runsCommands(d)}
	}
	return nil
}

// checkDisabledTools refuses a disabled_tools entry that names no tool the
// loaded plugins export: a misspelt name would leave enabled the very tool
// it was meant to turn off. With no tool plugins loaded (wai exec loads
// none) there is nothing to check against.
func (k *Kernel) checkDisabledTools() error {
	if len(k.exported) == 0 {
		return nil
	}
	var errs []error
	for _, t := range k.cfg.DisabledTools {
		if !k.exported[t] {
			names := slices.Sorted(maps.Keys(k.exported))
			errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", k.cfg.Source,
				"disabled_tools names %q, which no loaded plugin exports%s (tools: %s): fix the name, or remove it",
				t, didYouMean(t, names), strings.Join(names, ", ")))
		}
	}
	return errors.Join(errs...)
}

// runsCommands reports whether a plugin may run commands: it was granted
// the shell capability (or, for a plugin handed in by Go code, declares it).
func runsCommands(d wasm.Description) bool {
	caps := d.Granted
	if caps == nil {
		caps = d.Capabilities
	}
	for _, c := range caps {
		if c == "shell" {
			return true
		}
	}
	return false
}

// Tools lists every callable tool, sorted by name. The description of a
// tool whose timeout and output follow the host's limits states them as
// configured (limitsNote); once the kernel's backend is chosen (Info),
// that of a tool that runs commands ends with where they run: in a
// sandbox, or on the host without one.
func (k *Kernel) Tools() []Tool {
	k.mu.Lock()
	chosen := k.chosen
	k.mu.Unlock()
	out := make([]Tool, 0, len(k.tools))
	for _, e := range k.tools {
		t := e.tool
		if hostTimed(t) {
			t.Description = strings.TrimSpace(t.Description) + " " + limitsNote(k.cfg.Limits)
		}
		if chosen != nil && e.runsCommands {
			t.Description = strings.TrimSpace(t.Description) + " " + commandsNote(chosen.info)
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Call runs one tool for a session (created if needed; "" makes a
// throwaway one). The steps: find the tool → validate params against its
// schema (ErrInvalid) → authorize it for the session (ErrPermission) →
// bound it by the tool's configured deadline (a shorter deadline on ctx
// wins, a longer one never does) → run the plugin, whose capability uses
// go through the session's guarded Shell and FS.
func (k *Kernel) Call(ctx context.Context, session, tool string, params json.RawMessage) (ToolResult, error) {
	start := time.Now()
	res, sess, err := k.call(ctx, session, tool, params)
	res.Duration = time.Since(start)
	k.toolEvent(ctx, sess, tool, res, err)
	return res, err
}

func (k *Kernel) call(ctx context.Context, session, tool string, params json.RawMessage) (ToolResult, string, error) {
	e, ok := k.tools[tool]
	if !ok {
		return ToolResult{}, session, backend.Errorf(backend.ErrNotFound, "call", tool, "no such tool%s (tools: %s)",
			didYouMean(tool, k.toolNames()), strings.Join(k.toolNames(), ", "))
	}
	params, err := validateParams(e, params)
	if err != nil {
		return ToolResult{}, session, err
	}
	s, err := k.Session(ctx, session, SessionOptions{})
	if err != nil {
		return ToolResult{}, session, err
	}
	session = s.Name()
	if !s.toolEnabled(tool) {
		return ToolResult{}, session, backend.Errorf(backend.ErrPermission, "call", tool, "the tool is not enabled for session %s", session)
	}
	// The backend is chosen before anything runs, so that every result
	// can say where it ran, and an unavailable one fails every call alike.
	chosen, err := k.resolve(ctx)
	if err != nil {
		return ToolResult{}, session, err
	}
	done, err := s.begin()
	if err != nil {
		return ToolResult{}, session, err
	}
	defer done()

	timeout := k.cfg.ToolTimeout(tool)
	var soft *softCall
	if st, ok := k.cfg.SoftTimeouts[tool]; ok {
		// The call must outlive its commands' hard cap, or a command
		// extended past the tool's deadline would lose its result.
		timeout = max(timeout, st.HardCap+softCallMargin)
		ctx, soft = withSoftCall(ctx, st)
	}
	bound := fmt.Sprintf("its deadline of %s (tool_timeouts in the config sets it)", timeout)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		bound = "the caller's deadline"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	callID := randomHex(8)
	ctx = withCall(ctx, tool, callID)
	name := e.tool.Name
	if e.tool.Original != "" {
		name = e.tool.Original
	}
	dl, _ := ctx.Deadline()
	r, err := e.plugin.CallTool(ctx, callEnv{s}, wasm.ToolCall{Tool: name, Params: params, CallID: callID, Session: session, Deadline: dl, Scope: s.plugins})
	if err != nil {
		// A call that waited out its deadline for a slot says so, not
		// that it ran too long.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, wasm.ErrSessionBusy) {
			return ToolResult{}, session, &backend.Error{Kind: backend.ErrUnavailable, Op: "call", Path: tool,
				Msg: "did not finish within " + bound, Err: context.DeadlineExceeded}
		}
		return ToolResult{}, session, err
	}
	if err := checkOutput(e, r.OK, r.Value); err != nil {
		return ToolResult{}, session, err
	}
	res := ToolResult{OK: r.OK, Message: r.Message, Value: r.Value, Sandboxed: s.sandboxedOr(chosen.info.Sandboxed)}
	res.Message = soft.appendSummary(res.Message)
	if !res.Sandboxed && e.runsCommands {
		res.Message = strings.TrimRight(res.Message, "\n") + "\n\n" + unsandboxedNote(chosen.info)
	}
	return res, session, nil
}

// unsandboxedNote ends the message of every result of a command tool in
// an unsandboxed session: the model must not believe in a sandbox it does
// not have.
func unsandboxedNote(info BackendInfo) string {
	return "[wai: this ran on the " + info.Backend + " backend: NOT sandboxed; commands run directly on the host]"
}

// validateParams checks params against the tool's schema and returns them
// normalised ("{}" for none).
func validateParams(e *toolEntry, params json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		params = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(params, &v); err != nil {
		return nil, backend.Errorf(backend.ErrInvalid, "call", e.tool.Name,
			"params are not valid JSON: %s; send a JSON object such as {\"field\": \"value\"}", jsonProblem(params, err))
	}
	if err := e.schema.Validate(v); err != nil {
		return nil, backend.Errorf(backend.ErrInvalid, "call", e.tool.Name, "invalid params: %s",
			paramsProblem(e.tool.Name, e.schema.Schema(), v, err))
	}
	return params, nil
}

// schemaError shortens the validator's nested "validating …:" prefixes to
// the part that names the field and what is wrong with it.
func schemaError(err error) string {
	msg := wholeRat.ReplaceAllString(err.Error(), "$1")
	parts := strings.Split(msg, ": validating ")
	if len(parts) > 1 {
		last := parts[len(parts)-1]
		// last is "<schema path>: <reason>".
		if i := strings.Index(last, ": "); i >= 0 {
			field := strings.TrimPrefix(last[:i], "root")
			field = strings.ReplaceAll(field, "/properties/", ".")
			field = strings.TrimPrefix(field, ".")
			if field == "" {
				return last[i+2:]
			}
			return field + ": " + last[i+2:]
		}
	}
	return strings.TrimPrefix(msg, "validating root: ")
}

// wholeRat matches the validator's rendering of whole numbers ("0/1").
var wholeRat = regexp.MustCompile(`\b(-?\d+)/1\b`)

func (k *Kernel) toolNames() []string {
	return slices.Sorted(maps.Keys(k.tools))
}

func (k *Kernel) toolEvent(ctx context.Context, session, tool string, res ToolResult, err error) {
	level := slog.LevelInfo
	outcome := "ok"
	switch {
	case err != nil:
		level = slog.LevelWarn
		outcome = "error"
		switch backend.KindOf(err) {
		case backend.ErrInvalid:
			outcome = "invalid"
		case backend.ErrPermission:
			outcome = "denied"
		case backend.ErrNotFound:
			outcome = "not_found"
		}
		if errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
	case !res.OK:
		outcome = "failed"
	}
	if !k.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("tool", tool), slog.String("session", session),
		slog.Duration("duration", res.Duration), slog.String("outcome", outcome)}
	if e, ok := k.tools[tool]; ok {
		attrs = append(attrs, slog.String("plugin", e.tool.Plugin))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	k.log.LogAttrs(ctx, level, "tool.call", attrs...)
}
