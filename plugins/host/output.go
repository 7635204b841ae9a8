//go:build linux && (amd64 || arm64)

package host

import (
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/pipedrain"
)

// copyBufs recycles the buffers that move output from the pipes into the
// bounded buffers: a command's output costs no allocation per read.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// output captures a command's stdout and stderr through pipes this
// process owns, so that it, not exec, decides how long to wait for them.
type output struct {
	stdout, stderr *backend.OutputBuffer
	r, w           [2]*os.File
	wg             sync.WaitGroup
	held           atomic.Bool        // a writer still held a pipe when drain stopped waiting
	live           backend.OutputFunc // nil: no live output
	liveMu         sync.Mutex         // one live call at a time, as OutputFunc promises
}

func (o *output) start(c *exec.Cmd, max int, live backend.OutputFunc) error {
	o.stdout, o.stderr = backend.NewOutputBuffer(max), backend.NewOutputBuffer(max)
	o.live = live
	for i := range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			o.abort()
			return err
		}
		o.r[i], o.w[i] = r, w
	}
	c.Stdout, c.Stderr = o.w[0], o.w[1]
	return nil
}

// started closes this process's write ends, which the child now holds, and
// starts copying.
func (o *output) started() {
	if o.stdout == nil {
		return
	}
	for i, buf := range []*backend.OutputBuffer{o.stdout, o.stderr} {
		o.w[i].Close()
		o.wg.Add(1)
		stream := backend.Stdout
		if i == 1 {
			stream = backend.Stderr
		}
		go func(r *os.File) {
			defer o.wg.Done()
			b := copyBufs.Get().(*[]byte)
			defer copyBufs.Put(b)
			o.copy(r, buf, stream, *b)
		}(o.r[i])
	}
}

// copy moves one stream into buf until end of file or until drain gives
// up; then it takes what the pipe already holds, so output a slow reader
// had not reached yet is not lost.
func (o *output) copy(r *os.File, buf *backend.OutputBuffer, stream backend.Stream, b []byte) {
	for {
		n, err := r.Read(b)
		o.take(buf, stream, b[:n])
		if pipedrain.Stopped(err) {
			if !pipedrain.Rest(r, b, func(p []byte) { o.take(buf, stream, p) }) {
				o.held.Store(true)
			}
			return
		}
		if err != nil {
			return
		}
	}
}

func (o *output) take(buf *backend.OutputBuffer, stream backend.Stream, p []byte) {
	if len(p) == 0 {
		return
	}
	buf.Write(p)
	if o.live != nil {
		// drain waits for the copying goroutines, so no call comes
		// after the command's result is returned.
		o.liveMu.Lock()
		o.live(stream, p)
		o.liveMu.Unlock()
	}
}

// drain waits up to d for both streams to reach end of file, then takes
// what is left in the pipes and closes them. It reports false when a
// writer outside the command's process group kept a pipe open past d.
func (o *output) drain(d time.Duration) bool {
	if o.stdout == nil {
		return true
	}
	pipedrain.Wait(&o.wg, d, o.r[:]...)
	return !o.held.Load()
}

// abort closes every pipe of an output that never started.
func (o *output) abort() {
	for _, f := range append(o.r[:], o.w[:]...) {
		if f != nil {
			f.Close()
		}
	}
}
