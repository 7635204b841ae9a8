package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
)

type shellValue struct {
	Action        string  `json:"action"`
	ContainerName string  `json:"container_name"`
	Stdout        *string `json:"stdout"`
	Stderr        *string `json:"stderr"`
	ExitCode      *int    `json:"exit_code"`
	// TimeoutSeconds: the timeout an exec ran with.
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

func TestPodmanShell(t *testing.T) {
	tooltest.Run(t, []string{"tools/podman_shell"}, nil, func(t *testing.T, e *tooltest.Env) {
		// The cases up to the lifecycle ones share a session: refused
		// calls and exec change nothing the others look at, and a fresh
		// session per call restarted the plugin (on podman, a container).
		const session = "podman-shell-cases"
		canned := func(pattern string, r backend.ExecResult) {
			if e.Mock != nil {
				e.Mock.AddResponse(pattern, r)
			}
		}
		for _, c := range []struct{ name, params, want string }{
			{"bad action", `{"action":"restart"}`, "action"},
			{"exec without command", `{"action":"exec"}`, "command is required for action exec"},
			{"exec with a blank command", `{"action":"exec","command":"  "}`, "command is required for action exec"},
			{"start with a command", `{"action":"start","command":"ls"}`, "command is only for action exec"},
			{"command too long", `{"action":"exec","command":"` + strings.Repeat("x", 4097) + `"}`, "command is 4097 characters, over the limit of 4,096"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := e.CallIn(t, session, "podman_shell", c.params)
				if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want ErrInvalid with %q, got %v", c.want, err)
				}
			})
		}

		t.Run("exec runs a shell string", func(t *testing.T) {
			canned("echo one | tr", backend.ExecResult{Stdout: "ONE\n"})
			res, err := e.CallIn(t, session, "podman_shell", `{"action":"exec","command":"echo one | tr a-z A-Z"}`)
			if err != nil {
				t.Fatal(err)
			}
			var v shellValue
			tooltest.Value(t, res, &v)
			if !res.OK || v.Action != "exec" || v.Stdout == nil || *v.Stdout != "ONE\n" || v.ExitCode == nil || *v.ExitCode != 0 ||
				!strings.Contains(res.Message, "STDOUT:\nONE") || !strings.Contains(res.Message, "Container: "+wantContainer(e, v.ContainerName)) {
				t.Fatalf("%+v %+v", res, v)
			}
		})

		t.Run("exec failure and timeout", func(t *testing.T) {
			canned("exit 4", backend.ExecResult{ExitCode: 4})
			res, err := e.CallIn(t, session, "podman_shell", `{"action":"exec","command":"exit 4"}`)
			var v shellValue
			if err == nil {
				tooltest.Value(t, res, &v)
			}
			if err != nil || res.OK || v.ExitCode == nil || *v.ExitCode != 4 || !strings.HasPrefix(res.Message, "Command failed (exit code 4).") {
				t.Fatalf("exit 4: %+v, %v", res, err)
			}
			canned("sleep 30", backend.ExecResult{ExitCode: 124, TimedOut: true, Stdout: "early\n"})
			start := time.Now()
			res, err = e.CallIn(t, session, "podman_shell", `{"action":"exec","command":"echo early; sleep 30","timeout_seconds":0}`)
			if err == nil {
				tooltest.Value(t, res, &v)
			}
			if err != nil || res.OK || *v.ExitCode != 124 || !strings.Contains(*v.Stdout, "early") || !strings.HasPrefix(res.Message, "Command timed out after 1 s (exit code 124).") {
				t.Fatalf("timeout: %+v, %v", res, err)
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Fatalf("a 1 s timeout took %s", took)
			}
		})

		t.Run("exec output capped at 32 KiB per stream", func(t *testing.T) {
			canned("head -c 40000", backend.ExecResult{Stdout: strings.Repeat("a", 40000), Stderr: strings.Repeat("b", 40000), Truncated: true})
			res, err := e.CallIn(t, session, "podman_shell", `{"action":"exec","command":"head -c 40000 /dev/zero | tr '\\0' a; head -c 40000 /dev/zero | tr '\\0' b >&2"}`)
			var v shellValue
			if err == nil {
				tooltest.Value(t, res, &v)
			}
			if err != nil || !res.OK || v.Stdout == nil || v.Stderr == nil {
				t.Fatalf("%+v, %v", res, err)
			}
			for name, s := range map[string]string{"stdout": *v.Stdout, "stderr": *v.Stderr} {
				if len(s) > 32*1024 || s[0] != s[len(s)-1] {
					t.Errorf("%s of 40,000 bytes came back as %d bytes: %.80q", name, len(s), s)
				}
				if err := tooltest.CheckCut(s, 40000, true); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})

		t.Run("exec timeout defaults to 30 s, clamped to 120 s", func(t *testing.T) {
			if e.Mock == nil {
				t.Skip("only the mock records the timeout a request carried")
			}
			for params, want := range map[string]time.Duration{
				`{"action":"exec","command":"echo clamp-me"}`:                        30 * time.Second,
				`{"action":"exec","command":"echo clamp-me","timeout_seconds":1000}`: 120 * time.Second,
				`{"action":"exec","command":"echo clamp-me","timeout_seconds":-5}`:   time.Second,
				`{"action":"exec","command":"echo clamp-me","timeout_seconds":45}`:   45 * time.Second,
			} {
				res, err := e.CallIn(t, session, "podman_shell", params)
				if err != nil {
					t.Fatalf("%s: %v", params, err)
				}
				// Clamped is said, in range is not.
				if strings.Contains(params, "1000") && !strings.Contains(res.Message, "over the 120 s maximum, so the command ran with 120 s; run longer work as a background job") {
					t.Errorf("the 1000 s request: %q", res.Message)
				}
				if clamped := want != 30*time.Second && want != 45*time.Second; clamped != strings.Contains(res.Message, "Timeout: timeout_seconds ") {
					t.Errorf("%s: the message does not say whether the timeout was clamped: %q", params, res.Message)
				}
				calls := e.Mock.Calls()
				if got := calls[len(calls)-1].Exec.Timeout; got != want {
					t.Errorf("%s reached the backend with timeout %s, want %s", params, got, want)
				}
			}
		})

		if e.Backend.Lifecycle {
			t.Run("start, exec, stop drive the container", func(t *testing.T) { lifecycleCases(t, e) })
			return
		}
		for _, action := range []string{"start", "stop"} {
			t.Run(action+" says there is no container", func(t *testing.T) {
				res, err := e.Call(t, "podman_shell", `{"action":"`+action+`"}`)
				if err != nil {
					t.Fatal(err)
				}
				var v shellValue
				tooltest.Value(t, res, &v)
				want := "this workspace has no container to " + action + ": the " + e.Backend.Name + " backend runs commands directly"
				// The message may end with the kernel's unsandboxed note.
				if res.OK || !strings.HasPrefix(res.Message, want) || v.Action != action || v.ContainerName != "" || v.Stderr == nil || !strings.HasPrefix(res.Message, *v.Stderr) || v.Stdout != nil || v.ExitCode != nil {
					t.Fatalf("want a failed result saying %q, got %+v %+v", want, res, v)
				}
			})
		}
	})
}

