// Package rootfs is a backend.Filesystem over a host directory, confined to
// it the way a chroot would be: every path is resolved by the kernel with
// openat2(2) and RESOLVE_IN_ROOT relative to a held descriptor of the root,
// so "..", absolute paths and symlinks (absolute ones included) all stay
// inside it, whatever a sandboxed command planted there. Operations on a last
// path component (create, mkdir, unlink, rename) open the parent that way and
// act with *at system calls on a name that is never followed.
//
// Only regular files and directories are read or written: files are opened
// non-blocking and checked with fstat, so a FIFO or device planted in the
// workspace fails fast with backend.ErrInvalid instead of hanging the call.
//
// It needs Linux 5.6 or later (openat2) on amd64 or arm64; elsewhere the
// package is empty and backends that need it do not build in.
package rootfs
