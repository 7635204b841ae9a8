package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"

	extism "github.com/extism/go-sdk"

	"github.com/wai-dev/wai/host/backend"
)

// maxLogMessage bounds one wai_log message as recorded.
const maxLogMessage = 8 << 10

// handler serves one host function: req is the raw JSON request.
type handler func(ctx context.Context, env Env, p *Plugin, req []byte) (any, error)

var handlers = map[string]handler{
	"wai_shell_exec": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r execRequest
		if err := decodeRequest("exec", b, &r); err != nil {
			return nil, err
		}
		req, err := r.backend()
		if err != nil {
			return nil, err
		}
		res, err := env.Shell().Execute(ctx, req)
		return toExecResult(res), err
	},
	"wai_shell_script": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r scriptRequest
		if err := decodeRequest("exec.script", b, &r); err != nil {
			return nil, err
		}
		req, err := r.backend()
		if err != nil {
			return nil, err
		}
		res, err := env.Shell().ExecuteScript(ctx, req)
		return toExecResult(res), err
	},
	"wai_shell_which": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r whichRequest
		if err := decodeRequest("which", b, &r); err != nil {
			return nil, err
		}
		res, err := env.Shell().Which(ctx, r.Command)
		return whichResult{Command: res.Command, Path: res.Path, Found: res.Found()}, err
	},
	"wai_shell_env": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		if err := decodeRequest("env", b, &empty{}); err != nil {
			return nil, err
		}
		res, err := env.Shell().Env(ctx)
		return toEnvResult(res), err
	},
	"wai_shell_info": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		if err := decodeRequest("info", b, &empty{}); err != nil {
			return nil, err
		}
		i, err := env.Shell().Info(ctx)
		if err != nil {
			return nil, err
		}
		return infoResult{Backend: i.Backend, Sandboxed: i.Sandboxed, NetworkEnabled: i.NetworkEnabled, DefaultTimeoutMS: ms(i.DefaultTimeout)}, nil
	},
	"wai_fs_stat": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r pathRequest
		if err := decodeRequest("fs.stat", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Stat(ctx, r.Path)
		return toFileInfo(res), err
	},
	"wai_fs_list": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r pathRequest
		if err := decodeRequest("fs.list", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().List(ctx, r.Path)
		out := listResult{Entries: make([]fileInfo, len(res.Entries)), Truncated: res.Truncated}
		for i, e := range res.Entries {
			out.Entries[i] = toFileInfo(e)
		}
		return out, err
	},
	"wai_fs_read": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r readRequest
		if err := decodeRequest("fs.read", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Read(ctx, backend.ReadRequest{Path: r.Path, Offset: r.Offset, Limit: r.Limit})
		return readResult{Path: res.Path, Offset: res.Offset, Lines: nonNil(res.Lines), TotalLines: res.TotalLines, Truncated: res.Truncated}, err
	},
	"wai_fs_write": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r writeRequest
		if err := decodeRequest("fs.write", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Write(ctx, backend.WriteRequest{Path: r.Path, Content: r.Content, Mode: backend.WriteMode(r.Mode)})
		return writeResult{Path: res.Path, Bytes: res.Bytes, Created: res.Created}, err
	},
	"wai_fs_edit": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r editRequest
		if err := decodeRequest("fs.edit", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Edit(ctx, backend.EditRequest{Path: r.Path, Old: r.Old, New: r.New, ReplaceAll: r.ReplaceAll})
		return editResult{Path: res.Path, Replacements: res.Replacements}, err
	},
	"wai_fs_glob": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r globRequest
		if err := decodeRequest("fs.glob", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Glob(ctx, backend.GlobRequest{Pattern: r.Pattern, Path: r.Path})
		return globResult{Paths: nonNil(res.Paths), Truncated: res.Truncated}, err
	},
	"wai_fs_grep": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r grepRequest
		if err := decodeRequest("fs.grep", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Grep(ctx, backend.GrepRequest{Pattern: r.Pattern, Path: r.Path, Glob: r.Glob})
		out := grepResult{Matches: make([]grepMatch, len(res.Matches)), Truncated: res.Truncated}
		for i, m := range res.Matches {
			out.Matches[i] = grepMatch{Path: m.Path, Line: m.Line, Text: m.Text}
		}
		return out, err
	},
	"wai_fs_remove": func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		var r removeRequest
		if err := decodeRequest("fs.remove", b, &r); err != nil {
			return nil, err
		}
		res, err := env.FS().Remove(ctx, backend.RemoveRequest{Path: r.Path, Recursive: r.Recursive})
		return removeResult{Removed: res.Removed}, err
	},
	"wai_lifecycle_start": lifecycleHandler("lifecycle.start", backend.Lifecycle.Start),
	"wai_lifecycle_stop":  lifecycleHandler("lifecycle.stop", backend.Lifecycle.Stop),
	"wai_lifecycle_state": lifecycleHandler("lifecycle.state", backend.Lifecycle.State),
	"wai_containers":      serveContainers,
	"wai_log":             serveLog,
}

