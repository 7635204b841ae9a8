//go:build linux

package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/wai-dev/wai/internal/agentproto"
)

// Name is the agent build the hello names.
const Name = "wai-agent/1"

// Server is one connection: a host on in and out.
type Server struct {
	in  *agentproto.Reader
	out *agentproto.Writer
	log io.Writer

	// KillOrphans turns on the tree's last rule (tree.go): processes
	// reparented to PID 1 since a command started count as its own. Only
	// for an agent alone in its container's PID namespace, as wai-agent
	// is; on a shared machine it would hit others' daemons.
	KillOrphans bool

	// FSRoot is the directory file operations are confined to
	// (/workspace in a session container).
	FSRoot string

	mu      sync.Mutex
	cmds    map[uint32]*command
	wg      sync.WaitGroup
	version int                           // the protocol version of the hello
	fsOps   map[uint32]context.CancelFunc // file operations running, by id
	fsCache fsCache                       // confined filesystems by limits (fs.go)
	fsIn    map[uint32]*io.PipeWriter     // content of the copy_in operations running
}

// NewServer serves the host on in/out, logging diagnostics to log.
func NewServer(in io.Reader, out io.Writer, log io.Writer) *Server {
	return &Server{in: agentproto.NewReader(in, agentproto.MaxHostFrame), out: agentproto.NewWriter(out),
		log: log, cmds: map[uint32]*command{}, fsOps: map[uint32]context.CancelFunc{}, FSRoot: "/workspace"}
}

// Serve answers the hello, then runs commands until the host closes its
// end (nil) or breaks the protocol. Either way every running command's
// tree is killed before it returns: nothing outlives the connection.
func (s *Server) Serve() error {
	err := s.handshake()
	if err == nil {
		err = s.loop()
	}
	s.mu.Lock()
	for _, c := range s.cmds {
		c.cancel(0)
	}
	for _, cancel := range s.fsOps {
		cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (s *Server) handshake() error {
	f, err := s.in.Read()
	if err != nil {
		return err
	}
	var h agentproto.Hello
	if f.Type != agentproto.TypeHello {
		return fmt.Errorf("%w: first frame is %s, want hello", agentproto.ErrMalformed, f.Type)
	}
	if err := agentproto.Decode(f.Payload, &h); err != nil {
		return err
	}
	// The newest version both ends speak: a host that offers only 1 gets
	// an agent without file operations, as it expects.
	for v := agentproto.Version; v >= agentproto.MinVersion; v-- {
		if slices.Contains(h.Versions, v) {
			s.version = v
			break
		}
	}
	if s.version == 0 {
		msg := fmt.Sprintf("%s speaks protocol versions %d–%d, the host offers %v", Name, agentproto.MinVersion, agentproto.Version, h.Versions)
		_ = s.out.WriteJSON(agentproto.TypeError, 0, agentproto.Error{Message: msg})
		return errors.New(msg)
	}
	return s.out.WriteJSON(agentproto.TypeHello, 0, agentproto.Hello{Version: s.version, PID: os.Getpid(), Agent: Name})
}

func (s *Server) loop() error {
	for {
		f, err := s.in.Read()
		if err != nil {
			return err
		}
		switch f.Type {
		case agentproto.TypeExec:
			var e agentproto.Exec
			if err := agentproto.Decode(f.Payload, &e); err != nil {
				return err
			}
			if err := s.start(f.ID, e); err != nil {
				return err
			}
		case agentproto.TypeCancel:
			var c agentproto.Cancel
			if err := agentproto.Decode(f.Payload, &c); err != nil {
				return err
			}
			s.mu.Lock()
			cmd, stopFS := s.cmds[f.ID], s.fsOps[f.ID]
			s.mu.Unlock()
			if cmd != nil { // one that just ended: its Exit is on the way
				cmd.cancel(c.GraceMS)
			}
			if stopFS != nil { // likewise its answer
				stopFS()
			}
		case agentproto.TypeFS:
			if s.version < agentproto.FSVersion {
				return fmt.Errorf("%w: the host sent %s on protocol version %d", agentproto.ErrMalformed, f.Type, s.version)
			}
			var req agentproto.FSRequest
			if err := agentproto.Decode(f.Payload, &req); err != nil {
				return err
			}
			if err := s.startFS(f.ID, req); err != nil {
				return err
			}
		case agentproto.TypeFSData:
			if s.version < agentproto.FSVersion {
				return fmt.Errorf("%w: the host sent %s on protocol version %d", agentproto.ErrMalformed, f.Type, s.version)
			}
			s.fsData(f.ID, f.Payload)
		default:
			return fmt.Errorf("%w: the host sent %s", agentproto.ErrMalformed, f.Type)
		}
	}
}

// start runs command id in the background; an id in use is a protocol
// error.
func (s *Server) start(id uint32, e agentproto.Exec) error {
	s.mu.Lock()
	if _, dup := s.cmds[id]; dup || s.fsOps[id] != nil || id == 0 {
		s.mu.Unlock()
		return fmt.Errorf("%w: exec with id %d, which is in use", agentproto.ErrMalformed, id)
	}
	c := newCommand(s, id, e)
	s.cmds[id] = c
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		c.run()
		s.mu.Lock()
		delete(s.cmds, id)
		s.mu.Unlock()
		c.sendExit()
	}()
	return nil
}

// markersBut returns a function listing the markers of the running
// commands other than id: their orphans are theirs, not id's.
func (s *Server) markersBut(id uint32) func() map[string]bool {
	return func() map[string]bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		m := make(map[string]bool, len(s.cmds))
		for other, c := range s.cmds {
			if other != id && c.e.EnvMode != agentproto.EnvReplace {
				m[c.e.Marker] = true
			}
		}
		return m
	}
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "wai-agent: "+format+"\n", args...)
}
