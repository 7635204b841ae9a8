//go:build !unix

package backend

import "io/fs"

// allocated is a file's size where the platform reports no block count
// (wasip1, where the plugins that import this package are built).
func allocated(fi fs.FileInfo) int64 { return fi.Size() }
