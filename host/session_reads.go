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
)

// A kept session outlives the process that opened it (`wai call --session`
// twice is two processes), and so must what it has read: otherwise a
// read_file in one run and an edit_file in the next would be refused for a
// read the user plainly did. The record lives next to the workspace's
// other state, one small JSON file per kept session.

// readsFileVersion guards the format; a file of another version is ignored
// (the session then starts knowing nothing, which only costs a re-read).
const readsFileVersion = 1

type readsFile struct {
	Version int      `json:"version"`
	Paths   []string `json:"paths"`
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
	for _, p := range f.Paths {
		s.read[p] = true
	}
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
	f := readsFile{Version: readsFileVersion, Paths: make([]string, 0, len(s.read))}
	for p := range s.read {
		f.Paths = append(f.Paths, p)
	}
	s.readMu.Unlock()
	slices.Sort(f.Paths)
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// Write then rename, so a crash mid-write leaves the old record whole.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".reads-*")
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
