package host

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path"

	"github.com/wai-dev/wai/host/backend"
)

// CopyLimits bound one CopyHostDir.
type CopyLimits struct {
	MaxFiles int
	MaxBytes int64
}

// CopyReport is what CopyHostDir copied and left out.
type CopyReport struct {
	Files   int
	Bytes   int64
	Skipped int  // symlinks, special files, files refused by a policy
	Cut     bool // a limit stopped the copy before the end
}

// CopyHostDir copies the host directory src into the workspace under dst,
// as copies: nothing of the host is mounted, and changes stay in the
// workspace. It never leaves src (symlinks are skipped, and os.Root
// confines every open), each file passes the policy chain as an fs.write
// of its workspace path, and the copy stops at lim. The caller decides
// which host directories may be copied at all.
func (s *Session) CopyHostDir(ctx context.Context, src, dst string, lim CopyLimits) (CopyReport, error) {
	var rep CopyReport
	done, err := s.begin()
	if err != nil {
		return rep, err
	}
	defer done()
	ws, _, err := s.workspace(ctx)
	if err != nil {
		return rep, err
	}
	cfs, ok := ws.FS().(backend.CopyInFS)
	if !ok {
		return rep, backend.Errorf(backend.ErrUnavailable, "fs.copyin", dst, "this backend cannot copy files in")
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		return rep, backend.Errorf(backend.ErrInvalid, "fs.copyin", src, "cannot open the host directory: %v", err)
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			rep.Skipped++
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !d.Type().IsRegular() {
			if !d.IsDir() {
				rep.Skipped++
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			rep.Skipped++
			return nil
		}
		if rep.Files >= lim.MaxFiles || rep.Bytes+info.Size() > lim.MaxBytes {
			rep.Cut = true
			return fs.SkipAll
		}
		target := path.Join(dst, rel)
		if err := s.check(ctx, CheckRequest{Action: ActionFSWrite, Path: target}); err != nil {
			rep.Skipped++
			return nil
		}
		f, err := root.Open(rel)
		if err != nil {
			rep.Skipped++
			return nil
		}
		n, err := cfs.CopyIn(ctx, target, f, info.Mode().Perm())
		f.Close()
		if err != nil {
			if errors.Is(err, backend.ErrExist) {
				rep.Skipped++
				return nil
			}
			return err
		}
		rep.Files++
		rep.Bytes += n
		return nil
	})
	s.k.log.LogAttrs(ctx, slog.LevelInfo, "session.copied_in", slog.String("session", s.spec.Session),
		slog.String("from", src), slog.String("to", dst), slog.Int("files", rep.Files), slog.Int64("bytes", rep.Bytes),
		slog.Int("skipped", rep.Skipped), slog.Bool("cut", rep.Cut))
	return rep, err
}
