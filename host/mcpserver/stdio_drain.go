package mcpserver

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// inflight counts the requests read from stdin and not yet answered, so
// that the end of the input does not end the session before its answers
// are out: `printf '…initialize…\n…tools/call…\n' | wai serve` must get
// both answers, not an EOF that cancels the call it just read.
type inflight struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // closed while nothing is pending
}

func newInflight() *inflight {
	idle := make(chan struct{})
	close(idle)
	return &inflight{pending: map[jsonrpc.ID]bool{}, idle: idle}
}

// read notes a message handed to the server: a call waits for its answer;
// a cancellation notice withdraws the call it names, which per the spec
// gets no answer.
func (f *inflight) read(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case req.IsCall():
		if len(f.pending) == 0 {
			f.idle = make(chan struct{})
		}
		f.pending[req.ID] = true
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				f.doneLocked(id)
			}
		}
	}
}

// answered notes a response written to the client.
func (f *inflight) answered(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.doneLocked(id)
}

func (f *inflight) doneLocked(id jsonrpc.ID) {
	if !f.pending[id] {
		return
	}
	delete(f.pending, id)
	if len(f.pending) == 0 {
		close(f.idle)
	}
}

// drained is closed once every request read so far is answered.
func (f *inflight) drained() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.idle
}