// wantContainer is what the exec block's Container line says: the
// container's name, or that there is none.
func wantContainer(e *tooltest.Env, name string) string {
	if e.Backend.Lifecycle {
		if name == "" {
			return "<a container name in the value>"
		}
		return name
	}
	return "none (the " + e.Backend.Name + " backend"
}

// lifecycleCases run where the workspace is a container: start names it,
// exec runs in it, stop removes it and the files stay.
func lifecycleCases(t *testing.T, e *tooltest.Env) {
	const session = "podman-shell-lifecycle"
	call := func(params string) (bool, string, shellValue) {
		t.Helper()
		res, err := e.CallIn(t, session, "podman_shell", params)
		if err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		var v shellValue
		tooltest.Value(t, res, &v)
		return res.OK, res.Message, v
	}
	ok, msg, v := call(`{"action":"start"}`)
	if !ok || v.ContainerName == "" || msg != "Container "+v.ContainerName+" is running." || v.Stdout != nil || v.ExitCode != nil {
		t.Fatalf("start: %v %q %+v", ok, msg, v)
	}
	name := v.ContainerName
	ok, _, v = call(`{"action":"exec","command":"echo kept > note; id -u"}`)
	if !ok || v.ContainerName != name || *v.Stdout != "65534\n" {
		t.Fatalf("exec: %v %+v", ok, v)
	}
	ok, msg, v = call(`{"action":"stop"}`)
	if !ok || v.ContainerName != name || !strings.HasPrefix(msg, "Container "+name+" is stopped and removed") {
		t.Fatalf("stop: %v %q %+v", ok, msg, v)
	}
	ok, _, v = call(`{"action":"exec","command":"cat note"}`)
	if !ok || *v.Stdout != "kept\n" {
		t.Fatalf("the workspace files must survive stop: %v %+v", ok, v)
	}
}
