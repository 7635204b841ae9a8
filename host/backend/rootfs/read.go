//go:build linux && (amd64 || arm64)

package rootfs

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// Stat describes path, following symlinks inside the root. A FIFO, socket
// or device is described (KindOther), never opened.
func (f *FS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	const op = "fs.stat"
	root, rel, release, err := f.enter(ctx, op, p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer release()
	fd, err := openat2(root, rel, oPath)
	if err != nil {
		return backend.FileInfo{}, f.explain(root, op, p, rel, err)
	}
	defer closeFD(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return backend.FileInfo{}, mapErr(op, p, err)
	}
	return info(rel, &st), nil
}

// List returns the entries of a directory sorted by name, symlinks reported
// as symlinks, capped at Limits.MaxResults. Memory stays bounded by a
// multiple of the cap however large the directory is.
func (f *FS) List(ctx context.Context, p string) (backend.ListResult, error) {
	const op = "fs.list"
	root, rel, release, err := f.enter(ctx, op, p)
	if err != nil {
		return backend.ListResult{}, err
	}
	defer release()
	dir, err := f.openListable(root, op, p, rel)
	if err != nil {
		return backend.ListResult{}, err
	}
	defer dir.Close()
	max := f.limits.MaxResults
	var names []string
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return backend.ListResult{}, Stopped(op, p, err)
		}
		batch, err := dir.Readdirnames(1024)
		total += len(batch)
		names = append(names, batch...)
		if len(names) > 2*max {
			sort.Strings(names)
			names = names[:max]
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return backend.ListResult{}, mapErr(op, p, err)
		}
	}
	sort.Strings(names)
	res := backend.ListResult{Truncated: total > max}
	if len(names) > max {
		names = names[:max]
	}
	dfd := int(dir.Fd())
	res.Entries = make([]backend.FileInfo, 0, len(names))
	for i, name := range names {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return backend.ListResult{}, Stopped(op, p, err)
			}
		}
		var st syscall.Stat_t
		if err := lstatat(dfd, name, &st); err != nil {
			if err == syscall.ENOENT { // removed since it was listed
				continue
			}
			return backend.ListResult{}, mapErr(op, joinRel(rel, name), err)
		}
		res.Entries = append(res.Entries, info(joinRel(rel, name), &st))
	}
	return res, nil
}

// openListable opens rel as a readable directory, with messages that say
// what to do when it is something else.
func (f *FS) openListable(root int, op, p, rel string) (*os.File, error) {
	pfd, err := openat2(root, rel, oPath)
	if err != nil {
		return nil, f.explain(root, op, p, rel, err)
	}
	defer closeFD(pfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(pfd, &st); err != nil {
		return nil, mapErr(op, p, err)
	}
	switch fileType(&st) {
	case syscall.S_IFDIR:
	case syscall.S_IFREG:
		return nil, backend.Errorf(backend.ErrInvalid, op, p, "is a file, not a directory: read it instead")
	default:
		return nil, backend.Errorf(backend.ErrInvalid, op, p, "not a directory")
	}
	// Reopen the very directory checked above: "." relative to its own
	// descriptor cannot be swapped for something else in between.
	fd, err := openat(pfd, ".", syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, mapErr(op, p, err)
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// Read returns lines [Offset, Offset+Limit) of a text file without their
// endings, invalid UTF-8 replaced, and the file's total line count. At most
// Limits.MaxReadBytes bytes of lines are returned; what does not fit is cut
// and Truncated set.
func (f *FS) Read(ctx context.Context, req backend.ReadRequest) (backend.ReadResult, error) {
	const op = "fs.read"
	limit, err := f.limits.ReadLimit(req)
	if err != nil {
		return backend.ReadResult{}, err
	}
	root, rel, release, err := f.enter(ctx, op, req.Path)
	if err != nil {
		return backend.ReadResult{}, err
	}
	defer release()
	file, _, err := f.openRegular(root, op, req.Path, rel)
	if err != nil {
		return backend.ReadResult{}, err
	}
	defer file.Close()

	res := backend.ReadResult{Path: rel, Offset: req.Offset, Lines: []string{}}
	budget := f.limits.MaxReadBytes
	// Every line is read, for TotalLines: through ctxReader, so the
	// deadline stops a huge file wherever the reading is.
	lr := newLineReader(&ctxReader{ctx: ctx, r: file})
	for n := 0; ; n++ {
		keep := 0
		wanted := n >= req.Offset && len(res.Lines) < limit
		if wanted {
			keep = budget
		}
		line, cut, err := lr.next(keep)
		if err == io.EOF {
			break
		}
		if err != nil {
			return backend.ReadResult{}, failed(ctx, op, req.Path, err)
		}
		res.TotalLines++
		if !wanted {
			continue
		}
		if budget == 0 {
			res.Truncated = true
			continue
		}
		res.Truncated = res.Truncated || cut
		budget -= min(budget, len(line)+1)
		res.Lines = append(res.Lines, strings.ToValidUTF8(string(line), "\uFFFD"))
	}
	return res, nil
}

// lineReader yields lines of bounded length from a reader.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	eof bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// reset starts reading r, reusing the buffer, and returns the underlying
// buffered reader.
func (l *lineReader) reset(r io.Reader) *bufio.Reader {
	l.r.Reset(r)
	l.eof = false
	return l.r
}

// next returns the next line without "\n" or "\r\n", keeping at most keep
// bytes of it (cut reports whether more were dropped); the slice is valid
// until the next call. It returns io.EOF when no line is left; a last line
// without an ending still counts.
func (l *lineReader) next(keep int) (line []byte, cut bool, err error) {
	if l.eof {
		return nil, false, io.EOF
	}
	l.buf = l.buf[:0]
	add := func(b []byte) {
		k := min(max(keep-len(l.buf), 0), len(b))
		l.buf = append(l.buf, b[:k]...)
		cut = cut || k < len(b)
	}
	seen, heldCR := false, false
	for {
		chunk, err := l.r.ReadSlice('\n')
		seen = seen || len(chunk) > 0
		ends := err == nil || err == io.EOF // this chunk ends the line
		body := chunk
		if err == nil {
			body = body[:len(body)-1]
		}
		// A "\r" that ended the previous chunk belongs to the line ending
		// when the line ends right after it.
		if heldCR && !(ends && len(body) == 0) {
			add([]byte{'\r'})
		}
		heldCR = len(body) > 0 && body[len(body)-1] == '\r'
		if heldCR {
			body = body[:len(body)-1]
		}
		add(body)
		switch {
		case err == nil:
			return l.buf, cut, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			l.eof = true
			if !seen {
				return nil, false, io.EOF
			}
			return l.buf, cut, nil
		default:
			return nil, false, err
		}
	}
}