// serveContainers hands a containers request to the kernel, which
// decodes, checks and runs it (the policy chain judges every operation).
func serveContainers(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
	ce, ok := env.(ContainersEnv)
	if !ok {
		return nil, backend.Errorf(backend.ErrUnavailable, "containers", "", "this host does not manage containers")
	}
	return ce.Containers(ctx, b)
}

func lifecycleHandler(op string, f func(backend.Lifecycle, context.Context) (backend.LifecycleState, error)) handler {
	return func(ctx context.Context, env Env, _ *Plugin, b []byte) (any, error) {
		if err := decodeRequest(op, b, &empty{}); err != nil {
			return nil, err
		}
		lc := env.Lifecycle()
		if lc == nil {
			return nil, backend.Errorf(backend.ErrUnavailable, op, "", "this session's backend has no lifecycle to manage (only container backends such as podman have one)")
		}
		st, err := f(lc, ctx)
		return toLifecycleState(st), err
	}
}

func serveLog(ctx context.Context, env Env, p *Plugin, b []byte) (any, error) {
	var r logRequest
	if err := decodeRequest("log", b, &r); err != nil {
		return nil, err
	}
	var level slog.Level
	switch r.Level {
	case "debug":
		level = slog.LevelDebug
	case "", "info":
		level = slog.LevelInfo
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, backend.Errorf(backend.ErrInvalid, "log", "", "level %q is not one of debug, info, warn, error", r.Level)
	}
	msg := r.Message
	if len(msg) > maxLogMessage {
		msg = msg[:maxLogMessage] + " [truncated]"
	}
	attrs := []slog.Attr{slog.String("plugin", p.name)}
	if env != nil {
		attrs = append(attrs, slog.String("session", env.Session()))
	}
	if len(r.Attrs) > 0 {
		keys := slices.Sorted(maps.Keys(r.Attrs))
		group := make([]any, 0, len(keys))
		for _, k := range keys {
			group = append(group, slog.Any(k, r.Attrs[k]))
		}
		attrs = append(attrs, slog.Group("attrs", group...))
	}
	p.rt.log.LogAttrs(ctx, level, "plugin.log: "+msg, attrs...)
	return empty{}, nil
}

func decodeRequest(op string, b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	if err := decodeStrict(b, v); err != nil {
		return backend.Errorf(backend.ErrInvalid, op, "", "bad request JSON: %v (docs/ABI.md gives the shape)", err)
	}
	return nil
}

// hostFunctions builds the host functions of one plugin. Each exists for
// every plugin, so a module that imports it links; whether it serves is
// decided per call by the plugin's grants and the call's Env.
func (p *Plugin) hostFunctions() []extism.HostFunction {
	names := slices.Sorted(maps.Keys(hostCaps))
	fns := make([]extism.HostFunction, 0, len(names))
	for _, name := range names {
		fns = append(fns, extism.NewHostFunctionWithStack(name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			stack[0] = p.serve(ctx, cp, name, stack[0])
		}, []extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR}))
	}
	return fns
}

