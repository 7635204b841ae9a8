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
//
// It also remembers the calls the client cancelled while they ran: the
// SDK still answers those (with error code 0), and the spec says a
// cancelled request gets no response, so the transport drops the answer.
type inflight struct {
	mu        sync.Mutex
	pending   map[jsonrpc.ID]bool
	cancelled map[jsonrpc.ID]bool // withdrawn by the client, answer not yet dropped
	idle      chan struct{}       // closed while nothing is pending
}

func newInflight() *inflight {
	idle := make(chan struct{})
	close(idle)
	return &inflight{pending: map[jsonrpc.ID]bool{}, cancelled: map[jsonrpc.ID]bool{}, idle: idle}
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
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && f.pending[id] {
				f.cancelled[id] = true
				f.doneLocked(id)
			}
		}
	}
}

// withdrawn reports whether the client cancelled the request id while it
// ran, so its response must not be written, and forgets it.
func (f *inflight) withdrawn(id jsonrpc.ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.cancelled[id]
	delete(f.cancelled, id)
	return w
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
