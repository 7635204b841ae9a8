package agentproto

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader: whatever the agent sends, the reader returns frames within
// its limit or an error, never panics, and never reads past a bad frame.
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.WriteJSON(TypeExit, 1, Exit{Code: 1})
	_ = w.Write(TypeStdout, 2, []byte("hello"))
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 5, 99, 0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), 1024)
		for {
			fr, err := r.Read()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrMalformed) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			if len(fr.Payload)+HeaderSize > 1024 || !fr.Type.known() {
				t.Fatalf("frame past the limits: %d bytes, type %d", len(fr.Payload), fr.Type)
			}
		}
	})
}
