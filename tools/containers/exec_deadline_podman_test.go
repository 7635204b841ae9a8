//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/internal/tooltest"
)

// An exec asking for more time than its call has left, on real Podman:
// the trial's `exec "echo begin; sleep 400; echo done" timeout 600` was cut
// by the tool's deadline, its output lost. Now it runs with what fits
// (a short caller deadline stands in for the 5m30s one), is killed at that
// timeout, and answers what it printed, the timeout used and why.
func TestExecFitsTheCallDeadlineOnPodman(t *testing.T) {
	pod := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Name == "podman" })
	tooltest.RunOn(t, pod, []string{"tools/containers"}, nil, func(t *testing.T, e *tooltest.Env) {
		id := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
		sess, name := "deadline-"+id, "dl-"+id
		res, err := e.CallIn(t, sess, "containers", `{"operation":"create","name":"`+name+`","network":"none","dotfiles":{"skip":true}}`)
		if err != nil || !res.OK {
			t.Fatalf("create: %v %+v", err, res)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
		defer cancel()
		start := time.Now()
		res, err = e.Kernel.Call(ctx, sess, "containers",
			json.RawMessage(`{"operation":"exec","container":"`+name+`","command":"echo begin; sleep 60; echo done","timeout":600}`))
		took := time.Since(start)
		if err != nil {
			t.Fatalf("exec cut by the call's deadline after %s: %v", took, err)
		}
		var v struct {
			Exec struct {
				Stdout    string `json:"stdout"`
				TimedOut  bool   `json:"timed_out"`
				TimeoutMS int64  `json:"timeout_ms"`
			} `json:"exec"`
		}
		tooltest.Value(t, res, &v)
		if !v.Exec.TimedOut || v.Exec.Stdout != "begin\n" || v.Exec.TimeoutMS < 1000 || v.Exec.TimeoutMS > 7000 {
			t.Errorf("exec: %+v after %s, want timed out at 1-7 s keeping %q", v.Exec, took, "begin\n")
		}
		for _, want := range []string{"timeout 600 s does not fit", "exec_background", "begin"} {
			if !strings.Contains(res.Message, want) {
				t.Errorf("answer lacks %q:\n%s", want, res.Message)
			}
		}
	})
}
