//go:build linux && (amd64 || arm64)

package host

import (
	"encoding/binary"
	"io"
	"os"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// A job's output stream on disk: an 8-byte header (how many bytes the job
// has written, little-endian), then a head region of the first half of the
// budget, then a ring of the last half. The writer (the job's supervisor)
// and readers (any process with the session open) take flock(2) locks on
// the file, so a reader sees a header and bytes that agree. The file never
// grows past the budget however much the job prints.

const ringHeader = 8

// ringWriter appends a stream's output to its ring file.
type ringWriter struct {
	f          *os.File
	head, tail int64 // region sizes
	total      int64
}

func createRing(path string, budget int) (*ringWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	h := int64(budget / 2)
	w := &ringWriter{f: f, head: h, tail: int64(budget) - h}
	if err := w.header(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func (w *ringWriter) header() error {
	var b [ringHeader]byte
	binary.LittleEndian.PutUint64(b[:], uint64(w.total))
	_, err := w.f.WriteAt(b[:], 0)
	return err
}

// Write stores p, keeping the head and the newest tail bytes.
func (w *ringWriter) Write(p []byte) (int, error) {
	n := len(p)
	if err := syscall.Flock(int(w.f.Fd()), syscall.LOCK_EX); err != nil {
		return 0, err
	}
	defer syscall.Flock(int(w.f.Fd()), syscall.LOCK_UN)
	if w.total < w.head {
		k := min(int64(len(p)), w.head-w.total)
		if _, err := w.f.WriteAt(p[:k], ringHeader+w.total); err != nil {
			return 0, err
		}
		w.total += k
		p = p[k:]
	}
	if int64(len(p)) > w.tail { // only the last tail bytes can survive
		w.total += int64(len(p)) - w.tail
		p = p[int64(len(p))-w.tail:]
	}
	for len(p) > 0 {
		pos := (w.total - w.head) % w.tail
		k := min(int64(len(p)), w.tail-pos)
		if _, err := w.f.WriteAt(p[:k], ringHeader+w.head+pos); err != nil {
			return 0, err
		}
		w.total += k
		p = p[k:]
	}
	return n, w.header()
}

func (w *ringWriter) Close() error { return w.f.Close() }

// readRing reads a stream's ring file from since on (at most max bytes).
// A missing file is a stream with nothing in it.
func readRing(path string, budget int, since int64, max int) backend.JobOutput {
	f, err := os.Open(path)
	if err != nil {
		return backend.ReadJobOutput(nil, nil, 0, since, max)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return backend.ReadJobOutput(nil, nil, 0, since, max)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(ringHeader+budget)))
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if err != nil || len(b) < ringHeader {
		return backend.ReadJobOutput(nil, nil, 0, since, max)
	}
	total := int64(binary.LittleEndian.Uint64(b))
	data := b[ringHeader:]
	h := int64(budget / 2)
	t := int64(budget) - h
	headLen := min(total, h, int64(len(data)))
	head := data[:headLen]
	if total <= h {
		return backend.ReadJobOutput(head, nil, total, since, max)
	}
	ring := data[min(h, int64(len(data))):]
	n := min(total-h, t, int64(len(ring)))
	// The ring's oldest byte sits where the next one will be written.
	tail := make([]byte, 0, n)
	if total-h <= t {
		tail = append(tail, ring[:n]...)
	} else {
		pos := (total - h) % t
		tail = append(append(tail, ring[pos:]...), ring[:pos]...)
	}
	return backend.ReadJobOutput(head, tail, total, since, max)
}

// Interface guards
var _ io.WriteCloser = (*ringWriter)(nil)
