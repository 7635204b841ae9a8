// Package pipedrain ends the reading of a command's output pipe without
// losing what the pipe already holds.
//
// A reader that gives up waiting (because something the command left
// behind still holds the write end) must not drop the bytes the command
// wrote before it exited: on a loaded machine the copying goroutine may
// not have run yet when the bound passes. The pattern is to end pending
// reads with a deadline, then call Rest. It is a shared helper: both the
// host backend and wai-agent read command output this way.
package pipedrain

import (
	"errors"
	"os"
	"sync"
	"time"
)

// Wait waits up to d for readers (one goroutine per pipe, each reading
// until an error) to finish; then it Stops the pipes, waits for the
// readers to take what is left (Rest), and closes the pipes.
func Wait(readers *sync.WaitGroup, d time.Duration, pipes ...*os.File) {
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		for _, f := range pipes {
			Stop(f)
		}
		<-done
	}
	for _, f := range pipes {
		f.Close()
	}
}

// Stop ends pending and future reads of f with os.ErrDeadlineExceeded;
// the reader then calls Rest.
func Stop(f *os.File) { _ = f.SetReadDeadline(time.Now()) }

// Stopped reports whether err is the end Stop gives a read.
func Stopped(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// Rest passes take what f holds now, in pieces of at most len(buf) bytes,
// without waiting for more. It reports whether it reached end of file,
// which means no writer holds the pipe any more. f must be a pipe made by
// os.Pipe (non-blocking, so a read of an empty pipe returns at once).
func Rest(f *os.File, buf []byte, take func([]byte)) (eof bool) {
	_ = f.SetReadDeadline(time.Time{})
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	_ = rc.Read(func(fd uintptr) bool {
		eof = readNow(fd, buf, take)
		return true // never wait for readiness: the caller's bound has passed
	})
	return eof
}
