//go:build linux

package agent

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/wai-dev/wai/internal/agentproto"
	"github.com/wai-dev/wai/internal/pipedrain"
)

// process is a started command: the process and the agent's ends of its
// output pipes, read by one goroutine each.
type process struct {
	proc    *os.Process
	readers sync.WaitGroup
	outs    []*os.File
}

// A fork that fails with EAGAIN is retried forkRetries times, forkRetryWait
// apart.
const (
	forkRetries   = 20
	forkRetryWait = 100 * time.Millisecond
)

// startProcess starts the command in a new session (so its tree has an
// id of its own to kill by), with stdin fed from the Exec and stdout and
// stderr streamed to the host as frames.
func (c *command) startProcess(path string, argv, env []string) (*process, error) {
	stdin, err := c.stdinFile()
	if err != nil {
		return nil, err
	}
	defer stdin.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	attr := &os.ProcAttr{Dir: c.e.Cwd, Env: env, Files: []*os.File{stdin, outW, errW},
		Sys: &syscall.SysProcAttr{Setsid: true}}
	proc, err := os.StartProcess(path, argv, attr)
	// At the pids limit fork fails with EAGAIN until the killed processes
	// of an earlier command are reaped: worth a short wait.
	for try := 0; errors.Is(err, syscall.EAGAIN) && try < forkRetries; try++ {
		time.Sleep(forkRetryWait)
		proc, err = os.StartProcess(path, argv, attr)
	}
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	c.started = agentproto.Started{PID: proc.Pid, Start: startTime(proc.Pid)}
	p := &process{proc: proc, outs: []*os.File{outR, errR}}
	p.readers.Add(2)
	go p.pump(c, outR, agentproto.TypeStdout)
	go p.pump(c, errR, agentproto.TypeStderr)
	return p, nil
}

// stdinFile is the read end the command gets: /dev/null without stdin,
// else a pipe a goroutine fills and closes (a command that does not read
// it gets EPIPE there, not a hang).
func (c *command) stdinFile() (*os.File, error) {
	if len(c.e.Stdin) == 0 {
		return os.Open(os.DevNull)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	data := c.e.Stdin
	go func() {
		_, _ = w.Write(data)
		w.Close()
	}()
	return r, nil
}

// pump sends what f yields as frames of type t until EOF or until drain
// closes f.
func (p *process) pump(c *command, f *os.File, t agentproto.Type) {
	defer p.readers.Done()
	buf := make([]byte, agentproto.MaxChunk)
	gone := false // the host is gone; Serve kills the command
	send := func(p []byte) {
		if len(p) == 0 || c.e.Discard || gone {
			return
		}
		c.announce()
		gone = c.s.out.Write(t, c.id, p) != nil
	}
	for {
		n, err := f.Read(buf)
		send(buf[:n])
		if gone {
			_, _ = io.Copy(io.Discard, f)
			return
		}
		if pipedrain.Stopped(err) {
			// drain gave up waiting: what the pipe holds was written
			// before, and is sent, not dropped.
			pipedrain.Rest(f, buf, send)
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.s.logf("reading the output of command %d: %v", c.id, err)
			}
			return
		}
	}
}

// drain waits up to d for the output to end, then stops reading: whatever
// still holds the pipes open is not waited for.
func (p *process) drain(d time.Duration) { pipedrain.Wait(&p.readers, d, p.outs...) }
