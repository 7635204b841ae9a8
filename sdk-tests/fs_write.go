package sdktests

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

func checkWriteCreate(t *T, w *ws) {
	content := "héllo\nworld"
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "/new/deeper/n.txt", Content: content, Mode: backend.WriteCreate})
	if err != nil {
		t.Fatalf("Write create: %v", err)
	}
	if !res.Created || res.Bytes != len(content) || res.Path != "new/deeper/n.txt" {
		t.Errorf("Write create = %+v, want created, %d bytes, path new/deeper/n.txt", res, len(content))
	}
	wantLines(t, w, "new/deeper/n.txt", "héllo", "world")
	if fi := stat(t, w, "new/deeper/n.txt"); fi.Size != int64(len(content)) {
		t.Errorf("written file has size %d, want %d: content must be written verbatim", fi.Size, len(content))
	}
	if fi := stat(t, w, "new/deeper"); fi.Kind != backend.KindDir {
		t.Errorf("parent of the written file is %s, want a directory", fi.Kind)
	}
	res, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "default-mode.txt", Content: "x"})
	if err != nil || !res.Created {
		t.Errorf("Write with no mode (create) = %+v, %v", res, err)
	}
}

func checkWriteCreateExisting(t *T, w *ws) {
	w.write("e.txt", "original")
	for _, mode := range []backend.WriteMode{"", backend.WriteCreate} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "e.txt", Content: "new", Mode: mode})
		wantKind(t, fmt.Sprintf("Write mode %q over an existing file", mode), err, backend.ErrExist)
	}
	wantLines(t, w, "e.txt", "original")
}

func checkWriteOverwrite(t *T, w *ws) {
	w.write("o.txt", "original content")
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "o.txt", Content: "new", Mode: backend.WriteOverwrite})
	if err != nil || res.Created || res.Bytes != 3 {
		t.Errorf("Write overwrite of an existing file = %+v, %v; want not created, 3 bytes", res, err)
	}
	wantLines(t, w, "o.txt", "new")
	if fi := stat(t, w, "o.txt"); fi.Size != 3 {
		t.Errorf("overwritten file has size %d, want 3 (old content left behind)", fi.Size)
	}
	res, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "fresh.txt", Content: "f", Mode: backend.WriteOverwrite})
	if err != nil || !res.Created {
		t.Errorf("Write overwrite of a new file = %+v, %v; want created", res, err)
	}
}

func checkWriteAppend(t *T, w *ws) {
	w.write("a.txt", "a\n")
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "a.txt", Content: "b\n", Mode: backend.WriteAppend})
	if err != nil || res.Created || res.Bytes != 2 {
		t.Errorf("Write append = %+v, %v; want not created, 2 bytes", res, err)
	}
	wantLines(t, w, "a.txt", "a", "b")
	res, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "n/a.txt", Content: "c", Mode: backend.WriteAppend})
	if err != nil || !res.Created {
		t.Errorf("Write append to a new file = %+v, %v; want created", res, err)
	}
	wantLines(t, w, "n/a.txt", "c")
}

func checkWriteMaxChars(t *T, w *ws) {
	n := w.limits.MaxWriteChars
	ok := strings.Repeat("é", n)
	res, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "ok.txt", Content: ok})
	if err != nil || res.Bytes != len(ok) {
		t.Errorf("Write of %d two-byte characters at MaxWriteChars %d = %+v, %v; the limit counts characters", n, n, res, err)
	}
	for _, mode := range []backend.WriteMode{backend.WriteCreate, backend.WriteOverwrite, backend.WriteAppend} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "big.txt", Content: strings.Repeat("x", n+1), Mode: mode})
		wantKind(t, fmt.Sprintf("Write %s of %d characters", mode, n+1), err, backend.ErrInvalid)
	}
	if w.exists("big.txt") {
		t.Errorf("a refused write created its file")
	}
}

