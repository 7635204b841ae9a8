package config

import (
	"context"
	"os"
	"path/filepath"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// PluginInfo is what a plugin file declares and needs, for review before
// it is configured: `wai plugin inspect`.
type PluginInfo struct {
	Path    string
	SHA256  string
	ABI     int
	Name    string
	Version string
	Kind    string // "tool" or "policy"
	Tools   []host.Tool
	// Capabilities are those the plugin declares (what a [[plugins]]
	// entry would have to grant).
	Capabilities []string
	// Actions are the policy actions a policy plugin judges (none: all).
	Actions []string
	// Imports are the wai host functions the module imports.
	Imports []string
}

// InspectPlugin loads the plugin at path on its own — as a bundled plugin
// would be, granted what it declares, so a plugin asking for capabilities
// loads — asks it to describe itself, and unloads it. Nothing is called
// but wai_describe. The compilation cache under cfg's state_dir is used.
func InspectPlugin(ctx context.Context, cfg host.Config, path string) (PluginInfo, error) {
	var opts wasm.Options
	if dir, err := cfg.ResolvedStateDir(); err == nil {
		if os.MkdirAll(filepath.Join(dir, "wasm"), 0o700) == nil {
			opts.CacheDir = filepath.Join(dir, "wasm")
		}
	}
	rt, err := wasm.NewRuntime(ctx, opts)
	if err != nil {
		return PluginInfo{}, err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	p, err := rt.Load(ctx, wasm.Source{Path: path, Bundled: true, Name: filepath.Base(path)})
	if err != nil {
		return PluginInfo{}, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	d := p.Describe()
	info := PluginInfo{Path: path, SHA256: p.SHA256(), ABI: d.ABI, Name: d.Name, Version: d.Version, Kind: d.Kind,
		Capabilities: d.Capabilities, Actions: d.Actions, Imports: p.Imports()}
	for _, s := range d.Tools {
		t := host.Tool{Name: s.Name, Plugin: d.Name, Description: s.Description, InputSchema: s.InputSchema, OutputSchema: s.OutputSchema}
		if a := s.Annotations; a != nil {
			t.Annotations = &host.ToolAnnotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
				IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
		}
		info.Tools = append(info.Tools, t)
	}
	return info, nil
}
