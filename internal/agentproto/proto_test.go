package agentproto

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteJSON(TypeExec, 7, Exec{Argv: []string{"true"}, Cwd: "/"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(TypeStdout, 7, []byte("out")); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&buf, MaxAgentFrame)
	f, err := r.Read()
	var e Exec
	if err != nil || f.Type != TypeExec || f.ID != 7 || Decode(f.Payload, &e) != nil || e.Argv[0] != "true" {
		t.Fatalf("exec frame: %v %+v %+v", err, f, e)
	}
	if f, err = r.Read(); err != nil || f.Type != TypeStdout || string(f.Payload) != "out" {
		t.Fatalf("stdout frame: %v %+v", err, f)
	}
	if _, err = r.Read(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestMalformed(t *testing.T) {
	frame := func(n uint32, typ byte, rest ...byte) []byte {
		return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), typ, 0, 0, 0, 1}, rest...)
	}
	for name, in := range map[string][]byte{
		"too long":     frame(MaxAgentFrame, byte(TypeStdout)),
		"too short":    frame(2, byte(TypeStdout)),
		"unknown type": frame(5, 99),
	} {
		_, err := NewReader(bytes.NewReader(in), MaxAgentFrame).Read()
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	_, err := NewReader(bytes.NewReader(frame(9, byte(TypeStdout), 'a')), MaxAgentFrame).Read()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated payload: %v, want io.ErrUnexpectedEOF", err)
	}
	if Decode([]byte("{"), &Exit{}) == nil {
		t.Errorf("Decode accepted broken JSON")
	}
}
