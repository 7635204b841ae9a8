package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// client calls tools in one session of a kernel.
type client struct {
	t       testing.TB
	k       *host.Kernel
	session string
}

func (c client) call(tool string, params any) host.ToolResult {
	c.t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := c.k.Call(context.Background(), c.session, tool, raw)
	if err != nil {
		c.t.Fatalf("%s %s: %v", tool, raw, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its message.
func (c client) ok(tool string, params any) string {
	c.t.Helper()
	res := c.call(tool, params)
	if !res.OK {
		c.t.Fatalf("%s %v failed: %s", tool, params, res.Message)
	}
	return res.Message
}

// seed writes files (path: content) with write_file.
func (c client) seed(files map[string]string) {
	c.t.Helper()
	for path, content := range files {
		c.ok("write_file", P{"file_path": path, "content": content})
	}
}

// is calls a tool that must succeed with exactly want as its message;
// what names the check in a failure.
func (c client) is(what, tool string, params any, want string) {
	c.t.Helper()
	if got := c.ok(tool, params); got != want {
		c.t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// fails calls a tool that must fail with a message containing want.
func (c client) fails(tool string, params any, want string) {
	c.t.Helper()
	res := c.call(tool, params)
	if res.OK || !strings.Contains(res.Message, want) {
		c.t.Errorf("%s %v: want a failed result containing %q, got ok=%v %q", tool, params, want, res.OK, res.Message)
	}
}

// sh runs a shell script in the client's session, as a model's command
// would, and fails the test unless it exits 0. Only where commands run
// (not the mock).
func (c client) sh(script string) {
	c.t.Helper()
	s, err := c.k.Session(context.Background(), c.session, host.SessionOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := s.Shell().Execute(context.Background(), backend.ExecRequest{Argv: []string{"sh", "-c", script}})
	if err != nil || res.ExitCode != 0 {
		c.t.Fatalf("%s: %+v, %v", script, res, err)
	}
}

var sessionSeq struct {
	sync.Mutex
	n int
}

// session returns a client on a fresh session (a fresh, empty workspace),
// closed with the test.
func session(t *testing.T, k *host.Kernel) client {
	sessionSeq.Lock()
	sessionSeq.n++
	name := fmt.Sprintf("vfs-%d-%d", os.Getpid(), sessionSeq.n)
	sessionSeq.Unlock()
	ctx := context.Background()
	s, err := k.Session(ctx, name, host.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(ctx) })
	return client{t: t, k: k, session: name}
}
