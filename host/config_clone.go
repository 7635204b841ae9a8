package host

import (
	"maps"
	"slices"
)

// clone returns a copy of c that shares no map or slice with it, down to
// the values of the plugins' and backends' free-form tables: the kernel
// keeps its own, and hands out copies (Kernel.Config), so no caller can
// change a configuration the kernel reads concurrently.
func (c Config) clone() Config {
	out := c
	out.PluginDirs = slices.Clone(c.PluginDirs)
	out.FallbackPluginDirs = slices.Clone(c.FallbackPluginDirs)
	out.ToolTimeouts = maps.Clone(c.ToolTimeouts)
	out.DisabledTools = slices.Clone(c.DisabledTools)
	out.BundledTools = slices.Clone(c.BundledTools)
	out.DefaultPolicies = slices.Clone(c.DefaultPolicies)
	out.SecretEnv = slices.Clone(c.SecretEnv)
	if c.Backends != nil {
		out.Backends = make(map[string]map[string]any, len(c.Backends))
		for name, t := range c.Backends {
			out.Backends[name] = cloneTable(t)
		}
	}
	if c.Plugins != nil {
		out.Plugins = make([]PluginConfig, len(c.Plugins))
		for i, p := range c.Plugins {
			p.Grants = slices.Clone(p.Grants)
			p.Config = cloneTable(p.Config)
			p.Aliases = maps.Clone(p.Aliases)
			out.Plugins[i] = p
		}
	}
	if c.Policies != nil {
		out.Policies = make([]PolicyConfig, len(c.Policies))
		for i, p := range c.Policies {
			p.Config = cloneTable(p.Config)
			out.Policies[i] = p
		}
	}
	return out
}

func cloneTable(t map[string]any) map[string]any {
	if t == nil {
		return nil
	}
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneValue copies the containers a decoded TOML or JSON value is made
// of; anything else (strings, numbers, times) is a value already.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneTable(v)
	case []map[string]any:
		out := make([]map[string]any, len(v))
		for i, t := range v {
			out[i] = cloneTable(t)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(v)
	}
	return v
}
