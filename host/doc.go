// Package host is the kernel of wai: the single enforcement point between
// an agent and the sandbox.
//
// A Kernel is built from a Config, in code; package host/config maps
// wai.toml onto it for the CLI. It hands out Sessions; a session's Shell and FS are guarded capabilities: every call is
// checked against the limits (ErrInvalid), then — for commands and every
// filesystem mutation — against the policy chain (ErrPermission, first deny
// wins, a failing policy denies), and only then reaches the session's
// workspace, which is opened lazily through the configured backend on first
// use. Every step is reported as a log/slog event (tool.call,
// policy.decision, shell.exec), optionally teed to a JSONL audit file.
//
// The same guarded capabilities are what tool plugins see through host
// functions, what the CLI and MCP server use, and what an embedding program
// gets: nothing reaches a backend around the kernel.
package host
