//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// What the agent sends is checked, not believed: each of these frames
// breaks the protocol, and dispatch rejects it (the reader then takes
// the agent for dead).
func TestAgentFramesChecked(t *testing.T) {
	t.Parallel()
	newConn := func() (*agentConn, *agentCall) {
		a := &agentConn{calls: map[uint32]*agentCall{}, dead: make(chan struct{})}
		c := &agentCall{id: 1, sink: newOutputSink(100, false, nil), done: make(chan struct{})}
		a.calls[1] = c
		return a, c
	}
	bad := map[string][]agentproto.Frame{
		"output for an unknown id": {{Type: agentproto.TypeStdout, ID: 2, Payload: []byte("x")}},
		"oversized output chunk":   {{Type: agentproto.TypeStdout, ID: 1, Payload: make([]byte, agentproto.MaxChunk+1)}},
		"oversized control frame":  {{Type: agentproto.TypeExit, ID: 1, Payload: make([]byte, agentproto.MaxControlFrame+1)}},
		"a host-only type":         {{Type: agentproto.TypeExec, ID: 1, Payload: []byte("{}")}},
		"broken JSON":              {{Type: agentproto.TypeExit, ID: 1, Payload: []byte("{")}},
		"second started":           {{Type: agentproto.TypeStarted, ID: 1, Payload: []byte(`{"pid":5}`)}, {Type: agentproto.TypeStarted, ID: 1, Payload: []byte(`{"pid":5}`)}},
		"started for pid 1":        {{Type: agentproto.TypeStarted, ID: 1, Payload: []byte(`{"pid":1}`)}},
		"output after exit":        {{Type: agentproto.TypeExit, ID: 1, Payload: []byte(`{"code":0}`)}, {Type: agentproto.TypeStdout, ID: 1, Payload: []byte("x")}},
	}
	for name, frames := range bad {
		a, _ := newConn()
		var err error
		for _, f := range frames {
			if err = a.dispatch(f); err != nil {
				break
			}
		}
		if !errors.Is(err, agentproto.ErrMalformed) {
			t.Errorf("%s: dispatch returned %v, want ErrMalformed", name, err)
		}
	}
	// Good frames: output capped by the host, whatever the agent sends.
	a, c := newConn()
	for range 10 {
		if err := a.dispatch(agentproto.Frame{Type: agentproto.TypeStdout, ID: 1, Payload: bytes.Repeat([]byte("y"), 50)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.dispatch(agentproto.Frame{Type: agentproto.TypeExit, ID: 1, Payload: []byte(`{"code":3}`)}); err != nil {
		t.Fatal(err)
	}
	ended, exit, err := c.outcome()
	var res backend.ExecResult
	c.sink.result(&res)
	if !ended || err != nil || exit.Code != 3 || !res.Truncated || len(res.Stdout) > 200 {
		t.Errorf("ended %v err %v exit %d truncated %v stdout %d bytes; want exit 3 and output capped near 100 bytes",
			ended, err, exit.Code, res.Truncated, len(res.Stdout))
	}
}
