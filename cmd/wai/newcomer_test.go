package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/plugbuild"
	"github.com/wai-dev/wai/internal/syncbuf"
)

// newcomerCase is one mistake a newcomer makes, with what wai must say
// about it on stderr: what went wrong, naming the offending thing, and
// the next step.
type newcomerCase struct {
	name string
	args []string
	// wrong are the parts saying what went wrong, the offending thing
	// named; next are the parts saying what to do about it.
	wrong, next []string
}

// runInProcess runs wai's run function as main does, in this process:
// the rows share one build of the plugins and one Go runtime.
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	return runIn(t, stdio{getenv: os.Getenv}, args...)
}

// runIn is runInProcess with std's environment and working directory.
func runIn(t *testing.T, std stdio, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	std.in, std.out, std.err = strings.NewReader(""), &stdout, &stderr
	start := time.Now()
	code := runStdio(ctx, args, std)
	return result{stdout: string(stdout.Bytes()), stderr: string(stderr.Bytes()), code: code, took: time.Since(start)}
}

func checkNewcomer(t *testing.T, c newcomerCase) {
	t.Helper()
	checkNewcomerIn(t, stdio{getenv: os.Getenv}, c)
}

// checkNewcomerIn is checkNewcomer with std's environment and directory.
func checkNewcomerIn(t *testing.T, std stdio, c newcomerCase) {
	t.Helper()
	r := runIn(t, std, c.args...)
	want := exitError
	if c.args[0] == "exec" {
		want = exitExecFailed
	}
	if r.code != want {
		t.Errorf("wai %q: want exit %d; got %v", c.args, want, r)
	}
	for _, w := range c.wrong {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("wai %q: stderr does not say what went wrong (%q):\n%s", c.args, w, r.stderr)
		}
	}
	for _, w := range c.next {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("wai %q: stderr does not give the next step (%q):\n%s", c.args, w, r.stderr)
		}
	}
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The newcomer's mistakes that need no Podman: a misspelt config key, a
// plugin missing or not granted what it imports, a misspelt tool, params
// the schema refuses, params that are not JSON.
func TestNewcomerErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := plugbuild.StateDir(t)
	writeFile(t, dir, "shell.wasm", string(plugbuild.Build(t, "tools/shell")))
	base := fmt.Sprintf("backend = \"host\"\nstate_dir = %q\n", state)
	good := writeFile(t, dir, "good.toml", base+fmt.Sprintf("plugin_dir = %q\nbundled_tools = [\"shell\"]\n", dir))
	typo := writeFile(t, dir, "typo.toml", base+"defualt_policies = []\n\n[limits]\nmax_outptu_bytes = 100\n")
	unbuilt := writeFile(t, dir, "unbuilt.toml", base+fmt.Sprintf("plugin_dir = %q\nbundled_tools = [\"python\"]\n", dir))
	ungranted := writeFile(t, dir, "ungranted.toml", base+fmt.Sprintf("bundled_tools = []\n\n[[plugins]]\npath = %q\n", filepath.Join(dir, "shell.wasm")))
	misplaced := writeFile(t, dir, "misplaced.toml", base+fmt.Sprintf("bundled_tools = []\n\n[[policies]]\npath = %q\n", filepath.Join(dir, "shell.wasm")))
	const schemaHelp = `shell_execute takes {"command": array of string (required)`

	for _, c := range []newcomerCase{{
		name:  "unknown config key",
		args:  []string{"tools", "--config", typo},
		wrong: []string{typo, `unknown key "defualt_policies" at line 3`, `unknown key "limits.max_outptu_bytes" at line 6`},
		next:  []string{`did you mean "default_policies"?`, `did you mean "limits.max_output_bytes"?`, "wai.example.toml"},
	}, {
		name:  "misspelt backend",
		args:  []string{"exec", "--config", good, "--backend", "podmn", "--", "true"},
		wrong: []string{`unknown backend "podmn"`},
		next:  []string{`did you mean "podman"?`},
	}, {
		name:  "tool plugin not built",
		args:  []string{"tools", "--config", unbuilt},
		wrong: []string{"python.wasm is not in", dir},
		next:  []string{"run `make plugins`", "plugin_dir", "remove \"python\" from bundled_tools", "wai preflight"},
	}, {
		name:  "ungranted capability",
		args:  []string{"tools", "--config", ungranted},
		wrong: []string{"shell.wasm", "imports wai_shell_exec", `capability "shell", not granted`},
		next:  []string{`add grants = ["shell"] under this plugin's [[plugins]] entry`, "hint: a plugin uses only the capabilities its [[plugins]] entry grants"},
	}, {
		// It uses the shell, but a grant is not what it lacks.
		name:  "tool plugin under [[policies]]",
		args:  []string{"tools", "--config", misplaced},
		wrong: []string{"policies[0]", "shell.wasm", "is a tool plugin, not a policy plugin"},
		next:  []string{"list it under [[plugins]]"},
	}, {
		name:  "tool not found",
		args:  []string{"call", "--config", good, "shel_execute", "{}"},
		wrong: []string{"call shel_execute: no such tool"},
		next:  []string{`did you mean "shell_execute"?`, "`wai tools` lists every tool"},
	}, {
		name:  "string where the schema wants an array",
		args:  []string{"call", "--config", good, "shell_execute", `{"command":"echo hi"}`},
		wrong: []string{"call shell_execute: invalid params", `field /command: want array, got string "echo hi"`},
		next:  []string{schemaHelp, "`wai tools --json` prints each tool's full input schema"},
	}, {
		name:  "string where the schema wants a number",
		args:  []string{"call", "--config", good, "shell_execute", `{"command":["echo"],"timeout_seconds":"x"}`},
		wrong: []string{`field /timeout_seconds: want number, got string "x"`},
		next:  []string{schemaHelp, `"timeout_seconds": number`},
	}, {
		name:  "required field missing",
		args:  []string{"call", "--config", good, "shell_execute", `{"cwd":"."}`},
		wrong: []string{"required field /command is missing"},
		next:  []string{schemaHelp},
	}, {
		name:  "misspelt field",
		args:  []string{"call", "--config", good, "shell_execute", `{"comand":["echo"]}`},
		wrong: []string{"field /comand is not a field of this tool"},
		next:  []string{`did you mean "command"?`, schemaHelp},
	}, {
		name:  "params not JSON",
		args:  []string{"call", "--config", good, "shell_execute", `{"command":["echo" "hi"]}`},
		wrong: []string{"call shell_execute: params are not valid JSON", "invalid character '\"' after array element at byte 20: {\"command\":[\"echo\" \" <-- here"},
		next:  []string{"send a JSON object"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkNewcomer(t, c)
		})
	}
}

