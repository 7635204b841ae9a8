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

// warm fills both parts of the cache wazero keeps apart by the version in
// a binary's build information: the "dev" one test binaries of library
// packages read, and the versioned one cmd/wai's test binary reads (it
// found nothing there, and compiled every plugin under -race again).
func TestWarmFillsBothCacheParts(t *testing.T) {
	// (module (func)): one function, so there is code to cache.
	module := []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00\x0a\x04\x01\x02\x00\x0b")
	path := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(path, module, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := warm(context.Background(), dir, path, module); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "wazero-*"))
	var dev, versioned int
	for _, p := range parts {
		entries, _ := os.ReadDir(p)
		if len(entries) == 0 {
			continue
		}
		if strings.HasPrefix(filepath.Base(p), "wazero-dev-") {
			dev++
		} else {
			versioned++
		}
	}
	if dev != 1 || versioned != 1 {
		t.Errorf("warm filled %d dev and %d versioned cache parts (%v), want one of each", dev, versioned, parts)
	}
}
