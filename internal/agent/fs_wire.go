//go:build linux

package agent

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentfs"
	"github.com/wai-dev/wai/internal/agentproto"
)

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func errIDInUse(id uint32) error {
	return fmt.Errorf("%w: request with id %d, which is in use", agentproto.ErrMalformed, id)
}

// sendFS sends file operation id's answer in pieces of at most MaxChunk
// bytes, the frames the host reads: FSPart frames, then one FSEnd. A write
// that fails means the connection is gone; the read loop sees that.
func (s *Server) sendFS(id uint32, resp agentproto.FSResponse) {
	p, err := json.Marshal(resp)
	if err != nil {
		p, _ = json.Marshal(agentproto.FSResponse{Error: agentfs.EncodeError(
			backend.Errorf(backend.ErrUnavailable, "fs", "", "wai-agent could not encode its answer: %v", err))})
	}
	for len(p) > agentproto.MaxChunk {
		if s.out.Write(agentproto.TypeFSPart, id, p[:agentproto.MaxChunk]) != nil {
			return
		}
		p = p[agentproto.MaxChunk:]
	}
	_ = s.out.Write(agentproto.TypeFSEnd, id, p)
}

// fsData hands a piece of a copy_in's content to the operation; empty,
// it ends the content. It blocks until the operation took it (the file
// system's pace is the host's), and drops data for an operation that
// ended already: the host may still be sending when the answer (an
// error, say) crosses it.
func (s *Server) fsData(id uint32, p []byte) {
	s.mu.Lock()
	pw := s.fsIn[id]
	s.mu.Unlock()
	if pw == nil {
		return
	}
	if len(p) == 0 {
		_ = pw.Close()
		return
	}
	_, _ = pw.Write(p)
}
