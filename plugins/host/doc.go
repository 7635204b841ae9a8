// Package host is the host backend: commands run as subprocesses of this
// program, confined to a root directory by their working directory only.
// It is not a sandbox — a command can read and write whatever the user
// running wai can — and says so in Info; configuration must choose it
// explicitly. What it does guarantee: requests are checked against the
// limits before anything runs; a command's cwd and every Filesystem path
// resolve inside the root (host/backend/rootfs); each command runs in its own
// process group, which is killed as a whole — SIGTERM, then SIGKILL — on
// timeout or cancellation, and with SIGKILL as soon as the command itself
// exits, so no background child outlives the call (nor one that left the
// group with setsid but kept its environment: see sweep.go); captured output is kept
// in bounded buffers however much a command prints.
//
// Import it for its side effect of registering the "host" backend:
//
//	import _ "github.com/wai-dev/wai/plugins/host"
//
// It builds on Linux (amd64, arm64) only; elsewhere the package is empty
// and asking for the backend says it is not linked in.
package host
