package plugbuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildCachesByContent builds a throwaway plugin twice (the second
// time from the cache), then changes a source file and sees a new build.
func TestBuildCachesByContent(t *testing.T) {
	t.Setenv("WAI_PLUGBUILD_CACHE", t.TempDir())
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The package must live inside the module to resolve its imports; a
	// leading underscore keeps it out of everyone's ./... meanwhile.
	dir, err := os.MkdirTemp(filepath.Join(root, "internal", "plugbuild"), "_test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := func(answer string) {
		code := "package main\n\n//go:wasmexport answer\nfunc answer() int32 { return " + answer + " }\n\nfunc main() {}\n"
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src("42")
	ctx := context.Background()
	p1, err := Path(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wasm := Build(t, dir)
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) || !bytes.Contains(wasm, []byte("answer")) {
		t.Fatalf("not a wasm module exporting answer (%d bytes)", len(wasm))
	}
	p2, err := Path(ctx, dir)
	if err != nil || p2 != p1 {
		t.Errorf("same sources, different cache entry: %s vs %s (%v)", p1, p2, err)
	}
	src("43")
	p3, err := Path(ctx, dir)
	if err != nil || p3 == p1 {
		t.Errorf("changed source, same cache entry %s (%v)", p3, err)
	}
	out := filepath.Join(t.TempDir(), "out", "answer.wasm")
	if err := BuildFile(ctx, dir, out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("BuildFile wrote %d bytes, %v", len(b), err)
	}
	src("not an int")
	if _, err := Path(ctx, dir); err == nil || !strings.Contains(err.Error(), "wasip1") {
		t.Errorf("a broken plugin: %v, want the compiler's error", err)
	}
}
