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
}

func TestPodmanShell(t *testing.T) {
	tooltest.Run(t, []string{"tools/podman_shell"}, nil, func(t *testing.T, e *tooltest.Env) {
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
				_, err := e.Call(t, "podman_shell", c.params)
				if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want ErrInvalid with %q, got %v", c.want, err)
				}
			})
		}

		t.Run("exec runs a shell string", func(t *testing.T) {
			canned("echo one | tr", backend.ExecResult{Stdout: "ONE\n"})
			res, err := e.Call(t, "podman_shell", `{"action":"exec","command":"echo one | tr a-z A-Z"}`)
			if err != nil {
				t.Fatal(err)
			}
			var v shellValue
			tooltest.Value(t, res, &v)
			if !res.OK || v.Action != "exec" || v.Stdout == nil || *v.Stdout != "ONE\n" || v.ExitCode == nil || *v.ExitCode != 0 ||
				!strings.Contains(res.Message, "STDOUT:\nONE") || !strings.Contains(res.Message, "Container: none (the "+e.Backend.Name+" backend") {
				t.Fatalf("%+v %+v", res, v)
			}
		})

		t.Run("exec failure and timeout", func(t *testing.T) {
			canned("exit 4", backend.ExecResult{ExitCode: 4})
			res, err := e.Call(t, "podman_shell", `{"action":"exec","command":"exit 4"}`)
			var v shellValue
			if err == nil {
				tooltest.Value(t, res, &v)
			}
			if err != nil || res.OK || v.ExitCode == nil || *v.ExitCode != 4 || !strings.HasPrefix(res.Message, "Command failed (exit code 4).") {
				t.Fatalf("exit 4: %+v, %v", res, err)
			}
			canned("sleep 30", backend.ExecResult{ExitCode: 124, TimedOut: true, Stdout: "early\n"})
			start := time.Now()
			res, err = e.Call(t, "podman_shell", `{"action":"exec","command":"echo early; sleep 30","timeout_seconds":0}`)
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

		for _, action := range []string{"start", "stop"} {
			t.Run(action+" says there is no container", func(t *testing.T) {
				res, err := e.Call(t, "podman_shell", `{"action":"`+action+`"}`)
				if err != nil {
					t.Fatal(err)
				}
				var v shellValue
				tooltest.Value(t, res, &v)
				want := "this workspace has no container to " + action + ": the " + e.Backend.Name + " backend runs commands directly"
				if res.OK || !strings.HasPrefix(res.Message, want) || v.Action != action || v.ContainerName != "" || v.Stderr == nil || *v.Stderr != res.Message || v.Stdout != nil || v.ExitCode != nil {
					t.Fatalf("want a failed result saying %q, got %+v %+v", want, res, v)
				}
			})
		}
	})
}
