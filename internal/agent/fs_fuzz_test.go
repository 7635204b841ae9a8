//go:build linux && (amd64 || arm64)

package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/rootfs"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

// FuzzHandle: whatever request the agent is sent, answering it neither
// panics nor touches anything outside the root, and the answer encodes.
func FuzzHandle(f *testing.F) {
	for _, r := range []agentproto.FSRequest{
		{Op: agentproto.FSWrite, Path: "../out/x", Content: "x", Mode: "overwrite"},
		{Op: agentproto.FSWrite, Path: "link/x", Content: "x", Mode: "overwrite"},
		{Op: agentproto.FSRemove, Path: "link", Recursive: true},
		{Op: agentproto.FSEdit, Path: "/link/../a.txt", Old: "a", New: "b"},
		{Op: agentproto.FSGrep, Pattern: "(a|b)*", Glob: "**"},
		{Op: agentproto.FSResolve, Path: "link/../../x", FollowLast: true},
		{Op: agentproto.FSReadBytes, Path: "a.txt", Max: 3},
	} {
		b, _ := json.Marshal(r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req agentproto.FSRequest
		if agentproto.Decode(data, &req) != nil || req.Op == agentproto.FSCopyIn {
			return
		}
		base := t.TempDir()
		root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
		for _, d := range []string{root, out} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\nb\n"), 0o644)
		_ = os.WriteFile(filepath.Join(out, "keep"), []byte("keep"), 0o644)
		_ = os.Symlink("../out", filepath.Join(root, "link"))
		l := backend.DefaultLimits()
		l.MaxResults, l.MaxReadBytes, l.MaxWriteChars = 50, 4096, 4096
		fsys, err := rootfs.New(root, rootfs.Options{Limits: l})
		if err != nil {
			t.Fatal(err)
		}
		defer fsys.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if req.Max > 1<<20 {
			req.Max = 1 << 20
		}
		resp := agentfs.Handle(ctx, fsys, req)
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("the answer to %+v does not encode: %v", req, err)
		}
		entries, err := os.ReadDir(out)
		if b, _ := os.ReadFile(filepath.Join(out, "keep")); err != nil || len(entries) != 1 || string(b) != "keep" {
			t.Fatalf("%+v changed the directory outside the root: %v %v", req, entries, err)
		}
	})
}
