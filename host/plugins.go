package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// needsRuntime reports whether cfg loads any Wasm plugin.
func needsRuntime(cfg Config) bool {
	if len(cfg.BundledTools) > 0 || len(cfg.Plugins) > 0 {
		return true
	}
	for _, p := range cfg.Policies {
		if p.Path != "" {
			return true
		}
	}
	return false
}

// loadTools loads the bundled tool plugins, then the configured ones, and
// registers their tools.
func (k *Kernel) loadTools(ctx context.Context, extra []injectedTool, embedded fs.FS) error {
	for _, name := range k.cfg.BundledTools {
		src, err := findBundled(k.cfg, embedded, name)
		if err != nil {
			return err
		}
		p, err := k.rt.Load(ctx, src)
		if err != nil {
			return fmt.Errorf("bundled tool plugin %s: %w", name, err)
		}
		k.plugins = append(k.plugins, p)
		where := src.Path
		if where == "" {
			where = name + ".wasm (built in)"
		}
		if err := k.registerTools(p, nil, where); err != nil {
			return err
		}
	}
	for i, pc := range k.cfg.Plugins {
		where := fmt.Sprintf("plugins[%d] (%s)", i, pc.Path)
		conf, err := pluginConfig(pc.Config)
		if err != nil {
			return backend.Errorf(backend.ErrInvalid, "config", where, "config: %v", err)
		}
		p, err := k.rt.Load(ctx, wasm.Source{Path: pc.Path, SHA256: pc.SHA256, Grants: pc.Grants, Config: conf, Name: pc.Name, Kind: wasm.KindTool})
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		k.plugins = append(k.plugins, p)
		if pc.Name != "" && p.Describe().Name != pc.Name {
			return backend.Errorf(backend.ErrInvalid, "config", where, "the plugin calls itself %q, not %q: fix name, or drop it", p.Describe().Name, pc.Name)
		}
		if err := k.registerTools(p, pc.Aliases, where); err != nil {
			return err
		}
	}
	for _, t := range extra {
		if err := k.registerTools(t.p, t.aliases, "WithTools"); err != nil {
			return err
		}
	}
	return nil
}

// pluginConfig turns a TOML table into Extism's string config: strings
// stay as they are, anything else is passed as JSON.
func pluginConfig(m map[string]any) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("key %s: %v", k, err)
		}
		out[k] = string(b)
	}
	return out, nil
}

// wasmPolicy is a policy plugin.
type wasmPolicy struct {
	p       *wasm.Plugin
	actions []string
}

func (w wasmPolicy) Name() string { return w.p.Describe().Name }

func (w wasmPolicy) Check(ctx context.Context, req CheckRequest) (Decision, error) {
	wr := wasm.CheckRequest{Action: req.Action, Command: req.Command, Shell: req.Shell, Script: req.Script, Cwd: req.Cwd,
		EnvKeys: req.EnvKeys, Path: req.Path, ResolvedPath: req.ResolvedPath, Tool: req.Tool, Session: req.Session}
	if req.Container != nil {
		b, err := json.Marshal(req.Container)
		if err != nil {
			return Decision{}, err
		}
		wr.Container = b
	}
	d, err := w.p.Check(ctx, wr)
	return Decision{Allow: d.Allow, Ask: d.Ask, Reason: d.Reason, ConfigKey: d.ConfigKey}, err
}

// judges reports whether the policy asked to see action.
func (w wasmPolicy) judges(action string) bool {
	return len(w.actions) == 0 || slices.Contains(w.actions, action)
}

// loadPolicyPlugin loads a policy plugin from a file.
func (k *Kernel) loadPolicyPlugin(ctx context.Context, i int, pc PolicyConfig) (Policy, error) {
	where := fmt.Sprintf("policies[%d] (%s)", i, pc.Path)
	conf, err := pluginConfig(pc.Config)
	if err != nil {
		return nil, backend.Errorf(backend.ErrInvalid, "config", where, "config: %v", err)
	}
	p, err := k.rt.Load(ctx, wasm.Source{Path: pc.Path, SHA256: pc.SHA256, Config: conf, Name: pc.Name, Kind: wasm.KindPolicy})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	k.plugins = append(k.plugins, p)
	d := p.Describe()
	if pc.Name != "" && d.Name != pc.Name {
		return nil, backend.Errorf(backend.ErrInvalid, "config", where, "the plugin calls itself %q, not %q: fix name, or drop it", d.Name, pc.Name)
	}
	return wasmPolicy{p: p, actions: d.Actions}, nil
}

// closePlugins closes every plugin and the runtime.
func (k *Kernel) closePlugins(ctx context.Context) error {
	var errs []error
	for _, p := range k.plugins {
		if err := p.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	k.plugins = nil
	if k.rt != nil {
		if err := k.rt.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Interface guards
var _ Policy = wasmPolicy{}
