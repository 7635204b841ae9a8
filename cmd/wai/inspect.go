package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/wai-dev/wai/host/config"
)

func init() {
	register(&command{
		name:    "plugin",
		args:    "inspect [--json] FILE.wasm",
		summary: "show what a plugin file is, declares and imports, before configuring it",
		text: `
` + "`wai plugin inspect FILE.wasm`" + ` loads the plugin on its own, asks it to
describe itself and prints its name, version, kind, sha256 (for the sha256
pin of its [[plugins]] entry), the capabilities it declares (what grants it
needs), the wai host functions it imports, and its tools with their input
schemas. Only wai_describe runs; no tool is called.

Flags may go before or after "inspect": ` + "`wai plugin inspect --json FILE.wasm`" + `
prints the same description as JSON (path, sha256, abi, name, version,
kind, capabilities, actions, imports, tools with input schemas).`,
		flags: pluginFlags,
	})
}

type inspectJSON struct {
	Path         string     `json:"path"`
	SHA256       string     `json:"sha256"`
	ABI          int        `json:"abi"`
	Name         string     `json:"name"`
	Version      string     `json:"version"`
	Kind         string     `json:"kind"`
	Capabilities []string   `json:"capabilities"`
	Actions      []string   `json:"actions,omitempty"`
	Imports      []string   `json:"imports"`
	Tools        []toolJSON `json:"tools,omitempty"`
}

func pluginFlags(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
	var (
		configPath string
		asJSON     bool
	)
	fs.StringVar(&configPath, "config", "", "config `file` (for state_dir, where compiled modules are cached)")
	fs.BoolVar(&asJSON, "json", false, "print the description as JSON")
	return func(ctx context.Context, std stdio, args []string) int {
		if len(args) == 0 || args[0] != "inspect" {
			fmt.Fprintf(std.err, "wai plugin: the only subcommand is inspect\n")
			fs.Usage()
			return exitError
		}
		// The flags may come after "inspect" too: parse them here, where
		// -h is a request for help like anywhere else.
		fs.SetOutput(std.err)
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c := commands["plugin"]
				c.help(std.out, fs)
				return exitOK
			}
			if s := flagSuggestion(fs, err); s != "" {
				fmt.Fprintf(std.err, "wai plugin inspect: %s\n", s)
			}
			fs.Usage()
			return exitError
		}
		rest := fs.Args()
		if len(rest) != 1 {
			fmt.Fprintf(std.err, "wai plugin inspect: want one FILE.wasm, got %d arguments\n", len(rest))
			fs.Usage()
			return exitError
		}
		cfg, err := loadConfig(std, configPath, "")
		if err != nil {
			return fail(ctx, std.err, err)
		}
		info, err := config.InspectPlugin(ctx, cfg.Kernel(), rest[0])
		if err != nil {
			return fail(ctx, std.err, err)
		}
		out := inspectJSON{Path: info.Path, SHA256: info.SHA256, ABI: info.ABI, Name: info.Name, Version: info.Version, Kind: info.Kind,
			Capabilities: nonNil(info.Capabilities), Actions: info.Actions, Imports: nonNil(info.Imports)}
		for _, t := range info.Tools {
			out.Tools = append(out.Tools, toToolJSON(t))
		}
		if asJSON {
			return writeJSON(std, out)
		}
		w := std.out
		fmt.Fprintf(w, "path:         %s\n", out.Path)
		fmt.Fprintf(w, "sha256:       %s\n", out.SHA256)
		fmt.Fprintf(w, "name:         %s %s (%s plugin, abi %d)\n", out.Name, out.Version, out.Kind, out.ABI)
		fmt.Fprintf(w, "capabilities: %s\n", listOrNone(out.Capabilities))
		if out.Kind == "policy" {
			fmt.Fprintf(w, "actions:      %s\n", listOrAll(out.Actions))
		}
		fmt.Fprintf(w, "imports:      %s\n", listOrNone(out.Imports))
		for _, t := range out.Tools {
			fmt.Fprintf(w, "\ntool %s: %s\n", t.Name, oneLine(t.Description))
			fmt.Fprintf(w, "  schema: %s\n", compactJSON(t.InputSchema))
			if len(t.OutputSchema) > 0 {
				fmt.Fprintf(w, "  output: %s\n", compactJSON(t.OutputSchema))
			}
		}
		return exitOK
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func listOrAll(s []string) string {
	if len(s) == 0 {
		return "all"
	}
	return strings.Join(s, ", ")
}

func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var v any
	if json.Unmarshal(raw, &v) != nil || enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}