// noConfigHere is what wai run in process sees on a fresh machine: a
// working directory without wai.toml, a home without config, state in a
// temporary directory, vars (NAME=VALUE) over this process's environment.
// It is passed to wai, not set on this process, so the tests run in
// parallel.
func noConfigHere(t *testing.T, vars ...string) stdio {
	t.Helper()
	home := t.TempDir()
	e := &env{extra: append([]string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
	}, vars...)}
	return stdio{getenv: e.getenv, dir: t.TempDir()}
}

// With no config and no Podman answering, every command fails (exit 125
// for exec, 2 for the others)
// with the two ways out, and nothing runs on the host.
func TestNoConfigNoPodmanFailsWithAdvice(t *testing.T) {
	t.Parallel()
	plugins := writeFile(t, t.TempDir(), "plugins.toml", pluginDirConfig(t))
	std := noConfigHere(t, "CONTAINER_HOST=unix://"+filepath.Join(t.TempDir(), "missing.sock"))
	for _, args := range [][]string{
		{"exec", "--", "id", "-u"},
		{"call", "--config", plugins, "shell_execute", `{"command":["id","-u"]}`},
		{"serve", "--config", plugins},
	} {
		checkNewcomerIn(t, std, newcomerCase{
			args:  args,
			wrong: []string{"the podman backend, which is unavailable"},
			next:  []string{"sudo scripts/setup-podman.sh", "wai preflight", "--backend host", `backend = "host"`, `fallback = "host"`, "WITHOUT a sandbox"},
		})
	}
}

