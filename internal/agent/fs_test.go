//go:build linux && (amd64 || arm64)

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

// startFSServer runs a Server whose file operations are confined to
// root, and shakes hands offering versions.
func startFSServer(t *testing.T, root string, versions []int) (*host, agentproto.Hello) {
	t.Helper()
	h, f := startServerIn(t, root, versions)
	var hello agentproto.Hello
	if f.Type != agentproto.TypeHello || agentproto.Decode(f.Payload, &hello) != nil {
		t.Fatalf("hello: %+v", f)
	}
	return h, hello
}

// fsReq is a request under the default limits.
func fsReq(op, p string) agentproto.FSRequest {
	req := agentfs.NewRequest(op, backend.DefaultLimits())
	req.Path = agentproto.Text(p)
	return req
}

// send sends req under id.
func (h *host) send(id uint32, req agentproto.FSRequest) {
	h.t.Helper()
	if err := h.out.WriteJSON(agentproto.TypeFS, id, req); err != nil {
		h.t.Fatal(err)
	}
}

// answer reads the answer to id (parts and end, nothing else) and the
// number of frames it took.
func (h *host) answer(id uint32) (agentproto.FSResponse, int) {
	h.t.Helper()
	var buf []byte
	for n := 1; ; n++ {
		f, err := h.r.Read()
		if err != nil {
			h.t.Fatalf("reading the answer: %v", err)
		}
		if f.ID != id || (f.Type != agentproto.TypeFSPart && f.Type != agentproto.TypeFSEnd) || len(f.Payload) > agentproto.MaxChunk {
			h.t.Fatalf("frame %s for id %d of %d bytes, want a piece of id %d's answer", f.Type, f.ID, len(f.Payload), id)
		}
		buf = append(buf, f.Payload...)
		if f.Type == agentproto.TypeFSEnd {
			var resp agentproto.FSResponse
			if err := json.Unmarshal(buf, &resp); err != nil {
				h.t.Fatalf("answer: %v", err)
			}
			return resp, n
		}
	}
}

func (h *host) fs(id uint32, req agentproto.FSRequest) agentproto.FSResponse {
	h.t.Helper()
	h.send(id, req)
	resp, _ := h.answer(id)
	return resp
}

func TestFSHelloNegotiates(t *testing.T) {
	_, hello := startFSServer(t, t.TempDir(), []int{agentproto.Version, agentproto.MinVersion})
	if hello.Version != agentproto.Version {
		t.Errorf("hello offering %d and %d chose %d, want the newest", agentproto.Version, agentproto.MinVersion, hello.Version)
	}
	// A host that speaks version 1 only gets version 1, and a file
	// operation on it is a protocol error: the agent ends the connection.
	h, hello := startFSServer(t, t.TempDir(), []int{1})
	if hello.Version != 1 {
		t.Fatalf("hello offering 1 chose %d", hello.Version)
	}
	h.send(1, fsReq(agentproto.FSStat, "."))
	if _, err := h.r.Read(); err != io.EOF {
		t.Errorf("after a file operation on version 1: %v, want the agent gone (EOF)", err)
	}
	if err := <-h.done; !errors.Is(err, agentproto.ErrMalformed) {
		t.Errorf("Serve: %v, want ErrMalformed", err)
	}
	h.done <- nil // for the cleanup
}

