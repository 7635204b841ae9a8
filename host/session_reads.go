package host

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/atomicfile"
)

// Read-before-write: a session may change an existing file only as it last
// saw it. Each file it reads or writes is remembered with its size and
// modification time; a file changed since — by a command, another process,
// or because `wai gc` or the idle reaper replaced the workspace — must be
// read again first.
//
// A kept session outlives the process that opened it (`wai call --session`
// twice is two processes), and so does what it has seen: otherwise a
// read_file in one run and an edit_file in the next would be refused for a
// read the user plainly did. The record lives in the state directory, one
// small JSON file per kept session.

// readsFileVersion guards the format; a file of another version is ignored
// (the session then starts knowing nothing, which only costs a re-read).
const readsFileVersion = 2

// maxSavedReads bounds the record; past it the last-sorted paths are
// dropped, which again only costs re-reads.
const maxSavedReads = 4096

type readsFile struct {
	Version int                    `json:"version"`
	Files   map[string]fingerprint `json:"files"`
}

// fingerprint is a file as the session saw it.
type fingerprint struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

func fingerprintOf(fi backend.FileInfo) fingerprint {
	return fingerprint{Size: fi.Size, ModTime: fi.ModTime.UTC()}
}

type knowledge int

const (
	unknown      knowledge = iota // never read or written by this session
	knownAsIs                     // seen, and unchanged since
	knownChanged                  // seen, but it changed since
)

// markKnown records that the session has seen the file fi describes.
func (s *Session) markKnown(fi backend.FileInfo) {
	if fi.Kind != backend.KindFile {
		return
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.seen[fi.Path] = fingerprintOf(fi)
}

// markKnownPath records the file at path as it is now, after the session
// wrote it. A failed stat records nothing: the next write asks for a read.
func (s *Session) markKnownPath(ctx context.Context, fs backend.Filesystem, path string) {
	if fi, err := fs.Stat(ctx, path); err == nil {
		s.markKnown(fi)
	}
}

func (s *Session) knowledgeOf(fi backend.FileInfo) knowledge {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	fp, ok := s.seen[fi.Path]
	switch {
	case !ok:
		return unknown
	case fp == fingerprintOf(fi):
		return knownAsIs
	}
	return knownChanged
}

// forgetUnder drops what the session knew about path and everything below.
func (s *Session) forgetUnder(path string) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	maps.DeleteFunc(s.seen, func(p string, _ fingerprint) bool {
		return p == path || path == "." || strings.HasPrefix(p, path+"/")
	})
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
	maps.Copy(s.seen, f.Files)
}

// saveReads writes the read record of a kept session, and removes it when
// the session's workspace goes away with it.
func (s *Session) saveReads() error {
	path := s.readsPath()
	if !s.spec.Keep {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if !s.k.cfg.ReadBeforeWrite {
		return nil
	}
	s.readMu.Lock()
	f := readsFile{Version: readsFileVersion, Files: maps.Clone(s.seen)}
	s.readMu.Unlock()
	if len(f.Files) > maxSavedReads {
		for _, p := range slices.Sorted(maps.Keys(f.Files))[maxSavedReads:] {
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
	return atomicfile.Write(path, data, 0o600)
}
