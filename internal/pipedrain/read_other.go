//go:build !unix

package pipedrain

// readNow takes nothing where pipes cannot be read without waiting; the
// caller keeps what its reads had reached.
func readNow(uintptr, []byte, func([]byte)) bool { return false }
