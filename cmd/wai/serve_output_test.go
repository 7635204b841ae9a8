package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// Through the built binary and the official Go client: every tool lists
// an outputSchema, and evaluate_python — reads, a template write,
// statements — answers the value, writes the file, and its
// structuredContent matches the schema tools/list gave.
func TestServeOutputSchemas(t *testing.T) {
	t.Parallel()
	e, present := toolsEnv(t)
	if _, ok := present["python"]; !ok {
		t.Fatal("tools/python is missing")
	}
	if !hasPython3() {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required on CI: evaluate_python runs it")
		}
		t.Skip("python3 is not on this machine's PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := e.serveStdio(ctx, "serve-output-test")
	defer cs.Close()

	_, schemas := mcptest.OutputSchemas(t, ctx, cs)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rs := schemas[name]; rs != nil && res.StructuredContent != nil {
			if err := rs.Validate(res.StructuredContent); err != nil {
				t.Errorf("%s: structuredContent does not match its outputSchema: %v", name, err)
			}
		}
		return res
	}
	call("write_file", map[string]any{"file_path": "data/nums.txt", "content": "3\n4\n5\n"})
	res := call("evaluate_python", map[string]any{
		"code":   "nums = [int(x) for x in vfs_reads['data/nums.txt'].split()]\ntotal = sum(nums)\ntotal * 2",
		"mode":   "statements",
		"reads":  []any{map[string]any{"path": "data/nums.txt"}},
		"writes": []any{map[string]any{"path": "out/total.txt", "content": "total={total} of {nums}"}},
	})
	var v struct {
		ValueRepr *string                    `json:"value_repr"`
		Globals   map[string]json.RawMessage `json:"globals"`
		Writes    []struct{ Path, Content string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil || res.IsError || v.ValueRepr == nil || *v.ValueRepr != "24" ||
		len(v.Writes) != 1 || v.Writes[0].Content != "total=12 of [3, 4, 5]" || string(v.Globals["total"]) != "12" {
		t.Fatalf("evaluate_python: isError %v, structuredContent %s (%v)", res.IsError, b, err)
	}
	read := call("read_file", map[string]any{"file_path": "out/total.txt"})
	if tc, ok := read.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "total=12 of [3, 4, 5]") {
		t.Fatalf("the template write: %+v", read.Content)
	}
}

// The TypeScript SDK validates structuredContent against the outputSchema
// itself, and throws when it does not match: tests/mcp-ts/outputschema.mjs
// calls every bundled tool through it.
func TestServeOutputSchemasTypeScript(t *testing.T) {
	t.Parallel()
	e, present := toolsEnv(t)
	if !hasPython3() {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required on CI: evaluate_python runs it")
		}
		t.Skip("python3 is not on this machine's PATH")
	}
	out := tsScript(t, e, "outputschema.mjs", waiBinary(t), "--config", e.config)
	var got struct {
		Tools       []string `json:"tools"`
		WithSchema  []string `json:"with_schema"`
		Structured  []string `json:"structured"`
		CountFile   string   `json:"count_file"`
		PythonValue string   `json:"python_value"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if !slices.Equal(got.Tools, got.WithSchema) {
		t.Errorf("tools %v, with an outputSchema only %v", got.Tools, got.WithSchema)
	}
	var want []string
	for _, tools := range present {
		want = append(want, tools...)
	}
	for _, tool := range want {
		if !slices.Contains(got.Structured, tool) {
			t.Errorf("%s was not called with structured content through the TypeScript client (called: %v)", tool, got.Structured)
		}
	}
	if got.PythonValue != "30" || !strings.Contains(got.CountFile, "count=3 first=alpha") {
		t.Errorf("evaluate_python through the TypeScript client: value %q, out/count.txt %q", got.PythonValue, got.CountFile)
	}
}

func hasPython3() bool {
	_, err := exec.LookPath("python3")
	return err == nil
}

// wai plugin inspect shows a tool's output schema, in JSON and as text.
func TestPluginInspectShowsOutputSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	file := filepath.Join(t.TempDir(), "python.wasm")
	if err := os.WriteFile(file, plugbuild.Build(t, "tools/python"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("plugin", "inspect", "--json", "--config", e.config, file)
	var got inspectJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || len(got.Tools) != 1 {
		t.Fatalf("wai plugin inspect --json: %s", r)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Tools[0].OutputSchema); err != nil || !strings.Contains(compact.String(), `"value_repr"`) ||
		!strings.HasPrefix(compact.String(), `{"type":"object"`) {
		t.Fatalf("outputSchema %s (%v)", compact.String(), err)
	}
	r = e.run("plugin", "inspect", "--config", e.config, file)
	if _, out, _ := strings.Cut(r.stdout, "\n  output: {"); r.code != 0 || !strings.Contains(out, `"value_repr"`) {
		t.Fatalf("text output lacks the output schema: %s", r)
	}
}