// serve answers one host-function call: it never panics and always
// returns a response block, or 0 when guest memory has no room for one.
func (p *Plugin) serve(ctx context.Context, cp *extism.CurrentPlugin, name string, off uint64) uint64 {
	resp := pad8(p.respond(ctx, cp, name, off))
	// Memory operations on the Extism kernel must not see a cancelled
	// context: wazero would close the kernel module under us.
	mctx := context.WithoutCancel(ctx)
	ptr, err := cp.AllocWithContext(mctx, uint64(len(resp)))
	if err != nil || ptr == 0 || ptr >= 1<<32 {
		return 0
	}
	if !cp.Memory().Write(uint32(ptr), resp) {
		return 0
	}
	return ptr
}

func (p *Plugin) respond(ctx context.Context, cp *extism.CurrentPlugin, name string, off uint64) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			p.logger().Error("host function panicked", slog.String("function", name), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			resp = errorJSON(fmt.Errorf("%s: host function failed internally: %v", name, r))
		}
	}()
	capability := hostCaps[name]
	if !p.granted[capability] {
		return errorJSON(backend.Errorf(backend.ErrPermission, name, "", "plugin %s was not granted capability %q", p.name, capability))
	}
	st, _ := ctx.Value(stateKey{}).(*callState)
	var env Env
	if st != nil {
		env = st.env
	}
	if env == nil && capability != CapLog {
		return errorJSON(backend.Errorf(backend.ErrPermission, name, "", "host functions other than wai_log serve only inside wai_call, not in wai_describe or wai_check"))
	}
	req, err := p.readRequest(ctx, cp, off)
	if err != nil {
		return errorJSON(err)
	}
	if err := ctx.Err(); err != nil {
		return errorJSON(backend.Errorf(backend.ErrUnavailable, name, "", "the call's deadline has passed: %v", err))
	}
	out, err := handlers[name](ctx, env, p, req)
	if err != nil {
		return errorJSON(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorJSON(fmt.Errorf("%s: cannot encode the response: %v", name, err))
	}
	return b
}

// readRequest copies the request block at off out of the Extism kernel
// memory, refusing offsets that name no block and blocks over the limit.
func (p *Plugin) readRequest(ctx context.Context, cp *extism.CurrentPlugin, off uint64) ([]byte, error) {
	if off == 0 {
		return nil, nil // no request: the same as {}
	}
	if off >= 1<<32 {
		return nil, backend.Errorf(backend.ErrInvalid, "request", "", "offset %#x is outside Extism memory; pass the offset extism alloc returned", off)
	}
	n, err := cp.LengthWithContext(context.WithoutCancel(ctx), off)
	if err != nil || n == 0 {
		return nil, backend.Errorf(backend.ErrInvalid, "request", "", "offset %#x is not the start of an Extism memory block; pass the offset extism alloc returned", off)
	}
	if n > uint64(p.rt.opts.MaxRequestBytes) {
		return nil, backend.Errorf(backend.ErrInvalid, "request", "", "request is %d bytes, over the limit of %d", n, p.rt.opts.MaxRequestBytes)
	}
	buf, ok := cp.Memory().Read(uint32(off), uint32(n))
	if !ok {
		return nil, backend.Errorf(backend.ErrInvalid, "request", "", "block at %#x of %d bytes lies outside Extism memory", off, n)
	}
	return append([]byte(nil), buf...), nil
}

func errorJSON(err error) []byte {
	b, mErr := json.Marshal(errorResponse{Error: toWireError(err)})
	if mErr != nil {
		return []byte(fmt.Sprintf(`{"error":{"kind":"internal","message":%q}}`, "cannot encode an error"))
	}
	return b
}