// pluginDirConfig is a config that only says where the bundled shell
// plugin is (built for the test) and loads it alone, since every command
// loads every plugin named: the backend is the default one.
func pluginDirConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "shell.wasm", string(plugbuild.Build(t, "tools/shell")))
	// A generous policy_timeout: it also bounds each plugin's describe,
	// the first run of the module, slow under the race detector on a busy
	// machine.
	return fmt.Sprintf("plugin_dir = %q\nbundled_tools = [\"shell\"]\nstate_dir = %q\npolicy_timeout = \"30s\"\n", dir, plugbuild.StateDir(t))
}

// A misspelt disabled_tools entry is refused with the tool it likely
// meant: silently ignored, it would leave enabled what it should disable.
func TestDisabledToolsTypo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "shell.wasm", string(plugbuild.Build(t, "tools/shell")))
	cfg := writeFile(t, dir, "wai.toml", fmt.Sprintf("backend = \"host\"\nstate_dir = %q\nplugin_dir = %q\nbundled_tools = [\"shell\"]\ndisabled_tools = [\"shell_exec\"]\n",
		plugbuild.StateDir(t), dir))
	checkNewcomer(t, newcomerCase{
		args:  []string{"call", "--config", cfg, "shell_execute", `{"command":["true"]}`},
		wrong: []string{`disabled_tools names "shell_exec", which no loaded plugin exports`},
		next:  []string{`did you mean "shell_execute"?`},
	})
}

// The host backend runs only when named, and then says on stderr, before
// anything runs, that commands are not sandboxed: wai exec, wai call
// (whose result says so too) and wai serve at start.
func TestHostBackendNotice(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, t.TempDir(), "wai.toml", "backend = \"host\"\n"+pluginDirConfig(t))
	std := noConfigHere(t)
	const notice = "wai: notice: running on the host backend: commands are NOT sandboxed"
	r := runIn(t, std, "exec", "--backend", "host", "--", "true")
	if r.code != 0 || !strings.HasPrefix(r.stderr, notice) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exec --backend host: want one notice line on stderr; got %v", r)
	}
	r = runIn(t, std, "call", "--config", cfg, "--json", "shell_execute", `{"command":["true"]}`)
	if r.code != 0 || !strings.HasPrefix(r.stderr, notice) || !strings.Contains(r.stdout, `"sandboxed": false`) ||
		!strings.Contains(r.stdout, `NOT sandboxed; commands run directly on the host]`) {
		t.Errorf("call on host: want the notice and a result saying unsandboxed; got %v", r)
	}
	r = runIn(t, std, "serve", "--config", cfg) // stdin is empty: it stops at once
	if r.code != 0 || !strings.HasPrefix(r.stderr, notice) {
		t.Errorf("serve on host: want the notice at start; got %v", r)
	}
}

// env under [backends.host], as an inline table or a sub-table, reaches
// the command from wai.toml.
func TestHostEnvFromConfig(t *testing.T) {
	t.Parallel()
	for _, table := range []string{
		"[backends.host]\nenv = { WAI_TEST_FOO = \"inline\" }\n",
		"[backends.host.env]\nWAI_TEST_FOO = \"inline\"\n",
	} {
		r := newEnv(t, table).run("exec", "-c", "echo \"$WAI_TEST_FOO\"")
		if r.code != 0 || r.stdout != "inline\n" {
			t.Errorf("%q: want the variable set; got %v", table, r)
		}
	}
}
