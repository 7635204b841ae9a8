package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/wai-dev/wai/host"
)

func init() {
	register(&command{
		name:    "tools",
		noArgs:  true,
		args:    "[flags]",
		summary: "list the tools an agent can call, with their plugins and schemas",
		text: `
Loads the configured tool plugins (the bundled ones from plugin_dir, built by
` + "`make plugins`" + `, and every [[plugins]] entry) and lists each tool: its
name, the plugin that provides it and its description. --json prints every
tool with its input schema and annotations, as an MCP client would see them.`,
		flags: toolsFlags,
	})
}

// toolJSON is one tool as `wai tools --json` prints it; the field names are
// MCP's, so the output can be compared with what `wai serve` offers.
type toolJSON struct {
	Name        string          `json:"name"`
	Plugin      string          `json:"plugin"`
	Original    string          `json:"original,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the shape of the tool's structured results, when
	// it declares one (as MCP's tools/list gives it).
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *annotationsJSON `json:"annotations,omitempty"`
}

// annotationsJSON spells the hints as MCP does.
type annotationsJSON struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

func toToolJSON(t host.Tool) toolJSON {
	out := toolJSON{Name: t.Name, Plugin: t.Plugin, Original: t.Original, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema}
	if a := t.Annotations; a != nil {
		out.Annotations = &annotationsJSON{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
	}
	return out
}

func toolsFlags(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
	var (
		kf     kernelFlags
		asJSON bool
	)
	kf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print every tool with its input and output schemas and annotations as JSON")
	return func(ctx context.Context, std stdio, _ []string) int {
		k, err := kf.open(ctx, std, std.err, true)
		if err != nil {
			return fail(ctx, std.err, err)
		}
		defer closeKernel(k, std.err)
		tools := k.Tools()
		if asJSON {
			out := make([]toolJSON, 0, len(tools))
			for _, t := range tools {
				out = append(out, toToolJSON(t))
			}
			return writeJSON(std, out)
		}
		if len(tools) == 0 {
			fmt.Fprintln(std.err, "wai tools: no tools are configured (bundled_tools and [[plugins]] are empty)")
			return exitOK
		}
		tw := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tPLUGIN\tDESCRIPTION")
		for _, t := range tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Plugin, firstSentence(t.Description))
		}
		_ = tw.Flush()
		return exitOK
	}
}

// firstSentence keeps the table to one line per tool; --json has the rest.
func firstSentence(s string) string {
	s = oneLine(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
