//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/tooltest"
)

// A command policy holds in managed containers, on real Podman: under an
// allowlist of ls (and the probe's true), the trial's `exec "id; cat
// /etc/shadow"` is refused, and so is a create whose setup command is
// not allowed, before any container is made; ls runs.
func TestAllowlistHoldsInContainersOnPodman(t *testing.T) {
	t.Parallel() // its own kernel, session and container; no process-wide state
	pod := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Name == "podman" })
	allowLs := func(cfg *host.Config) {
		cfg.Policies = append(cfg.Policies, host.PolicyConfig{Name: "allowlist",
			Config: map[string]any{"commands": []any{"true", "ls"}, "ask": false}})
	}
	tooltest.RunOn(t, pod, []string{"tools/containers"}, allowLs, func(t *testing.T, e *tooltest.Env) {
		id := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
		sess, name := "allow-"+id, "al-"+id
		refused := func(what string, res host.ToolResult, err error) {
			t.Helper()
			text := res.Message
			if err != nil {
				text = err.Error()
			}
			if res.OK || !strings.Contains(text, "allowlist") || !strings.Contains(text, "in container") {
				t.Errorf("%s: ok=%v %q (err %v); want refused by the allowlist, saying it is in a container", what, res.OK, text, err)
			}
		}
		create := `{"operation":"create","name":"` + name + `","network":"none","dotfiles":{"skip":true}`
		res, err := e.CallIn(t, sess, "containers", create+`,"setup_commands":["id"]}`)
		refused("create with setup command id", res, err)
		res, err = e.CallIn(t, sess, "containers", `{"operation":"list"}`)
		if err != nil || !res.OK || strings.Contains(res.Message, name) {
			t.Fatalf("list after the refused create: %v %+v; want no %s", err, res, name)
		}
		if res, err = e.CallIn(t, sess, "containers", create+`}`); err != nil || !res.OK {
			t.Fatalf("create: %v %+v", err, res)
		}
		res, err = e.CallIn(t, sess, "containers", `{"operation":"exec","container":"`+name+`","command":"id; cat /etc/shadow"}`)
		refused("exec id; cat /etc/shadow", res, err)
		if strings.Contains(res.Message, "uid=") {
			t.Errorf("the refused command ran: %s", res.Message)
		}
		res, err = e.CallIn(t, sess, "containers", `{"operation":"exec","container":"`+name+`","command":"ls /"}`)
		var v struct {
			Exec struct {
				Stdout string `json:"stdout"`
			} `json:"exec"`
		}
		if err != nil || !res.OK {
			t.Fatalf("exec ls: %v %+v", err, res)
		}
		if tooltest.Value(t, res, &v); !strings.Contains(v.Exec.Stdout, "etc") {
			t.Errorf("exec ls / printed %q", v.Exec.Stdout)
		}
	})
}
