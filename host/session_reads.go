package host

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// A kept session outlives the process that opened it (`wai call --session`
// twice is two processes), and so must what it has read: otherwise a
// read_file in one run and an edit_file in the next would be refused for a
// read the user plainly did. The record lives in the state directory, one
// small JSON file per kept session, and remembers each file as it was
// (size and modification time): a file changed or recreated since — by
// another process, or because `wai gc` or the idle reaper replaced the
// workspace — no longer counts as read.

// readsFileVersion guards the format; a file of another version is ignored
// (the session then starts knowing nothing, which only costs a re-read).
const readsFileVersion = 2

// maxCarriedReads bounds the record; past it the oldest-sorted paths are
// dropped, which again only costs re-reads.
const maxCarriedReads = 4096

type readsFile struct {
	Version int                    `json:"version"`
	Files   map[string]fingerprint `json:"files"`
}

type fingerprint struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

func fingerprintOf(fi backend.FileInfo) fingerprint {
	return fingerprint{Size: fi.Size, ModTime: fi.ModTime.UTC()}
}

// readsPath is where a kept session's read record lives. The backend is
// part of the key: a session of the same name on another backend is
// another workspace with other files.
func (s *Session) readsPath() string {
	user := s.spec.User
	if user == "" {
		user = "_"
	}
	return filepath.Join(s.k.stateDir, "reads", s.k.cfg.Backend, user, s.spec.Session+".json")
}

// loadReads restores the read record of a kept session. A missing file is
// a session never kept before; a damaged one is logged and dropped, since
// forgetting reads can only cause a refusal, never a blind overwrite.
func (s *Session) loadReads(ctx context.Context) {
	if !s.spec.Keep || !s.k.cfg.ReadBeforeWrite {
		return
	}
	data, err := os.ReadFile(s.readsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var f readsFile
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err == nil && f.Version != readsFileVersion {
		err = errors.New("unknown version")
	}
	if err != nil {
		s.k.log.LogAttrs(ctx, slog.LevelWarn, "session.reads_dropped", slog.String("session", s.spec.Session),
			slog.String("file", s.readsPath()), slog.String("error", err.Error()))
		return
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.carried = f.Files
}

// knownFrom reports whether a file is known either from this process or,
// unchanged, from an earlier one.
func (s *Session) knownFrom(fi backend.FileInfo) bool {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.read[fi.Path] {
		return true
	}
	fp, ok := s.carried[fi.Path]
	return ok && fp == fingerprintOf(fi)
}

// saveReads writes the read record of a kept session from ws, the
// session's workspace about to be closed (nil if it was never opened, in
// which case the record on disk is still right). A session that is not
// kept removes its record, since its workspace goes too.
func (s *Session) saveReads(ctx context.Context, ws backend.Workspace) error {
	path := s.readsPath()
	if !s.spec.Keep {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if !s.k.cfg.ReadBeforeWrite || ws == nil {
		return nil
	}
	s.readMu.Lock()
	read := make([]string, 0, len(s.read))
	for p := range s.read {
		read = append(read, p)
	}
	carried := s.carried
	s.readMu.Unlock()

	f := readsFile{Version: readsFileVersion, Files: map[string]fingerprint{}}
	for _, p := range read {
		if fi, err := ws.FS().Stat(ctx, p); err == nil && fi.Kind == backend.KindFile {
			f.Files[p] = fingerprintOf(fi)
		}
	}
	for p, fp := range carried {
		if _, ok := f.Files[p]; !ok {
			f.Files[p] = fp // still only honoured if the file is unchanged
		}
	}
	if len(f.Files) > maxCarriedReads {
		paths := slices.Sorted(func(yield func(string) bool) {
			for p := range f.Files {
				if !yield(p) {
					return
				}
			}
		})
		for _, p := range paths[maxCarriedReads:] {
			delete(f.Files, p)
		}
	}
	return writeFileAtomic(path, f)
}

// writeFileAtomic writes v as JSON through a temporary file and a rename,
// so a crash mid-write leaves the old content whole.
func writeFileAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
