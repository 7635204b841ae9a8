//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wai-dev/wai/internal/agentproto"
)

// command is one Exec as it runs.
type command struct {
	s  *Server
	id uint32
	e  agentproto.Exec

	stop     chan int64 // a Cancel's grace, in ms; buffered
	stopOnce sync.Once

	exit agentproto.Exit

	started      agentproto.Started // set once the process runs
	announceOnce sync.Once
}

// startedDelay is how long a command runs before the agent sends Started
// unasked: a command that ends sooner (most do) is reported by its Exit
// alone, one frame fewer through the service. Output, which may come
// sooner, is preceded by Started.
const startedDelay = 5 * time.Millisecond

// announce sends Started, once.
func (c *command) announce() {
	c.announceOnce.Do(func() {
		_ = c.s.out.WriteJSON(agentproto.TypeStarted, c.id, c.started)
	})
}

func newCommand(s *Server, id uint32, e agentproto.Exec) *command {
	return &command{s: s, id: id, e: e, stop: make(chan int64, 1)}
}

// cancel asks the running command to stop; only the first call counts.
func (c *command) cancel(graceMS int64) {
	c.stopOnce.Do(func() { c.stop <- graceMS })
}

// drainWait bounds how long output is still read after a command ended:
// what it left running (kept with KeepBackground, or not yet dead) may
// hold the pipes open for good. A variable so a test can make the bound
// pass before the output is read.
var drainWait = 200 * time.Millisecond

// run starts the command and waits for its end, its timeout or a cancel,
// killing its tree in the last two cases and what it left behind in the
// first.
func (c *command) run() {
	start := time.Now()
	argv := c.e.Argv
	if len(c.e.Script) > 0 {
		f, err := writeScript(c.e.Marker, c.e.Script)
		if err != nil {
			c.notStarted(126, fmt.Sprintf("wai-agent: cannot write the script: %v\n", err))
			return
		}
		defer os.Remove(f)
		argv = append(append([]string{}, argv...), f)
	}
	env := c.environ()
	path, err := lookPath(argv[0], env, c.e.Cwd)
	if err != nil {
		code := 127
		if errors.Is(err, fs.ErrPermission) {
			code = 126
		}
		c.notStarted(code, fmt.Sprintf("wai-agent: %s: %v\n", argv[0], err))
		return
	}
	p, err := c.startProcess(path, argv, env)
	if err != nil {
		c.notStarted(126, fmt.Sprintf("wai-agent: %s: %v\n", argv[0], err))
		return
	}
	ts := treeSpec{root: p.proc.Pid, marker: c.e.Marker, others: c.s.markersBut(c.id)}
	if c.s.KillOrphans {
		ts.rootStart = c.started.Start
	}
	announce := time.AfterFunc(startedDelay, c.announce)
	defer func() {
		announce.Stop()
		c.announceOnce.Do(func() {}) // ended before it was due: Exit says it all
	}()
	done := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := p.proc.Wait()
		done <- st
	}()
	timer := time.NewTimer(time.Duration(c.e.TimeoutMS) * time.Millisecond)
	defer timer.Stop()
	var st *os.ProcessState
	select {
	case st = <-done:
		if !c.e.KeepBackground {
			c.exit.Killed, _ = killTree(ts, 0)
		}
	case <-timer.C:
		c.exit.TimedOut = true
		c.exit.Killed, c.exit.Signal = killTree(ts, time.Duration(c.e.GraceMS)*time.Millisecond)
		st = <-done
	case g := <-c.stop:
		c.exit.Cancelled = true
		c.exit.Killed, c.exit.Signal = killTree(ts, time.Duration(g)*time.Millisecond)
		st = <-done
	}
	c.exit.Code = exitCode(st)
	p.drain(drainWait)
	c.exit.DurationNS = int64(time.Since(start))
}

func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// notStarted reports a command that never ran the way a shell would: its
// complaint on stderr and exit 126 or 127.
func (c *command) notStarted(code int, msg string) {
	if !c.e.Discard {
		_ = c.s.out.Write(agentproto.TypeStderr, c.id, []byte(msg))
	}
	c.exit.Code = code
}

func (c *command) sendExit() {
	if err := c.s.out.WriteJSON(agentproto.TypeExit, c.id, c.exit); err != nil {
		c.s.logf("sending the exit of command %d: %v", c.id, err)
	}
}

// environ builds the command's environment; the marker (not under
// EnvReplace) comes last, where
// no entry of Env can override it (the last entry of a name wins in libc
// and Go alike, and the host refuses Env entries of the marker's name).
func (c *command) environ() []string {
	var env []string
	if c.e.EnvMode == agentproto.EnvReplace {
		if _, ok := c.e.Env["PATH"]; !ok {
			env = append(env, "PATH="+c.e.Path)
		}
	} else {
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if _, over := c.e.Env[k]; !over {
				env = append(env, kv)
			}
		}
	}
	for k, v := range c.e.Env {
		env = append(env, k+"="+v)
	}
	if c.e.EnvMode == agentproto.EnvReplace {
		// Only PATH and Env, as promised: the tree is found through the
		// command's session and parents instead.
		return env
	}
	return append(env, c.e.Marker)
}

// writeScript writes a script to a file only its owner can read, named
// after the command's marker value (128 random bits: no other command can
// have made it first).
func writeScript(marker string, script []byte) (string, error) {
	_, val, _ := strings.Cut(marker, "=")
	name := filepath.Join(os.TempDir(), ".wai-exec-"+val+".sh")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(script)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// lookPath finds file the way execvp does, on the PATH of env; a name with
// a slash is taken as is (relative to cwd).
func lookPath(file string, env []string, cwd string) (string, error) {
	if strings.Contains(file, "/") {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		return file, executable(p)
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	var denied error
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		err := executable(p)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, fs.ErrPermission) && denied == nil {
			denied = err
		}
	}
	if denied != nil {
		return "", denied
	}
	return "", errors.New("command not found")
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%w: is a directory", fs.ErrPermission)
	}
	if err := syscall.Access(p, 1); err != nil { // X_OK
		return fmt.Errorf("%w: not executable", fs.ErrPermission)
	}
	return nil
}
