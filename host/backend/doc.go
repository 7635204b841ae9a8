// Package backend holds the capability contracts every execution backend
// implements — Shell and Filesystem over a per-session Workspace — together
// with the request and result types, the limits every request is checked
// against, the error kinds, and the registry through which backends make
// themselves available.
//
// It imports only the standard library, so a backend (or a test double)
// depends on nothing but this package. Users normally hold a host.Kernel or
// host.Session, which route every capability use through limits and policies
// before it reaches a backend; this package is the narrow driver interface
// underneath, in the way database/sql/driver sits under database/sql.
package backend
