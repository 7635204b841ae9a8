//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"time"
)

// rootHeader starts the line the wrapper writes to stderr before the
// command runs: "wai-exec PID STARTTIME", its pid and start time (clock
// ticks since boot) as the container's /proc shows them.
const rootHeader = "wai-exec "

// headerScript prints the header with builtins only (no fork: it works
// with the pids limit nearly reached). The function keeps set -- from
// clobbering the command's arguments.
const headerScript = `wai_h() { set -- ${1##*) }; printf '` + rootHeader + `%s %s\n' $$ "${20}" >&2; }
read -r wai_l </proc/$$/stat && wai_h "$wai_l"
`

// wrapScript writes the header, then runs the command as a child, so that
// this shell (carrying the marker, leading the session runc gives the exec)
// stays in place as the root the kill script starts from. `exit $?` after
// the command keeps dash from exec'ing it in place; the subshell's exec
// makes sure an argv runs the program it names, never a shell builtin of
// the same name (dash's echo interprets backslashes, /bin/echo does not).
const wrapScript = headerScript + `(exec "$@")
exit $?`

// scriptWrapScript first copies the script from stdin to a file under /tmp
// (private to the container, outside the workspace, so it never shows up
// among the workspace's files), runs the interpreter on it and removes it.
const scriptWrapScript = headerScript + `f=/tmp/.wai-exec-$WAI_EXEC.sh
(umask 077 && cat >"$f") || exit 126
(exec "$@" "$f")
s=$?
rm -f "$f"
exit $s`

// execRoot is an exec's wrapper shell as its header line gives it: its pid
// and start time inside the container; zero when unknown.
type execRoot struct{ pid, start uint64 }

// headerWriter passes an exec's stderr on, less the wrapper's header line,
// which it parses.
type headerWriter struct {
	dst   io.Writer
	buf   []byte
	done  bool
	got   execRoot
	known chan struct{} // closed once the header was read, or cannot come
}

// maxHeader bounds the header line: "wai-exec " and two numbers.
const maxHeader = 64

func newHeaderWriter(dst io.Writer) *headerWriter {
	return &headerWriter{dst: dst, known: make(chan struct{})}
}

func (h *headerWriter) Write(p []byte) (int, error) {
	n := len(p)
	if h.done {
		_, err := h.dst.Write(p)
		return n, err
	}
	i := bytes.IndexByte(p, '\n')
	if i < 0 && len(h.buf)+len(p) < maxHeader {
		h.buf = append(h.buf, p...)
		return n, nil
	}
	var rest []byte
	if i >= 0 {
		h.buf, rest = append(h.buf, p[:i+1]...), p[i+1:]
	} else {
		h.buf = append(h.buf, p...)
	}
	h.finish()
	if len(rest) > 0 {
		if _, err := h.dst.Write(rest); err != nil {
			return n, err
		}
	}
	return n, nil
}

// finish parses the buffered line; anything but a header is output.
func (h *headerWriter) finish() {
	if h.done {
		return
	}
	h.done = true
	defer close(h.known)
	if line, ok := strings.CutPrefix(string(h.buf), rootHeader); ok && strings.HasSuffix(line, "\n") {
		pid, start, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		p, err1 := strconv.ParseUint(pid, 10, 32)
		s, err2 := strconv.ParseUint(start, 10, 64)
		if err1 == nil && err2 == nil && p > 1 {
			h.got, h.buf = execRoot{pid: p, start: s}, nil
			return
		}
	}
	_, _ = h.dst.Write(h.buf)
	h.buf = nil
}

// flush ends the header's wait once the stream is over; the writer must be
// idle (the copy returned).
func (h *headerWriter) flush() { h.finish() }

// root returns the header's root, zero when it has not come (yet).
func (h *headerWriter) root() execRoot {
	select {
	case <-h.known:
		return h.got
	default:
		return execRoot{}
	}
}

// waitRoot waits for the header (the first thing the wrapper does, so it
// normally is there already), the end of the stream, or a generous bound:
// a kill that starts before the command has found nothing yet.
func (h *headerWriter) waitRoot(streamDone chan error) execRoot {
	t := time.NewTimer(streamEndWait)
	defer t.Stop()
	select {
	case <-h.known:
	case err := <-streamDone:
		streamDone <- err // the caller waits for it too; the channel has room for one
	case <-t.C:
	}
	return h.root()
}
