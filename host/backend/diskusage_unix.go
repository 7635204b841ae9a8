//go:build unix

package backend

import (
	"io/fs"
	"syscall"
)

// allocated is what a file takes on disk: its allocated blocks, as du
// counts them (a sparse file counts what it uses).
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
