// Package agentproto is the wire protocol between wai's podman backend and
// wai-agent, the helper it runs inside each session container
// (docs/AGENT.md). It is shared by both ends and imports only the standard
// library, so the agent stays a small static binary.
//
// A frame is a 4-byte big-endian length, then that many bytes: a 1-byte
// type, a 4-byte big-endian id and the payload. Control messages carry JSON
// payloads; output and input chunks carry raw bytes. Every id names one
// request (a command); id 0 is the connection itself.
package agentproto

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Version is the newest protocol version this package speaks; MinVersion
// the oldest. Version 2 added the filesystem frames (TypeFS, TypeFSPart,
// TypeFSEnd): an agent that chose 1 in its hello serves commands only.
const (
	Version    = 2
	MinVersion = 1
	FSVersion  = 2 // the first version with filesystem frames
)

// Type is a frame's kind.
type Type uint8

// Frame types. Host to agent: Hello, Exec, Cancel, FS, FSData. Agent to host:
// Hello, Started, Stdout, Stderr, Exit, Error, FSPart, FSEnd. New types get new numbers; an end
// that receives a type it does not know treats the peer as broken, so
// adding one needs a new protocol version.
const (
	TypeHello   Type = 1  // JSON Hello, both ways, id 0
	TypeExec    Type = 2  // JSON Exec: start command id
	TypeCancel  Type = 3  // JSON Cancel: stop command id's tree (or file operation id)
	TypeFS      Type = 4  // JSON FSRequest: run file operation id (version 2)
	TypeFSData  Type = 5  // raw bytes: copy_in content for operation id; empty: the end (version 2)
	TypeStarted Type = 16 // JSON Started: command id runs
	TypeStdout  Type = 17 // raw bytes of command id's stdout
	TypeStderr  Type = 18 // raw bytes of command id's stderr
	TypeExit    Type = 19 // JSON Exit: command id ended; its last frame
	TypeError   Type = 20 // JSON Error: command id (or, id 0, the agent) failed
	TypeFSPart  Type = 21 // raw bytes: a piece of file operation id's FSResponse (version 2)
	TypeFSEnd   Type = 22 // raw bytes: the last piece of file operation id's FSResponse (version 2)
)

func (t Type) known() bool {
	switch t {
	case TypeHello, TypeExec, TypeCancel, TypeStarted, TypeStdout, TypeStderr, TypeExit, TypeError,
		TypeFS, TypeFSData, TypeFSPart, TypeFSEnd:
		return true
	}
	return false
}

func (t Type) String() string {
	switch t {
	case TypeHello:
		return "hello"
	case TypeExec:
		return "exec"
	case TypeCancel:
		return "cancel"
	case TypeStarted:
		return "started"
	case TypeStdout:
		return "stdout"
	case TypeStderr:
		return "stderr"
	case TypeExit:
		return "exit"
	case TypeError:
		return "error"
	case TypeFS:
		return "fs"
	case TypeFSData:
		return "fs_data"
	case TypeFSPart:
		return "fs_part"
	case TypeFSEnd:
		return "fs_end"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Limits of the frames each end accepts. The host bounds what the agent
// sends (the agent runs as the sandbox user and is no more trusted than
// the commands); the agent accepts larger frames from the host, whose Exec
// carries the command's stdin.
const (
	HeaderSize      = 9        // length, type, id
	MaxChunk        = 32 << 10 // output bytes per Stdout/Stderr frame
	MaxAgentFrame   = 64 << 10 // largest frame the host reads
	MaxHostFrame    = 16 << 20 // largest frame the agent reads
	MaxControlFrame = 16 << 10 // largest JSON frame the host reads from the agent
)

// ErrMalformed is a frame that breaks the protocol: too long, too short,
// or of an unknown type. The connection is unusable after it.
var ErrMalformed = errors.New("malformed agent protocol frame")

// Frame is one decoded frame. Payload is only valid until the next Read.
type Frame struct {
	Type    Type
	ID      uint32
	Payload []byte
}

// Reader decodes frames from a stream.
type Reader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewReader reads frames of at most max bytes (payload and header).
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Read returns the next frame. io.EOF means the stream ended cleanly
// between frames; anything else is a broken or malformed stream.
func (r *Reader) Read() (Frame, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r.r, hdr[:4]); err != nil {
		return Frame{}, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:4]))
	if n < HeaderSize-4 || n+4 > r.max {
		return Frame{}, fmt.Errorf("%w: length %d (limit %d)", ErrMalformed, n+4, r.max)
	}
	if _, err := io.ReadFull(r.r, hdr[4:]); err != nil {
		return Frame{}, unexpected(err)
	}
	size := n - (HeaderSize - 4)
	if cap(r.buf) < size {
		r.buf = make([]byte, size, max(size, 4<<10))
	}
	p := r.buf[:size]
	if _, err := io.ReadFull(r.r, p); err != nil {
		return Frame{}, unexpected(err)
	}
	f := Frame{Type: Type(hdr[4]), ID: binary.BigEndian.Uint32(hdr[5:]), Payload: p}
	if !f.Type.known() {
		return Frame{}, fmt.Errorf("%w: unknown type %d", ErrMalformed, hdr[4])
	}
	return f, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Writer encodes frames onto a stream; it is safe for concurrent use, each
// frame written whole.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter writes frames to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sends one frame.
func (w *Writer) Write(t Type, id uint32, payload []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := HeaderSize + len(payload)
	if cap(w.buf) < n {
		w.buf = make([]byte, n)
	}
	b := w.buf[:n]
	binary.BigEndian.PutUint32(b, uint32(n-4))
	b[4] = byte(t)
	binary.BigEndian.PutUint32(b[5:], id)
	copy(b[HeaderSize:], payload)
	_, err := w.w.Write(b)
	if n > 1<<20 {
		w.buf = nil // do not keep a large stdin buffer around
	}
	return err
}

// WriteJSON sends one frame with v encoded as JSON.
func (w *Writer) WriteJSON(t Type, id uint32, v any) error {
	p, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.Write(t, id, p)
}

// Decode parses a JSON payload strictly: unknown fields are allowed (a
// newer peer may add some), trailing garbage is not.
func Decode(p []byte, v any) error {
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}
