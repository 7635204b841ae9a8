package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes bounds one JSON-RPC message on stdio, as the SDK's HTTP
// handler bounds a request body (4 MiB).
const MaxMessageBytes = 4 << 20

// firstVersionWithoutBatches is the MCP version that dropped JSON-RPC
// batches; the versions before it (2024-11-05, 2025-03-26) have them.
const firstVersionWithoutBatches = "2025-06-18"

// maxEchoedID bounds the request id an error answer repeats: an id longer
// than this is answered with null, so no error echoes unbounded input.
const maxEchoedID = 256

// StdioTransport serves one MCP client over newline-delimited JSON-RPC on a
// reader and a writer: a subprocess's standard input and output.
//
// Unlike the SDK's IOTransport, which ends the session on the first line it
// cannot read, a malformed line is answered with the JSON-RPC error the
// spec names (-32700 for bad JSON or bytes that are not UTF-8, -32600 for a
// message that is not a request, a batch the negotiated MCP version does not
// have, or a line over MaxMessageBytes) and the next line is served. An
// oversized line is discarded as it streams in, never buffered whole.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxMessageBytes bounds one line; 0 means MaxMessageBytes.
	MaxMessageBytes int
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxMessageBytes
	if limit <= 0 {
		limit = MaxMessageBytes
	}
	c := &stdioConn{
		w:        t.Writer,
		incoming: make(chan msgOrErr),
		closed:   make(chan struct{}),
		batches:  map[jsonrpc.ID]*pendingBatch{},
		inflight: newInflight(),
	}
	if rc, ok := t.Reader.(io.Closer); ok {
		c.closeReader = rc
	}
	go c.readLoop(t.Reader, limit)
	return c, nil
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the mcp.Connection of a StdioTransport. One goroutine reads
// lines and hands valid messages to Read; answers to bad lines are written
// from that goroutine, through the same lock as every other write, so lines
// never interleave.
type stdioConn struct {
	w       io.Writer
	writeMu sync.Mutex

	incoming    chan msgOrErr
	closed      chan struct{}
	closeOnce   sync.Once
	closeReader io.Closer

	mu       sync.Mutex
	initID   jsonrpc.ID // the id of the client's initialize request
	version  string     // the negotiated protocol version, once known
	batches  map[jsonrpc.ID]*pendingBatch
	writeErr error

	inflight *inflight // requests read and not yet answered
}

// pendingBatch collects the answers to one batch; it is written as one
// array when the last request in it is answered.
type pendingBatch struct {
	answers    []json.RawMessage
	unanswered map[jsonrpc.ID]int
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.incoming:
		return m.msg, m.err
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		defer c.inflight.answered(resp.ID)
		if c.inflight.withdrawn(resp.ID) && !c.inBatch(resp.ID) {
			// The client cancelled this request: no response (MCP
			// cancellation). A batch's member is still answered, so
			// the batch's array is complete.
			return nil
		}
		c.noteVersion(resp)
		if done, inBatch, err := c.answerInBatch(resp); inBatch {
			if err != nil || done == nil {
				return err
			}
			return c.writeLine(done)
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	return c.writeLine(data)
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.closeReader != nil {
			_ = c.closeReader.Close()
		}
	})
	return nil
}

func (c *stdioConn) writeLine(data []byte) error {
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	if _, err := c.w.Write(line); err != nil {
		c.writeErr = err
		return err
	}
	return nil
}

// deliver hands a message to Read; false means the connection is closed.
func (c *stdioConn) deliver(m msgOrErr) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.closed:
		return false
	}
}

func (c *stdioConn) readLoop(r io.Reader, limit int) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, limit)
		if tooLong {
			c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
				"message too large: a JSON-RPC message on stdio may be at most %d bytes; this one was longer and was dropped unread. Send large content in several smaller calls", limit))
		} else if !c.handleLine(line) {
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
				// The client is done sending, not done listening: answer
				// what it sent before the session ends.
				select {
				case <-c.inflight.drained():
				case <-c.closed:
				}
			}
			c.deliver(msgOrErr{err: err})
			return
		}
	}
}

// readLine returns the next line without its line ending. A line longer
// than limit is read to its end and dropped (tooLong), holding at most one
// buffer of it in memory.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: the \r\n that ends it
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if !tooLong && len(line) > limit {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

// handleLine answers a bad line or hands its messages to Read; false means
// the connection is closed.
func (c *stdioConn) handleLine(line []byte) bool {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return true // a blank line is no message
	case !utf8.Valid(line):
		c.refuse(nil, jsonrpc.CodeParseError, "parse error: the message is not valid UTF-8; send one JSON-RPC message per line, UTF-8 encoded")
		return true
	}
	var probe json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		c.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not valid JSON ("+brief(err.Error())+"); send one JSON-RPC message per line")
		return true
	}
	switch line[0] {
	case '[':
		return c.handleBatch(line)
	case '{':
	default:
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: a JSON-RPC message is a JSON object")
		return true
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.refuse(requestID(line), jsonrpc.CodeInvalidRequest, "invalid request: "+brief(err.Error()))
		return true
	}
	c.noteInitialize(msg)
	c.inflight.read(msg)
	return c.deliver(msgOrErr{msg: msg})
}

// noteInitialize remembers the id of the initialize request, whose answer
// carries the negotiated version that decides whether batches exist.
func (c *stdioConn) noteInitialize(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.IsCall() {
		c.mu.Lock()
		c.initID = req.ID
		c.mu.Unlock()
	}
}

func (c *stdioConn) noteVersion(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != "" || !c.initID.IsValid() || resp.ID != c.initID || resp.Error != nil {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &res) == nil {
		c.version = res.ProtocolVersion
	}
}

// refuse answers a bad message with a JSON-RPC error; id is the request's
// id when it could be read, else null.
func (c *stdioConn) refuse(id json.RawMessage, code int64, message string) {
	_ = c.writeLine(errorAnswer(id, code, message))
}

func errorAnswer(id json.RawMessage, code int64, message string) json.RawMessage {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	return data
}

// requestID returns a message's id when it is a string or a number short
// enough to repeat, else nil (answered as null).
func requestID(data []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &probe) != nil || len(probe.ID) == 0 || len(probe.ID) > maxEchoedID {
		return nil
	}
	var v any
	if json.Unmarshal(probe.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return probe.ID
	}
	return nil
}

// brief caps a message that may quote the input.
func brief(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Interface guards
var (
	_ mcp.Transport  = (*StdioTransport)(nil)
	_ mcp.Connection = (*stdioConn)(nil)
)
