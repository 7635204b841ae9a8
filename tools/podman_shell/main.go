// Command podman_shell is the bundled tool plugin podman_shell (docs/ARCHITECTURE.md):
// one tool whose action starts, uses or stops the session's container.
//
// Start and stop go through the lifecycle capability, which the kernel
// grants to this plugin and passes through the policy chain; exec goes
// through the shell capability like any other command. On a backend with no
// container (host, mock) start and stop say so rather than pretending: a
// model told "started" would believe it is isolated when it is not.
//
// Each stream of an exec is cut to the host's limits.max_output_bytes
// (32 KiB by default; head and tail kept). The budget is the contract's
// "configurable byte budget": loaded from a [[plugins]] entry (grants =
// ["shell", "lifecycle"]) rather than as a bundled tool, the plugin reads
// a smaller one from config = { max_output_bytes = N }, N ≥ 64. The
// timeout's default and range are the host's limits narrowed to the
// contract's (cmdlimits).
package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/cmdlimits"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

const maxShellChars = 4096

type params struct {
	Action         string `json:"action" enum:"start,exec,stop" jsonschema:"start the container, exec a command in it (starting it if needed), or stop and remove it (files in the workspace stay)"`
	Command        string `json:"command,omitempty" jsonschema:"the shell command to run (with /bin/sh -c); required for exec"`
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"seconds before an exec is killed; the default and the range it is clamped to are in the tool's description"`
}

// result is the contract's PodmanShellResult: the streams and exit code are
// null for start and stop.
type result struct {
	Action        string  `json:"action"`
	ContainerName string  `json:"container_name"`
	Stdout        *string `json:"stdout"`
	Stderr        *string `json:"stderr"`
	ExitCode      *int    `json:"exit_code"`
	// TimeoutSeconds is the timeout an exec ran with (the one asked for,
	// clamped, or the default); null for start and stop.
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

// The annotations are static while the backend is not: commands reach the
// network on the host backend (and on podman when its config allows it),
// so the tool claims an open world rather than a closed one it cannot
// promise; and a command can change or delete workspace files.
func init() {
	pdk.Declare("podman_shell", "1.0.0", pdk.CapShell, pdk.CapLifecycle)
	pdk.Tool("podman_shell", "Execute shell commands with /bin/sh -c in the session's workspace: action=exec runs command (in the session's container on the podman backend, starting it if needed), action=start starts that container, action=stop removes it; the workspace files stay. On a backend without containers, start and stop fail and exec runs the command directly.",
		run, pdk.Returns[result](), pdk.Destructive(true), pdk.OpenWorld(true), pdk.Title("Podman shell"))
}

func run(_ *pdk.Call, p params) (pdk.Result, error) {
	switch p.Action {
	case "start", "stop":
		if p.Command != "" {
			return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "command is only for action exec: drop it, or use action exec")
		}
		return lifecycle(p.Action)
	case "exec":
		return execute(p)
	}
	return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "action %q is not start, exec or stop", p.Action)
}

func lifecycle(action string) (pdk.Result, error) {
	var (
		st  pdk.LifecycleState
		err error
	)
	if action == "start" {
		st, err = pdk.Lifecycle.Start()
	} else {
		st, err = pdk.Lifecycle.Stop()
	}
	if errors.Is(err, pdk.ErrUnavailable) {
		if msg, ok := noContainer(action); ok {
			r := result{Action: action, Stderr: &msg}
			return pdk.FailWith(msg, r), nil
		}
	}
	if err != nil {
		return pdk.Result{}, err
	}
	r := result{Action: action, ContainerName: st.Name}
	if action == "start" {
		return pdk.OK("Container "+st.Name+" is running.", r), nil
	}
	msg := "Container " + st.Name + " is stopped and removed; the workspace files stay, and the next command starts a new one."
	if st.JobsEnded > 0 {
		msg += " It ended " + strconv.Itoa(st.JobsEnded) + " running background job(s): job_status and job_list report them as lost."
	}
	return pdk.OK(msg, r), nil
}

// noContainer explains an unavailable lifecycle when the reason is that
// the backend has no container at all (not that Podman is down, which
// stays an error).
func noContainer(action string) (string, bool) {
	info, err := pdk.Shell.Info()
	if err != nil || info.Backend == "podman" {
		return "", false
	}
	return "this workspace has no container to " + action + ": the " + info.Backend + " backend runs commands directly" + sandboxNote(info), true
}

func sandboxNote(info pdk.ShellInfo) string {
	if info.Sandboxed {
		return "."
	}
	return ", unsandboxed."
}

func execute(p params) (pdk.Result, error) {
	cmd := strings.TrimSpace(p.Command)
	if cmd == "" {
		return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "command is required for action exec: give the shell command to run")
	}
	if len(p.Command) > maxShellChars {
		return pdk.Result{}, pdk.Errorf(pdk.KindInvalid, "command is %d characters, over the limit of 4,096: write a script to a file and run it instead", len(p.Command))
	}
	lim, err := cmdlimits.Load()
	if err != nil {
		return pdk.Result{}, err
	}
	var asked *float64
	if p.TimeoutSeconds != nil {
		s := float64(*p.TimeoutSeconds)
		asked = &s
	}
	timeout, note, err := lim.Timeout(asked)
	if err != nil {
		return pdk.Result{}, err
	}
	res, err := pdk.Shell.Exec(pdk.ExecRequest{Shell: p.Command, Timeout: timeout})
	if err != nil {
		return pdk.Result{}, err
	}
	budget := lim.OutputBytes
	if n, ok := outputBytes(); ok {
		budget = min(n, budget)
	}
	stdout, stderr := shellfmt.Bytes(res.Stdout, budget), shellfmt.Bytes(res.Stderr, budget)
	code := res.ExitCode
	if res.TimedOut {
		code = pdk.TimeoutExitCode
	}
	secs := timeout.Seconds()
	r := result{Action: "exec", ContainerName: containerName(), Stdout: &stdout, Stderr: &stderr, ExitCode: &code, TimeoutSeconds: &secs}
	fields := []shellfmt.Field{{Name: "Container", Value: orNone(r.ContainerName, res.Backend)}}
	if note != "" {
		fields = append(fields, shellfmt.Field{Name: "Timeout", Value: note})
	}
	msg := shellfmt.Block(shellfmt.Headline(code, res.TimedOut, timeout), fields, stdout, stderr)
	if code != 0 {
		return pdk.FailWith(msg, r), nil
	}
	return pdk.OK(msg, r), nil
}

// containerName is the session's container, or "" on a backend without one.
func containerName() string {
	st, err := pdk.Lifecycle.State()
	if err != nil {
		return ""
	}
	return st.Name
}

func orNone(name, backendName string) string {
	if name != "" {
		return name
	}
	return "none (the " + backendName + " backend runs commands directly)"
}

// outputBytes is the budget the plugin config sets, if it sets one; the
// host's limit bounds it either way.
func outputBytes() (int, bool) {
	if v, ok := pdk.Config("max_output_bytes"); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 64 {
			return n, true
		}
		_ = pdk.Log(pdk.LevelWarn, "max_output_bytes is not a number of at least 64; using the host's limit", "value", v)
	}
	return 0, false
}

func main() {}
