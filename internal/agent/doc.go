// Package agent is wai-agent's logic: it serves the protocol of
// internal/agentproto (docs/AGENT.md) on its standard input and output,
// running each command it is asked for in a session of its own, with a
// timeout it enforces on the command's whole process tree.
//
// The agent runs inside the sandbox as the sandbox user; the host trusts
// nothing it says beyond the sandbox's own commands, and keeps its own
// deadline and kill path (plugins/podman). So the agent keeps no state
// worth protecting: if it dies, the host restarts it or falls back.
//
// It runs on Linux only (it reads /proc and starts sessions); elsewhere
// the package is empty.
package agent
