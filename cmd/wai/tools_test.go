package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// bundledTools are the tool plugins under tools/ this checkout has, by the
// name `make plugins` gives their .wasm, with the tools each must offer.
var bundledTools = map[string][]string{
	"shell":        {"shell_execute"},
	"python":       {"evaluate_python"},
	"podman_shell": {"podman_shell"},
	"vfs":          {"ls", "read_file", "write_file", "edit_file", "glob", "grep", "rm"},
	"jobs":         {"job_start", "job_status", "job_cancel", "job_list"},
}

// toolsEnv builds the bundled tool plugins named (none: every one this
// checkout has) into a plugin_dir and writes a config that loads them.
// Every command loads every plugin its config names, so a test names only
// those it uses.
func toolsEnv(t *testing.T, only ...string) (*env, map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	present := map[string][]string{}
	var names []string
	for name, tools := range bundledTools {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		pkg := filepath.Join("tools", name)
		if _, err := os.Stat(filepath.Join("..", "..", pkg)); err != nil {
			continue // not written yet in this checkout
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), plugbuild.Build(t, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
		present[name] = tools
		names = append(names, `"`+name+`"`)
	}
	slices.Sort(names)
	e := newEnv(t, "plugin_dir = \""+dir+"\"\nbundled_tools = ["+strings.Join(names, ", ")+"]\n")
	return e, present
}

func TestToolsAndCall(t *testing.T) {
	t.Parallel()
	all, present := toolsEnv(t)
	if _, ok := present["shell"]; !ok {
		t.Fatal("tools/shell is missing")
	}
	// The calls need only the shell plugin.
	shell, _ := toolsEnv(t, "shell")

	// The built binary, not run in process: loading every plugin under
	// the race detector costs seconds of CPU, and the loading is checked
	// for races by the in-process runs of one plugin.
	t.Run("tools lists every bundled tool", func(t *testing.T) {
		t.Parallel()
		e := all.with(t)
		r := e.runBinary("tools", "--config", e.config)
		if r.code != 0 {
			t.Fatalf("wai tools: %s", r)
		}
		for plugin, tools := range present {
			for _, tool := range tools {
				if !strings.Contains(r.stdout, tool+" ") || !strings.Contains(r.stdout, plugin) {
					t.Errorf("wai tools lacks %s (%s):\n%s", tool, plugin, r.stdout)
				}
			}
		}
	})

	// The list is checked above; one plugin shows the JSON form.
	t.Run("tools --json has schemas", func(t *testing.T) {
		t.Parallel()
		e := shell.with(t)
		r := e.run("tools", "--json", "--config", e.config)
		var got []struct {
			Name        string          `json:"name"`
			Plugin      string          `json:"plugin"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
			t.Fatalf("wai tools --json: %s", r)
		}
		i := slices.IndexFunc(got, func(x struct {
			Name        string          `json:"name"`
			Plugin      string          `json:"plugin"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}) bool {
			return x.Name == "shell_execute"
		})
		if i < 0 || got[i].Plugin != "shell" || got[i].Description == "" || !strings.Contains(string(got[i].InputSchema), `"command"`) {
			t.Fatalf("shell_execute in --json: %s", r.stdout)
		}
	})

	t.Run("call prints the text block", func(t *testing.T) {
		t.Parallel()
		e := shell.with(t)
		r := e.run("call", "--config", e.config, "shell_execute", `{"command":["echo","hi"]}`)
		if r.code != 0 || !strings.Contains(r.stdout, "STDOUT:\nhi\n") || !strings.Contains(r.stdout, "Exit code: 0") {
			t.Fatalf("wai call shell_execute echo hi: %s", r)
		}
	})

	t.Run("call --json after the params, failed result exits 1", func(t *testing.T) {
		t.Parallel()
		e := shell.with(t)
		r := e.run("call", "--config", e.config, "shell_execute", `{"command":["sh","-c","exit 7"]}`, "--json")
		var got struct {
			OK    bool `json:"ok"`
			Value struct {
				ExitCode int `json:"exit_code"`
			} `json:"value"`
		}
		if r.code != 1 || json.Unmarshal([]byte(r.stdout), &got) != nil || got.OK || got.Value.ExitCode != 7 {
			t.Fatalf("exit 7 with --json: %s", r)
		}
	})

	t.Run("params from a file and from stdin", func(t *testing.T) {
		t.Parallel()
		e := shell.with(t)
		f := filepath.Join(t.TempDir(), "p.json")
		if err := os.WriteFile(f, []byte(`{"command":["echo","from-file"]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := e.run("call", "--config", e.config, "shell_execute", "@"+f); r.code != 0 || !strings.Contains(r.stdout, "from-file") {
			t.Fatalf("@file: %s", r)
		}
		e.stdin = `{"command":["echo","from-stdin"]}`
		if r := e.run("call", "--config", e.config, "shell_execute", "-"); r.code != 0 || !strings.Contains(r.stdout, "from-stdin") {
			t.Fatalf("stdin: %s", r)
		}
	})

	t.Run("a session keeps its workspace across calls", func(t *testing.T) {
		t.Parallel()
		e := shell.with(t)
		if r := e.run("call", "--config", e.config, "--session", "keep", "shell_execute", `{"command":["sh","-c","echo kept > note"]}`); r.code != 0 {
			t.Fatalf("write: %s", r)
		}
		if r := e.run("call", "--config", e.config, "--session", "keep", "shell_execute", `{"command":["cat","note"]}`); r.code != 0 || !strings.Contains(r.stdout, "kept") {
			t.Fatalf("read back: %s", r)
		}
	})

	// An unknown tool and params the schema refuses: TestNewcomerErrors,
	// with what wai says about them.
	t.Run("wai errors exit 2", func(t *testing.T) {
		t.Parallel()
		e := shell.with(t)
		for _, args := range [][]string{
			{"shell_execute", `{"command":[]}`},               // the tool's validation
			{"shell_execute", `["echo"]`},                     // not an object
			{"shell_execute", `{"command":["rm","-rf","/"]}`}, // the blocklist
			{},
		} {
			r := e.run(append([]string{"call", "--config", e.config}, args...)...)
			if r.code != 2 || r.stderr == "" {
				t.Errorf("wai call %q: want exit 2 with a message, got %s", args, r)
			}
		}
	})
}

// Without the plugins built, the tool commands say how to build them.
func TestToolsWithoutPluginsSaysMakePlugins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "plugin_dir = \""+t.TempDir()+"\"\n")
	r := e.run("tools", "--config", e.config)
	if r.code != 2 || !strings.Contains(r.stderr, "make plugins") {
		t.Fatalf("wai tools without plugins: %s", r)
	}
}
