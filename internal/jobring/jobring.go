//go:build linux

// Package jobring is the on-disk format of a background job's output
// stream, shared by the host backend's job supervisor and wai-agent's: an
// 8-byte count of the bytes the job has written (little-endian), then a
// head region of the first half of the budget, then a ring of the last
// half. The writer and the readers take flock(2) locks, so a reader sees a
// count and bytes that agree. The file never grows past the budget,
// however much the job prints. Standard library only.
package jobring

import (
	"encoding/binary"
	"io"
	"os"
	"syscall"
)

const ringHeader = 8

// Writer appends a stream's output to its ring file.
type Writer struct {
	f          *os.File
	head, tail int64
	total      int64
}

// Create makes a new ring file of budget bytes at path (it must not exist).
func Create(path string, budget int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	h := int64(budget / 2)
	w := &Writer{f: f, head: h, tail: int64(budget) - h}
	if err := w.header(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) header() error {
	var b [ringHeader]byte
	binary.LittleEndian.PutUint64(b[:], uint64(w.total))
	_, err := w.f.WriteAt(b[:], 0)
	return err
}

// Write stores p, keeping the head and the newest tail bytes.
func (w *Writer) Write(p []byte) (int, error) {
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
	if int64(len(p)) > w.tail {
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

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Read returns a stream's head, tail (oldest byte first) and the total the
// job wrote; a missing or unreadable file is an empty stream. It reads at
// most the header and budget bytes, whatever the file holds.
func Read(path string, budget int) (head, tail []byte, total int64) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return nil, nil, 0
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(ringHeader+budget)))
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if err != nil || len(b) < ringHeader {
		return nil, nil, 0
	}
	total = int64(binary.LittleEndian.Uint64(b))
	data := b[ringHeader:]
	h := int64(budget / 2)
	t := int64(budget) - h
	head = data[:min(total, h, int64(len(data)))]
	if total <= h {
		return head, nil, int64(len(head))
	}
	ring := data[min(h, int64(len(data))):]
	n := min(total-h, t, int64(len(ring)))
	if total-h <= t {
		return head, append([]byte{}, ring[:n]...), total
	}
	pos := (total - h) % t
	tail = append(append(make([]byte, 0, n), ring[pos:]...), ring[:pos]...)
	return head, tail, total
}

// Interface guards
var _ io.WriteCloser = (*Writer)(nil)
