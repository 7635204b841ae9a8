// Package atomicfile writes a file whole or not at all.
//
// Session records, state files, bearer tokens and seccomp profiles are read
// by other processes (a later wai, the Podman service) and must survive a
// crash mid-write: a reader sees the old content or the new, never a part.
// The kernel, the MCP server, backends and test helpers all write such
// files, so the one way to do it lives here, importing only the standard
// library, where every one of them may import it.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same
// directory, renamed over path once it is whole. The temporary file is
// created with mode 0600 and changed to perm only before the rename, so
// a secret is never readable by others, not even for a moment. The
// directory must exist. On failure path is left as it was, and the
// temporary file is removed.
func Write(path string, data []byte, perm fs.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && perm != 0o600 {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
