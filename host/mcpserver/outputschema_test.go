package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
	"github.com/wai-dev/wai/host/mcpserver/mcptest"
	"github.com/wai-dev/wai/internal/tooltest"
)

// representativeCalls are calls of every bundled tool, made in order in
// one session: successes and failures, since a failed result's
// structuredContent must match the schema too. A tool added under tools/
// fails TestEveryToolDeclaresAndKeepsItsOutputSchema until it has an
// entry here.
var representativeCalls = []struct {
	tool string
	args map[string]any
}{
	{"write_file", map[string]any{"file_path": "notes.txt", "content": "alpha\nbeta\n"}},
	{"write_file", map[string]any{"file_path": "notes.txt", "content": "again"}}, // exists: failed, no value
	{"read_file", map[string]any{"file_path": "notes.txt"}},
	{"edit_file", map[string]any{"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}},
	{"ls", map[string]any{}},
	{"glob", map[string]any{"pattern": "**/*.txt"}},
	{"grep", map[string]any{"pattern": "gam+a"}},
	{"shell_execute", map[string]any{"command": []string{"cat", "notes.txt"}}},
	{"shell_execute", map[string]any{"command": []string{"sh", "-c", "echo oops >&2; exit 3"}}},
	{"evaluate_python", map[string]any{"code": "n = len(vfs_reads['notes.txt'].split())\nn * 10", "mode": "statements",
		"reads": []any{map[string]any{"path": "notes.txt"}}, "writes": []any{map[string]any{"path": "out/count.txt", "content": "words={n}"}}}},
	{"evaluate_python", map[string]any{"code": "1/0"}},
	{"podman_shell", map[string]any{"action": "exec", "command": "echo hi"}},
	{"podman_shell", map[string]any{"action": "start"}}, // no container on the host backend
	{"containers", map[string]any{"operation": "list"}}, // no containers on the host backend: failed, with a value
	{"job_start", map[string]any{"command": []string{"sh", "-c", "echo started; sleep 30"}}},
	{"job_status", map[string]any{"id": lastJobID}},
	{"job_list", map[string]any{}},
	{"job_cancel", map[string]any{"id": lastJobID}},
	{"job_status", map[string]any{"id": "j000000000000"}}, // unknown: failed
	{"rm", map[string]any{"path": "out"}},
}

// lastJobID in a representative call's arguments stands for the id the
// last job_start answered.
const lastJobID = "$last-job-id"

// TestEveryToolDeclaresAndKeepsItsOutputSchema walks every bundled tool
// plugin (every main package under tools/): each tool must declare an
// outputSchema in tools/list, and the structuredContent of its
// representative calls, as the official Go client receives it, must
// validate against that schema.
func TestEveryToolDeclaresAndKeepsItsOutputSchema(t *testing.T) {
	t.Parallel() // a kernel of its own, overlapping the tests that wait
	dirs := tooltest.AllTools(t)
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.StateDir = tooltest.StateDir(t)
	cfg.PluginDirs = []string{tooltest.PluginDir(t, dirs...)}
	cfg.BundledTools = nil
	for _, d := range dirs {
		cfg.BundledTools = append(cfg.BundledTools, filepath.Base(d))
	}
	cfg.PolicyTimeout = 30 * time.Second
	k := startKernel(t, cfg)
	s := serve(t, k, mcpserver.Options{})
	cs := stdioClient(t, s, nil)

	tools, schemas := mcptest.OutputSchemas(t, context.Background(), cs)
	if len(tools) < 4 {
		t.Fatalf("only %d tools listed", len(tools))
	}

	checked := map[string]bool{}
	var jobID string
	for _, c := range representativeCalls {
		rs, listed := schemas[c.tool]
		if !listed {
			continue // not built in this checkout, or its schema missing (reported above)
		}
		args := map[string]any{}
		for k, v := range c.args {
			if v == lastJobID {
				v = jobID
			}
			args[k] = v
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", c.tool, args, err)
		}
		if m, ok := res.StructuredContent.(map[string]any); ok && c.tool == "job_start" {
			jobID, _ = m["id"].(string)
		}
		if res.StructuredContent == nil {
			continue // a result without a value promises nothing
		}
		if err := rs.Validate(res.StructuredContent); err != nil {
			b, _ := json.Marshal(res.StructuredContent)
			t.Errorf("%s %v: structuredContent %s does not match its outputSchema: %v", c.tool, c.args, b, err)
		}
		checked[c.tool] = true
	}
	for _, tool := range tools {
		if !checked[tool.Name] {
			t.Errorf("tool %s has no representative call with structured content: add one to representativeCalls", tool.Name)
		}
	}
}
