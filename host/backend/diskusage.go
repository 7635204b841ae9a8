package backend

import (
	"context"
	"io/fs"
	"path/filepath"
)

// DiskUsage returns the bytes the files under dir take on disk (allocated
// blocks, as du counts them: a sparse file counts what it uses), without
// following symlinks. It stops at ctx's deadline with what it counted and
// the context's error.
func DiskUsage(ctx context.Context, dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return nil // an unreadable entry counts as nothing, as du -s with errors
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		total += allocated(fi)
		return nil
	})
	return total, err
}