func TestFSOperations(t *testing.T) {
	root := t.TempDir()
	h, _ := startFSServer(t, root, []int{agentproto.Version})
	w := fsReq(agentproto.FSWrite, "d/a.txt")
	w.Content = "one\ntwo\n"
	if resp := h.fs(1, w); resp.Error != nil || resp.Path != "d/a.txt" || !resp.Created || resp.Bytes != 8 {
		t.Fatalf("write: %+v %+v", resp, resp.Error)
	}
	if b, err := os.ReadFile(filepath.Join(root, "d", "a.txt")); err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("the file on disk: %q %v", b, err)
	}
	resp := h.fs(2, fsReq(agentproto.FSRead, "/d/../d/a.txt"))
	if res, err := agentfs.DecodeRead(&resp, backend.ReadRequest{}, backend.DefaultLimits()); err != nil ||
		strings.Join(res.Lines, "|") != "one|two" || res.TotalLines != 2 {
		t.Fatalf("read: %+v %v", res, err)
	}
	e := fsReq(agentproto.FSEdit, "d/a.txt")
	e.Old, e.New = "two", "three"
	if resp := h.fs(3, e); resp.Error != nil || resp.Replacements != 1 {
		t.Fatalf("edit: %+v", resp)
	}
	g := fsReq(agentproto.FSGrep, "")
	g.Pattern = "thr"
	resp = h.fs(4, g)
	if res, err := agentfs.DecodeGrep(&resp, backend.DefaultLimits()); err != nil || len(res.Matches) != 1 || res.Matches[0].Text != "three" {
		t.Fatalf("grep: %+v %v", res, err)
	}
	resp = h.fs(5, fsReq(agentproto.FSStat, "missing"))
	if _, err := agentfs.DecodeStat(&resp); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("stat of a missing file: %v, want ErrNotFound", err)
	}
	resp = h.fs(6, fsReq(agentproto.FSRemove, "d"))
	if _, err := agentfs.DecodeRemove(&resp); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("remove of a full directory without recursive: %v, want ErrInvalid", err)
	}
	resp = h.fs(7, fsReq("chmod", "d"))
	if _, err := agentfs.DecodeStat(&resp); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "does not know") {
		t.Errorf("an unknown operation: %v, want ErrInvalid saying so", err)
	}
	noLimits := fsReq(agentproto.FSStat, "d")
	noLimits.MaxResults = 0
	resp = h.fs(8, noLimits)
	if _, err := agentfs.DecodeStat(&resp); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("a request without limits: %v, want ErrInvalid (the agent has no limits of its own)", err)
	}
}

// TestFSConfined: what a command of the sandbox can plant stays inside
// the root, as on the host side.
func TestFSConfined(t *testing.T) {
	root := t.TempDir()
	h, _ := startFSServer(t, root, []int{agentproto.Version})
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o666); err != nil {
		t.Fatal(err)
	}
	resp := h.fs(1, fsReq(agentproto.FSRead, "passwd"))
	if _, err := agentfs.DecodeRead(&resp, backend.ReadRequest{}, backend.DefaultLimits()); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("read through a symlink to /etc/passwd: %v, want ErrNotFound (it resolves inside the root)", err)
	}
	resp = h.fs(2, fsReq(agentproto.FSRead, "../../../../etc/passwd"))
	if _, err := agentfs.DecodeRead(&resp, backend.ReadRequest{}, backend.DefaultLimits()); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("read of ../../etc/passwd: %v, want ErrInvalid", err)
	}
	start := time.Now()
	resp = h.fs(3, fsReq(agentproto.FSRead, "pipe"))
	if _, err := agentfs.DecodeRead(&resp, backend.ReadRequest{}, backend.DefaultLimits()); !errors.Is(err, backend.ErrInvalid) || time.Since(start) > 2*time.Second {
		t.Errorf("read of a FIFO: %v after %s, want ErrInvalid at once", err, time.Since(start))
	}
}

