package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// handleBatch serves a JSON-RPC batch where the negotiated MCP version has
// them: its requests are answered together, in one array, and a bad member
// gets its own error in that array.
func (c *stdioConn) handleBatch(line []byte) bool {
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version == "" || version >= firstVersionWithoutBatches {
		why := "MCP " + version + " has no JSON-RPC batches (they were dropped in " + firstVersionWithoutBatches + ")"
		if version == "" {
			why = "a batch cannot come before the session is initialized"
		}
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+why+"; send one JSON-RPC message per line")
		return true
	}
	var members []json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil || len(members) == 0 {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
		return true
	}
	b := &pendingBatch{unanswered: map[jsonrpc.ID]int{}}
	var deliver []jsonrpc.Message
	c.mu.Lock()
	for _, raw := range members {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			b.answers = append(b.answers, errorAnswer(requestID(raw), jsonrpc.CodeInvalidRequest, "invalid request: "+brief(err.Error())))
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			_, inThis := b.unanswered[req.ID]
			_, pending := c.batches[req.ID]
			if inThis || pending {
				b.answers = append(b.answers, errorAnswer(requestID(raw), jsonrpc.CodeInvalidRequest, "invalid request: the id is already in use by a request still running; use a fresh id"))
				continue
			}
			b.unanswered[req.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
		}
		deliver = append(deliver, msg)
	}
	for id := range b.unanswered {
		c.batches[id] = b
	}
	c.mu.Unlock()
	if len(b.unanswered) == 0 && len(b.answers) > 0 {
		// Nothing will be answered later: write the errors now.
		data, _ := json.Marshal(b.answers)
		_ = c.writeLine(data)
	}
	for _, msg := range deliver {
		c.inflight.read(msg)
		if !c.deliver(msgOrErr{msg: msg}) {
			return false
		}
	}
	return true
}

// inBatch reports whether id is a request of a batch still being answered.
func (c *stdioConn) inBatch(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.batches[id]
	return ok
}

// answerInBatch files resp into its batch; done is the whole batch's
// answer once resp was the last one missing.
func (c *stdioConn) answerInBatch(resp *jsonrpc.Response) (done []byte, inBatch bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false, nil
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return nil, true, fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	b.answers[b.unanswered[resp.ID]] = data
	delete(b.unanswered, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.unanswered) > 0 {
		return nil, true, nil
	}
	done, err = json.Marshal(b.answers)
	return done, true, err
}