func checkWriteErrors(t *T, w *ws) {
	w.write("d/f.txt", "keep")
	_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "x.txt", Content: "x", Mode: "truncate"})
	wantKind(t, "Write with mode truncate", err, backend.ErrInvalid)
	for _, p := range []string{"", ".", "/"} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: p, Content: "x", Mode: backend.WriteOverwrite})
		wantKind(t, fmt.Sprintf("Write to the root %q", p), err, backend.ErrInvalid)
	}
	for _, mode := range []backend.WriteMode{backend.WriteOverwrite, backend.WriteAppend} {
		_, err := w.FS().Write(t.Context(), backend.WriteRequest{Path: "d", Content: "x", Mode: mode})
		wantKind(t, fmt.Sprintf("Write %s to a directory", mode), err, backend.ErrInvalid)
	}
	_, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "d", Content: "x", Mode: backend.WriteCreate})
	if k := backend.KindOf(err); k != backend.ErrExist && k != backend.ErrInvalid {
		t.Errorf("Write create to a directory: error %v of kind %v, want ErrExist or ErrInvalid", err, k)
	}
	_, err = w.FS().Write(t.Context(), backend.WriteRequest{Path: "d/f.txt/child", Content: "x", Mode: backend.WriteOverwrite})
	if err == nil || backend.KindOf(err) == nil {
		t.Errorf("Write below a file: error %v, want one of the backend error kinds", err)
	}
	wantLines(t, w, "d/f.txt", "keep")
}

func checkEditUnique(t *T, w *ws) {
	w.write("e.txt", "hello world\nbye world\n")
	res, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "/e.txt", Old: "hello", New: "HI"})
	if err != nil || res.Replacements != 1 || res.Path != "e.txt" {
		t.Fatalf("Edit of a unique string = %+v, %v; want 1 replacement in e.txt", res, err)
	}
	wantLines(t, w, "e.txt", "HI world", "bye world")
	if _, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "e.txt", Old: "world\nbye", New: "there\nsee you"}); err != nil {
		t.Fatalf("Edit across lines: %v", err)
	}
	wantLines(t, w, "e.txt", "HI there", "see you world")
}

func checkEditAmbiguous(t *T, w *ws) {
	w.write("e.txt", "hello world\nbye world\n")
	_, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "e.txt", Old: "world", New: "X"})
	wantKind(t, "Edit of a string occurring twice without replace-all", err, backend.ErrInvalid)
	wantLines(t, w, "e.txt", "hello world", "bye world")
}

func checkEditReplaceAll(t *T, w *ws) {
	w.write("e.txt", "hello world\nbye world\n")
	res, err := w.FS().Edit(t.Context(), backend.EditRequest{Path: "e.txt", Old: "world", New: "there", ReplaceAll: true})
	if err != nil || res.Replacements != 2 {
		t.Fatalf("Edit replace-all = %+v, %v; want 2 replacements", res, err)
	}
	wantLines(t, w, "e.txt", "hello there", "bye there")
}

func checkEditErrors(t *T, w *ws) {
	w.write("d/e.txt", "abc abc")
	ctx := t.Context()
	for _, c := range []struct {
		name string
		req  backend.EditRequest
		kind error
	}{
		{"string not found", backend.EditRequest{Path: "d/e.txt", Old: "zzz", New: "y"}, backend.ErrInvalid},
		{"string not found, replace-all", backend.EditRequest{Path: "d/e.txt", Old: "zzz", New: "y", ReplaceAll: true}, backend.ErrInvalid},
		{"empty old string", backend.EditRequest{Path: "d/e.txt", Old: "", New: "y"}, backend.ErrInvalid},
		{"replacement over MaxWriteChars", backend.EditRequest{Path: "d/e.txt", Old: "abc", New: strings.Repeat("y", w.limits.MaxWriteChars+1), ReplaceAll: true}, backend.ErrInvalid},
		{"missing file", backend.EditRequest{Path: "d/missing.txt", Old: "a", New: "b"}, backend.ErrNotFound},
		{"directory", backend.EditRequest{Path: "d", Old: "a", New: "b"}, backend.ErrInvalid},
	} {
		_, err := w.FS().Edit(ctx, c.req)
		wantKind(t, "Edit: "+c.name, err, c.kind)
	}
	wantLines(t, w, "d/e.txt", "abc abc")
}

func checkFSCancelled(t *T, w *ws) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := w.FS().Write(ctx, backend.WriteRequest{Path: "c.txt", Content: "x"})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	if w.exists("c.txt") {
		t.Errorf("Write with a cancelled context wrote its file")
	}
}
