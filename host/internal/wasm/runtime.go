package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/wai-dev/wai/host/backend"
)

// maxModuleBytes bounds a plugin file read into memory.
const maxModuleBytes = 256 << 20

// Runtime loads and runs plugins. It is safe for concurrent use.
type Runtime struct {
	opts  Options
	log   *slog.Logger
	cache wazero.CompilationCache

	// mem bounds the guest memory of all instances together; pools lists
	// every open pool, for trimming idle instances.
	mem         *budget
	stopJanitor context.CancelFunc
	janitorDone chan struct{}

	mu      sync.Mutex
	plugins map[*Plugin]struct{}
	pools   map[*pool]struct{}
	closed  bool
}

// NewRuntime creates a runtime. The compilation cache directory is
// created if missing.
func NewRuntime(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.MemoryLimitPages == 0 {
		opts.MemoryLimitPages = 1024
	}
	if opts.MemoryLimitPages > 65536 {
		return nil, backend.Errorf(backend.ErrInvalid, "wasm", "", "memory limit of %d pages exceeds the 4 GiB a 32-bit guest can address (65536 pages)", opts.MemoryLimitPages)
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 8
	}
	if opts.SessionConcurrentCalls <= 0 {
		opts.SessionConcurrentCalls = DefaultSessionConcurrentCalls
	}
	if opts.MemoryBudgetBytes <= 0 {
		opts.MemoryBudgetBytes = DefaultMemoryBudgetBytes
	}
	if opts.IdleInstanceTimeout <= 0 {
		opts.IdleInstanceTimeout = 2 * time.Minute
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = 5 * time.Second
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = 4 << 20
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 1 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{opts: opts, log: opts.Logger, plugins: map[*Plugin]struct{}{}, pools: map[*pool]struct{}{},
		mem: &budget{limit: opts.MemoryBudgetBytes}}
	r.mem.makeRoom = r.makeRoom
	settleWazeroVersion()
	if opts.CacheDir != "" {
		if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
			return nil, backend.Errorf(backend.ErrUnavailable, "wasm", opts.CacheDir, "cannot create the compilation cache directory: %v", err)
		}
		c, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			return nil, backend.Errorf(backend.ErrUnavailable, "wasm", opts.CacheDir, "cannot open the compilation cache: %v", err)
		}
		r.cache = c
	} else {
		r.cache = wazero.NewCompilationCache()
	}
	jctx, stop := context.WithCancel(context.Background())
	r.stopJanitor, r.janitorDone = stop, make(chan struct{})
	go r.janitor(jctx)
	return r, nil
}

var wazeroVersionOnce sync.Once

// settleWazeroVersion has wazero work out its own version once, before
// this process's first runtime goes on: wazero keeps it in a package
// variable it fills, unguarded, on first use (a compiling engine's, or a
// compilation cache directory's), so two kernels made at once raced on
// it (go test -race saw it). After the first use it is only read. A cache
// directory is the use every platform has (the interpreter, where there
// is no compiler, never asks for the version).
func settleWazeroVersion() {
	wazeroVersionOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wai-wazero-")
		if err != nil {
			ctx := context.Background()
			_ = wazero.NewRuntime(ctx).Close(ctx)
			return
		}
		_, _ = wazero.NewCompilationCacheWithDir(dir)
		_ = os.RemoveAll(dir)
	})
}

func (r *Runtime) runtimeConfig() wazero.RuntimeConfig {
	return wazero.NewRuntimeConfig().
		WithCompilationCache(r.cache).
		WithCloseOnContextDone(!r.opts.interruptOff).
		WithMemoryLimitPages(r.opts.MemoryLimitPages)
}

// Close closes every plugin still loaded, then the runtime. Calls in
// flight are given until ctx is done to finish.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	plugins := make([]*Plugin, 0, len(r.plugins))
	for p := range r.plugins {
		plugins = append(plugins, p)
	}
	r.mu.Unlock()
	r.stopJanitor()
	<-r.janitorDone
	var errs []error
	for _, p := range plugins {
		if err := p.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.cache.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("closing the wasm runtime: %w", errs[0])
	}
	return nil
}

