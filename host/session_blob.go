package host

import (
	"context"

	"github.com/wai-dev/wai/host/backend"
)

// ReadBytes returns at most max bytes of a workspace file as they are, and
// its size: how a front end shows a person a file the agent made (an
// image, a PDF), which Read's text lines cannot carry. Like every read it
// passes no policy; it opens the workspace if needed. ErrUnavailable when
// the backend cannot read bytes.
func (s *Session) ReadBytes(ctx context.Context, path string, max int64) ([]byte, int64, error) {
	done, err := s.begin()
	if err != nil {
		return nil, 0, err
	}
	defer done()
	ws, _, err := s.workspace(ctx)
	if err != nil {
		return nil, 0, err
	}
	br, ok := ws.FS().(backend.BlobReader)
	if !ok {
		return nil, 0, backend.Errorf(backend.ErrUnavailable, "fs.read_bytes", path, "this backend cannot read a file's bytes; read it as text with read_file")
	}
	return br.ReadBytes(ctx, path, max)
}

// Opened reports whether the session's workspace is open: a front end
// listing files need not create a sandbox to find none.
func (s *Session) Opened() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ws != nil
}
