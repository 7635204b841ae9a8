package rootfs

import (
	"context"
	"errors"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// ReadBytes returns a file's bytes as they are, cut at max with the full
// size reported, and stays inside the root as Read does.
func TestReadBytes(t *testing.T) {
	w := newWorld(t, Options{})
	ctx := context.Background()
	w.file(t, "img/a.png", "\x89PNG\r\n\x1a\n\x00\xff")
	data, size, err := w.fs.ReadBytes(ctx, "img/a.png", 100)
	if err != nil || string(data) != "\x89PNG\r\n\x1a\n\x00\xff" || size != 10 {
		t.Fatalf("whole file: %q %d %v", data, size, err)
	}
	data, size, err = w.fs.ReadBytes(ctx, "img/a.png", 4)
	if err != nil || string(data) != "\x89PNG" || size != 10 {
		t.Errorf("cut at 4: %q %d %v", data, size, err)
	}
	w.symlink(t, "../outside/secret", "leak")
	if data, _, err := w.fs.ReadBytes(ctx, "leak", 100); err == nil && string(data) == secret {
		t.Errorf("a symlink read outside the root")
	}
	for p, kind := range map[string]error{"img": backend.ErrInvalid, "missing": backend.ErrNotFound, "../outside/secret": backend.ErrInvalid} {
		if _, _, err := w.fs.ReadBytes(ctx, p, 100); !errors.Is(err, kind) {
			t.Errorf("%s: %v, want %v", p, err, kind)
		}
	}
}