// TestFSLargeAnswerInPieces: an answer past MaxChunk comes in pieces, and
// a name that is not UTF-8 crosses byte for byte.
func TestFSLargeAnswerInPieces(t *testing.T) {
	root := t.TempDir()
	h, _ := startFSServer(t, root, []int{agentproto.Version})
	line := strings.Repeat("x", 999) + "\n"
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat(line, 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := "caf\xe9.txt"
	if err := os.WriteFile(filepath.Join(root, odd), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.send(1, fsReq(agentproto.FSRead, "big.txt"))
	resp, frames := h.answer(1)
	if resp.Error != nil || len(resp.Lines) != 200 || frames < 200*1000/agentproto.MaxChunk {
		t.Fatalf("read of 200 KB: %d lines in %d frames, error %+v", len(resp.Lines), frames, resp.Error)
	}
	resp = h.fs(2, fsReq(agentproto.FSStat, odd))
	if fi, err := agentfs.DecodeStat(&resp); err != nil || fi.Path != odd {
		t.Errorf("stat of a name that is not UTF-8: %+v %v, want path %q", fi, err, odd)
	}
}

// TestFSDeadlineAndCancel: a grep over a big tree stops at the deadline
// the request carries, and a cancel stops one without.
func TestFSDeadlineAndCancel(t *testing.T) {
	root := t.TempDir()
	h, _ := startFSServer(t, root, []int{agentproto.Version})
	// A sparse file of 1 TiB behind 8 KiB of text (no binary file, then):
	// reading it takes hours.
	f, err := os.Create(filepath.Join(root, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(strings.Repeat("some text\n", 1000))
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	g := fsReq(agentproto.FSGrep, "")
	g.Pattern, g.TimeoutMS = "needle", 300
	start := time.Now()
	resp := h.fs(1, g)
	if _, err := agentfs.DecodeGrep(&resp, backend.DefaultLimits()); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("grep past its deadline: %v, want ErrUnavailable wrapping context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("grep with a 300 ms deadline answered after %s", d)
	}
	g.TimeoutMS = 0
	h.send(2, g)
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	if err := h.out.WriteJSON(agentproto.TypeCancel, 2, agentproto.Cancel{}); err != nil {
		t.Fatal(err)
	}
	resp, _ = h.answer(2)
	if _, err := agentfs.DecodeGrep(&resp, backend.DefaultLimits()); !errors.Is(err, context.Canceled) || time.Since(start) > 3*time.Second {
		t.Errorf("cancelled grep: %v after %s, want context.Canceled at once", err, time.Since(start))
	}
}

// TestFSCopyIn: content in several FSData frames lands in a new file with
// the asked mode; an existing file is ErrExist, and a copy whose content
// stops coming ends at its deadline.
func TestFSCopyIn(t *testing.T) {
	root := t.TempDir()
	h, _ := startFSServer(t, root, []int{agentproto.Version})
	content := strings.Repeat("0123456789abcdef", 40_000) // 640 KB: three frames
	req := fsReq(agentproto.FSCopyIn, "in/c.bin")
	req.Perm = 0o600
	h.send(1, req)
	for rest := content; rest != ""; {
		n := min(len(rest), agentproto.MaxFSData)
		if err := h.out.Write(agentproto.TypeFSData, 1, []byte(rest[:n])); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := h.out.Write(agentproto.TypeFSData, 1, nil); err != nil {
		t.Fatal(err)
	}
	resp, _ := h.answer(1)
	if n, err := agentfs.DecodeCopyIn(&resp, int64(len(content))); err != nil || n != int64(len(content)) {
		t.Fatalf("copy_in: %d bytes, %v", n, err)
	}
	fi, err := os.Stat(filepath.Join(root, "in", "c.bin"))
	if b, _ := os.ReadFile(filepath.Join(root, "in", "c.bin")); err != nil || string(b) != content || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the copied file: %v, %d bytes, mode %v", err, len(b), fi.Mode())
	}
	// Existing: refused at once, and the content the host still sends is
	// dropped without breaking the connection.
	h.send(2, req)
	resp, _ = h.answer(2)
	if _, err := agentfs.DecodeCopyIn(&resp, 0); !errors.Is(err, backend.ErrExist) {
		t.Errorf("copy_in over an existing file: %v, want ErrExist", err)
	}
	_ = h.out.Write(agentproto.TypeFSData, 2, []byte("late"))
	req.Path, req.TimeoutMS = "in/stalled.bin", 300
	h.send(3, req)
	_ = h.out.Write(agentproto.TypeFSData, 3, []byte("some, then nothing"))
	start := time.Now()
	resp, _ = h.answer(3)
	if _, err := agentfs.DecodeCopyIn(&resp, 18); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("a stalled copy_in: %v after %s, want its deadline", err, time.Since(start))
	}
	if resp := h.fs(4, fsReq(agentproto.FSStat, "in/c.bin")); resp.Error != nil {
		t.Errorf("the connection after the copies: %+v", resp.Error)
	}
}