// Load compiles a plugin (once: the compilation cache serves later
// loads), asks it to describe itself, checks its imports against what it
// was granted and readies its instance pool.
func (r *Runtime) Load(ctx context.Context, src Source) (*Plugin, error) {
	name := src.Name
	if name == "" {
		name = src.Path
	}
	if name == "" {
		name = "(bytes)"
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, errorf(name, "load", backend.ErrUnavailable, "the plugin runtime is closed")
	}
	p, data, grants, err := r.verify(name, src)
	if err != nil {
		return nil, err
	}
	if err := r.compile(ctx, p, data, src.Config); err != nil {
		return nil, err
	}
	if err := r.admit(ctx, p, grants, src); err != nil {
		p.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	r.log.LogAttrs(ctx, slog.LevelDebug, "plugin.loaded", slog.String("plugin", p.name),
		slog.String("kind", p.desc.Kind), slog.String("sha256", p.sha), slog.Any("granted", p.desc.Granted))
	return p, nil
}

// verify reads the module and checks it before anything runs: its pinned
// digest, the grants it is given, that it is WebAssembly importing only
// wai's host functions, and that it exports the describe function every
// wai plugin has. It returns the plugin as far as known, and the module.
func (r *Runtime) verify(name string, src Source) (*Plugin, []byte, capSet, error) {
	data, err := readModule(name, src)
	if err != nil {
		return nil, nil, nil, err
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	if want := strings.ToLower(strings.TrimSpace(src.SHA256)); want != "" && want != digest {
		return nil, nil, nil, errorf(name, "load", backend.ErrInvalid,
			"sha256 is %s but config pins %s: the file changed; if you trust the new file, update sha256 in its [[plugins]] entry", digest, want)
	}
	grants, err := parseCaps(name, "grants", src.Grants)
	if err != nil {
		return nil, nil, nil, err
	}
	info, err := inspectModule(data)
	if err != nil {
		return nil, nil, nil, &Error{Plugin: name, Op: "load", Kind: backend.ErrInvalid, Msg: "not a valid WebAssembly module", Cause: err}
	}
	imports, err := checkImports(name, info)
	if err != nil {
		return nil, nil, nil, err
	}
	if !info.exports[exportDescribe] {
		return nil, nil, nil, errorf(name, "load", backend.ErrInvalid, "does not export %s: it is not a wai plugin (docs/ABI.md)", exportDescribe)
	}
	return &Plugin{rt: r, name: name, sha: digest, imports: imports, exports: info.exports}, data, grants, nil
}

// compile compiles the module for p and readies its shared instance pool.
func (r *Runtime) compile(ctx context.Context, p *Plugin, data []byte, config map[string]string) error {
	manifest := extism.Manifest{
		Wasm:   []extism.Wasm{extism.WasmData{Data: data, Name: "main"}},
		Memory: &extism.ManifestMemory{MaxPages: r.opts.MemoryLimitPages, MaxVarBytes: 64 << 10},
		Config: config,
		// Timeout stays zero: deadlines come from the call's context, and
		// interruption is configured on the runtime directly.
	}
	// Each plugin gets its own wazero runtime from Extism, all sharing the
	// compilation cache. Extism never closes its compiled modules (closing
	// one would drop it from the engine every runtime sharing the cache
	// uses), so two plugins from one file, or a reload, stay safe.
	compiled, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		RuntimeConfig: r.runtimeConfig(),
		EnableWasi:    true,
	}, p.hostFunctions())
	if err != nil {
		return &Error{Plugin: p.name, Op: "load", Kind: backend.ErrInvalid, Msg: "cannot compile", Cause: err}
	}
	p.compiled = compiled
	p.shared = newPool(p, "", r.opts.PoolSize)
	if !r.addPool(p.shared) {
		p.Close(context.WithoutCancel(ctx))
		return errorf(p.name, "load", backend.ErrUnavailable, "the plugin runtime was closed while loading")
	}
	return nil
}

// admit asks the compiled plugin to describe itself, checks its kind
// and what it imports against what it declares and was granted, and
// registers it with the runtime. The caller closes p on error.
func (r *Runtime) admit(ctx context.Context, p *Plugin, grants capSet, src Source) error {
	loadName := p.name // the name the plugin is loaded by, until it describes itself
	desc, err := p.describe(ctx)
	if err != nil {
		return err
	}
	if src.Kind != "" && desc.Kind != src.Kind {
		return errorf(desc.Name, "load", backend.ErrInvalid, "is a %s plugin, not a %s plugin: list it under %s", desc.Kind, src.Kind, configSection(desc.Kind))
	}
	granted, err := grant(desc, grants, src.Bundled, p.imports)
	if err != nil {
		return err
	}
	desc.Granted = granted.list()
	p.desc = desc
	p.granted = granted
	p.name = desc.Name

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errorf(loadName, "load", backend.ErrUnavailable, "the plugin runtime was closed while loading")
	}
	r.plugins[p] = struct{}{}
	return nil
}

// configSection is where wai.toml lists plugins of a kind.
func configSection(kind string) string {
	if kind == KindPolicy {
		return "[[policies]]"
	}
	return "[[plugins]]"
}

func (r *Runtime) forget(p *Plugin) {
	r.mu.Lock()
	delete(r.plugins, p)
	r.mu.Unlock()
}

func readModule(name string, src Source) ([]byte, error) {
	switch {
	case src.Path != "" && src.Bytes != nil:
		return nil, errorf(name, "load", backend.ErrInvalid, "give a path or the module bytes, not both")
	case src.Bytes != nil:
		return src.Bytes, nil
	case src.Path == "":
		return nil, errorf(name, "load", backend.ErrInvalid, "no module: set path to a .wasm file")
	}
	f, err := os.Open(src.Path)
	if err != nil {
		kind := backend.ErrUnavailable
		if os.IsNotExist(err) {
			kind = backend.ErrNotFound
		}
		return nil, &Error{Plugin: name, Op: "load", Kind: kind, Msg: "cannot read the module", Cause: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Plugin: name, Op: "load", Kind: backend.ErrUnavailable, Msg: "cannot read the module", Cause: err}
	}
	if !st.Mode().IsRegular() || st.Size() > maxModuleBytes {
		return nil, errorf(name, "load", backend.ErrInvalid, "%s is not a regular file of at most %d MiB", src.Path, maxModuleBytes>>20)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, &Error{Plugin: name, Op: "load", Kind: backend.ErrUnavailable, Msg: "cannot read the module", Cause: err}
	}
	return data, nil
}
