package host

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// Two processes using one kept session (`wai call --session s read_file`,
// then `wai call --session s edit_file`) are two kernels over the same
// state directory and the same workspace.
func TestKeptSessionRemembersReadsAcrossKernels(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	fb := newFake("fake", true)
	fb.files["kept"] = map[string]string{"f.txt": "one\n", "g.txt": "two\n"}
	fb.files["brief"] = map[string]string{"f.txt": "one\n"}

	open := func() *Kernel {
		k, err := New(ctx, cfg, WithBackend(fb))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	first := open()
	for _, name := range []string{"kept", "brief"} {
		s, err := first.Session(ctx, name, SessionOptions{Keep: name == "kept"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FS().Read(ctx, backend.ReadRequest{Path: "f.txt"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}

	second := open()
	defer second.Close(ctx)
	kept, err := second.Session(ctx, "kept", SessionOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.FS().Edit(ctx, backend.EditRequest{Path: "f.txt", Old: "one", New: "1"}); err != nil {
		t.Fatalf("editing in a later run a file the kept session read: %v", err)
	}
	if _, err := kept.FS().Edit(ctx, backend.EditRequest{Path: "g.txt", Old: "two", New: "2"}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a file the kept session never read was editable: %v", err)
	}
	brief, err := second.Session(ctx, "brief", SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := brief.FS().Edit(ctx, backend.EditRequest{Path: "f.txt", Old: "one", New: "1"}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a session that was not kept passed its reads on: %v", err)
	}
	if _, err := os.Stat(brief.readsPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a session that was not kept left a read record: %v", err)
	}
}

func TestDamagedReadRecordIsDropped(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	k, fb := newKernel(t, cfg)
	fb.files["kept"] = map[string]string{"f.txt": "one\n"}
	s, err := k.Session(ctx, "kept", SessionOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.FS().Read(ctx, backend.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.readsPath())
	if err != nil || !strings.Contains(string(data), `"f.txt"`) {
		t.Fatalf("read record after Close: %q, %v", data, err)
	}
	if err := os.WriteFile(s.readsPath(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := k.Session(ctx, "kept", SessionOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.FS().Edit(ctx, backend.EditRequest{Path: "f.txt", Old: "one", New: "1"}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a damaged record counted as reads: %v", err)
	}
}

// A file changed after the kept session read it — by another process, or
// because its workspace was replaced — is no longer known in a later run.
func TestKeptReadsForgetChangedFiles(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	fb := newFake("fake", true)
	fb.files["kept"] = map[string]string{"f.txt": "one\n"}
	k1, err := New(ctx, cfg, WithBackend(fb))
	if err != nil {
		t.Fatal(err)
	}
	s, err := k1.Session(ctx, "kept", SessionOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.FS().Read(ctx, backend.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := k1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	fb.files["kept"]["f.txt"] = "changed behind the session's back\n"
	fb.mu.Unlock()

	k2, err := New(ctx, cfg, WithBackend(fb))
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close(ctx)
	s2, err := k2.Session(ctx, "kept", SessionOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s2.FS().Write(ctx, backend.WriteRequest{Path: "f.txt", Content: "x", Mode: backend.WriteOverwrite})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "changed since this session last read") {
		t.Fatalf("overwriting a file changed since the kept session read it: want ErrInvalid saying it changed, got %v", err)
	}
}

// In one process too: a file a command changed after the session read or
// wrote it must be read again; the session's own edits keep it known.
func TestChangedSinceReadNeedsAnotherRead(t *testing.T) {
	ctx := context.Background()
	k, fb := newKernel(t, testConfig(t))
	s := session(t, k, "changes")
	if _, err := s.FS().Write(ctx, backend.WriteRequest{Path: "f.txt", Content: "one\n"}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ old, new string }{{"one", "two"}, {"two", "three"}} {
		if _, err := s.FS().Edit(ctx, backend.EditRequest{Path: "f.txt", Old: step.old, New: step.new}); err != nil {
			t.Fatalf("the session's own edits in a row: %v", err)
		}
	}
	fb.mu.Lock()
	fb.files["changes"]["f.txt"] = "a command rewrote this\n"
	fb.mu.Unlock()
	_, err := s.FS().Edit(ctx, backend.EditRequest{Path: "f.txt", Old: "command", New: "model"})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "read it again first") {
		t.Fatalf("editing a file changed behind the session's back: want ErrInvalid asking for a new read, got %v", err)
	}
	if _, err := s.FS().Read(ctx, backend.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FS().Edit(ctx, backend.EditRequest{Path: "f.txt", Old: "command", New: "model"}); err != nil {
		t.Fatalf("editing after reading it again: %v", err)
	}
}
