// Package sdktests holds the conformance suites every execution backend
// runs: RunShell for the Shell capability and RunFilesystem for the
// Filesystem capability. A backend joins with one line per suite in its own
// test file:
//
//	func TestShell(t *testing.T)      { sdktests.RunShell(t, conformanceBackend) }
//	func TestFilesystem(t *testing.T) { sdktests.RunFilesystem(t, conformanceBackend) }
//
// The backend says what it can do through Caps (real processes, a
// sandbox, python3, network, a host directory behind the workspace) and the
// suites pick their checks from that, never from the backend's name: a
// check the backend cannot take is skipped with the capability it needs, so
// "go test -v" shows exactly what was and was not proven.
//
// Every check is a named parallel subtest running under a watchdog: a
// backend call that hangs (a FIFO opened for reading, a pipe held by a
// grandchild) fails that check with a message naming it, and the rest of the
// run carries on.
package sdktests
