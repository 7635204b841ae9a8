//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// agentFSWorkspace is a session whose files are served by its agent, as
// a workspace that is no host directory has them: the workspace is still
// a bind-mounted host directory here, so the suite can plant what a
// command of the sandbox could, and look behind the agent's back.
type agentFSWorkspace struct{ *Workspace }

func (w agentFSWorkspace) FS() backend.Filesystem { return w.agentFS() }

// openAgentFS opens a session whose FS is served by the agent.
func openAgentFS(t *testing.T, l backend.Limits, extra map[string]any) agentFSWorkspace {
	t.Helper()
	return openAgentFSOn(t, newTestBackend(t, l, extra))
}

// openAgentFSOn opens a session on b, a backend the test set up itself.
func openAgentFSOn(t *testing.T, b *Backend) agentFSWorkspace {
	t.Helper()
	ws, err := b.Open(t.Context(), backend.WorkspaceSpec{Session: session("agentfs")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ws.Close(bg) }) // a second Close (the suite's) does nothing
	return agentFSWorkspace{ws.(*Workspace)}
}

// conformanceAgentFS is the filesystem suite against the agent's files.
var conformanceAgentFS = sdktests.Backend{
	Name: "podman",
	Open: func(t *testing.T, l backend.Limits) backend.Workspace { return openAgentFS(t, l, nil) },
	Caps: sdktests.Caps{
		RealProcesses: true,
		Sandboxed:     true,
		Python:        true,
		HostDir:       func(ws backend.Workspace) string { return ws.(agentFSWorkspace).Dir() },
		Streaming:     true,
	},
	Watchdog: 60 * time.Second,
}

func TestFilesystemConformanceAgentFS(t *testing.T) {
	t.Parallel()
	sdktests.RunFilesystem(t, conformanceAgentFS)
}

// The agent's answers to file operations are checked, not believed:
// pieces for no operation or past MaxChunk break the protocol; an answer
// past the call's cap, or one that is no valid JSON, fails that call
// alone (ErrUnavailable) and leaves the connection to the others.
func TestAgentFSFramesChecked(t *testing.T) {
	t.Parallel()
	newConn := func(cap int) (*agentConn, *fsCall) {
		a := &agentConn{calls: map[uint32]*agentCall{}, dead: make(chan struct{})}
		c := &fsCall{id: 1, cap: cap, done: make(chan struct{})}
		a.fsCalls = map[uint32]*fsCall{1: c}
		return a, c
	}
	for name, f := range map[string]agentproto.Frame{
		"piece for no operation": {Type: agentproto.TypeFSPart, ID: 2, Payload: []byte("{")},
		"end for no operation":   {Type: agentproto.TypeFSEnd, ID: 2, Payload: []byte("{}")},
		"oversized piece":        {Type: agentproto.TypeFSPart, ID: 1, Payload: make([]byte, agentproto.MaxChunk+1)},
		"a host-only type":       {Type: agentproto.TypeFS, ID: 1, Payload: []byte("{}")},
	} {
		a, _ := newConn(1 << 20)
		if err := a.dispatch(f); !errors.Is(err, agentproto.ErrMalformed) {
			t.Errorf("%s: dispatch returned %v, want ErrMalformed", name, err)
		}
	}
	a, c := newConn(100)
	for _, f := range []agentproto.Frame{
		{Type: agentproto.TypeFSPart, ID: 1, Payload: bytes.Repeat([]byte(" "), 80)},
		{Type: agentproto.TypeFSPart, ID: 1, Payload: bytes.Repeat([]byte(" "), 80)},
		{Type: agentproto.TypeFSEnd, ID: 1, Payload: []byte("{}")},
	} {
		if err := a.dispatch(f); err != nil {
			t.Fatalf("an answer past the cap broke the connection: %v", err)
		}
	}
	if _, err := c.response("fs.read", "x"); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "exceeds 100 bytes") {
		t.Errorf("an answer past the cap: %v, want ErrUnavailable naming the cap", err)
	}
	a, c = newConn(100)
	if err := a.dispatch(agentproto.Frame{Type: agentproto.TypeFSEnd, ID: 1, Payload: []byte(`{"info":`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.response("fs.stat", "x"); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("broken JSON: %v, want ErrUnavailable", err)
	}
	if a.fsCalls[1] != nil {
		t.Errorf("the ended call is still registered")
	}
}
