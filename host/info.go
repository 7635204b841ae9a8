package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// BackendInfo says what a kernel's sessions run on: the facts the MCP
// instructions, the tool descriptions and the CLI's notice are built from,
// so that what a model or a person is told is what actually runs.
type BackendInfo struct {
	// Backend is the backend every session runs on.
	Backend string
	// Configured is the backend the configuration asked for; it differs
	// from Backend when the fallback stepped in.
	Configured string
	// Fallback: Configured was unavailable and Backend is the fallback;
	// FallbackReason says why.
	Fallback       bool
	FallbackReason string
	// Sandboxed: commands are isolated from the host system.
	Sandboxed bool
	// NetworkEnabled: commands can reach a network beyond loopback.
	NetworkEnabled bool
	// DefaultTimeout is the limit of a command that names none;
	// MaxCommandTimeout the longest one a tool call may run.
	DefaultTimeout    time.Duration
	MaxCommandTimeout time.Duration
	// HostMounts are the host paths copied into every new workspace.
	HostMounts []HostMount
	// Environment is what commands find besides the workspace, when the
	// backend says (backend.Describer); nil when it does not.
	Environment *backend.Environment
	// JobMaxRuntime and MaxJobs are the limits of background jobs.
	JobMaxRuntime time.Duration
	MaxJobs       int
}

// HostMount is one [[backends.podman.host_mounts]] entry as a model needs
// to know it: where the files come from and where they appear. They are
// copies: changes stay in the workspace and never reach the host.
type HostMount struct {
	HostPath      string
	WorkspacePath string
}

// The contract's timeout range of the bundled command tools
// (shell_execute, podman_shell): 1–120 s, narrowed to the host's limits
// (bundledTimeouts).
const (
	bundledMinTimeout     = time.Second
	bundledCommandTimeout = 120 * time.Second
)

// infoer is implemented by a backend that can describe itself; a backend
// handed in with WithBackend that does not is taken to be unsandboxed,
// since nothing says otherwise.
type infoer interface{ Info() backend.Info }

// resolved is the backend chosen for the kernel's sessions.
type resolved struct {
	b    backend.Backend
	info BackendInfo
}

// Info returns what the kernel's sessions run on, opening the backend on
// first use (the configured one, or the fallback when it is unavailable
// and a fallback is set). The choice is made once: every later session
// runs where the first was told it runs. A backend that cannot be opened
// is not remembered, so a service that comes up later is found; without a
// fallback the error is ErrUnavailable and says how to set the backend up
// or how to opt in to the host backend.
func (k *Kernel) Info(ctx context.Context) (BackendInfo, error) {
	r, err := k.resolve(ctx)
	if err != nil {
		return BackendInfo{}, err
	}
	return r.info, nil
}

// resolve returns the kernel's backend, choosing it on first use.
// Concurrent first uses choose once; each waiter honours its own context.
func (k *Kernel) resolve(ctx context.Context) (*resolved, error) {
	for {
		k.mu.Lock()
		switch {
		case k.closed:
			k.mu.Unlock()
			return nil, errKernelClosed()
		case k.chosen != nil:
			r := k.chosen
			k.mu.Unlock()
			return r, nil
		case k.choosing != nil:
			ch := k.choosing
			k.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, backend.Errorf(backend.ErrUnavailable, "backend", k.cfg.Backend, "gave up waiting for the backend to open: %v", ctx.Err())
			}
		}
		ch := make(chan struct{})
		k.choosing = ch
		k.mu.Unlock()

		r, err := k.choose(ctx)

		k.mu.Lock()
		k.choosing = nil
		close(ch)
		if err == nil {
			k.chosen = r
		}
		k.mu.Unlock()
		return r, err
	}
}

// choose opens the kernel's backend and adds what it says its commands
// find (withEnvironment), in one place for every way it was chosen: an
// injected backend is described as fully as one opened by name.
func (k *Kernel) choose(ctx context.Context) (*resolved, error) {
	b, info, err := k.open(ctx)
	if err != nil {
		return nil, err
	}
	return &resolved{b: b, info: withEnvironment(info, b, k.cfg.SessionIdleTimeout)}, nil
}

// open returns the injected backend, or opens the configured one, or the
// fallback, with the facts about it that do not come from Describer.
func (k *Kernel) open(ctx context.Context) (backend.Backend, BackendInfo, error) {
	if k.injected != nil {
		info := BackendInfo{Backend: "custom"}
		if d, ok := k.injected.(infoer); ok {
			bi := d.Info()
			info = BackendInfo{Backend: bi.Backend, Sandboxed: bi.Sandboxed, NetworkEnabled: bi.NetworkEnabled}
		}
		info.Configured = info.Backend
		return k.injected, k.completeInfo(info), nil
	}
	b, err := k.backend(ctx, k.cfg.Backend)
	if err == nil {
		return b, k.describe(k.cfg.Backend), nil
	}
	if k.cfg.Fallback == "" || !errors.Is(err, backend.ErrUnavailable) {
		return nil, BackendInfo{}, k.unavailableAdvice(err)
	}
	k.log.LogAttrs(ctx, slog.LevelWarn, "backend.fallback", slog.String("backend", k.cfg.Backend),
		slog.String("fallback", k.cfg.Fallback), slog.Bool("sandboxed", false), slog.String("reason", err.Error()))
	fb, ferr := k.backend(ctx, k.cfg.Fallback)
	if ferr != nil {
		return nil, BackendInfo{}, fmt.Errorf("backend %s unavailable (%v), and fallback %s failed too: %w", k.cfg.Backend, err, k.cfg.Fallback, ferr)
	}
	info := k.describe(k.cfg.Fallback)
	info.Sandboxed = false // a fallback never counts as the sandbox that was asked for
	info.Fallback, info.FallbackReason = true, err.Error()
	return fb, info, nil
}

// unavailableAdvice adds to a backend's ErrUnavailable the two ways out:
// set the backend up, or name the unsandboxed host backend. The host
// backend is never picked silently.
func (k *Kernel) unavailableAdvice(err error) error {
	if !errors.Is(err, backend.ErrUnavailable) || k.cfg.Backend == "host" {
		return err
	}
	setup := "`wai preflight` checks this machine for it"
	switch {
	case errors.Is(err, backend.ErrNotBuiltIn):
		// No setup of the machine helps: the cause leads, and says how
		// to build wai with the backend.
		return fmt.Errorf("%w; or, to run commands on this machine WITHOUT a sandbox instead, name the host backend: "+
			"--backend host, or backend = \"host\" in wai.toml", err)
	case k.cfg.Backend == "podman":
		setup = "set Podman up with `sudo scripts/setup-podman.sh` (from wai's source tree), then `wai preflight` checks this machine"
	}
	return &backend.Error{Kind: backend.ErrUnavailable, Op: "backend", Path: k.cfg.Backend,
		Msg: fmt.Sprintf("wai runs commands on the %s backend, which is unavailable; %s. "+
			"To run commands on this machine WITHOUT a sandbox instead, name the host backend: "+
			"--backend host, or backend = \"host\" (or fallback = \"host\") in wai.toml", k.cfg.Backend, setup),
		Err: err}
}

// describe derives a named backend's facts from its name and its table in
// the configuration.
func (k *Kernel) describe(name string) BackendInfo {
	info := BackendInfo{Backend: name, Configured: k.cfg.Backend}
	switch name {
	case "podman":
		info.Sandboxed = true
		table := k.cfg.Backends["podman"]
		network, _ := table["network"].(string)
		info.NetworkEnabled = network != "" && network != "none"
		info.HostMounts = hostMounts(table["host_mounts"])
	case "mock":
		info.Sandboxed = true // it runs nothing
	case "host":
		info.NetworkEnabled = true
	default:
		// A backend wai does not know: claim nothing it cannot vouch for.
		info.NetworkEnabled = true
	}
	return k.completeInfo(info)
}

// completeInfo fills in the limits the kernel itself enforces.
func (k *Kernel) completeInfo(info BackendInfo) BackendInfo {
	l := k.cfg.Limits
	info.DefaultTimeout = l.DefaultTimeout
	_, _, hi := bundledTimeouts(l)
	info.MaxCommandTimeout = min(hi, k.cfg.ToolTimeout("shell_execute"))
	info.JobMaxRuntime, info.MaxJobs = k.cfg.JobMaxRuntime, k.cfg.MaxJobs
	return info
}

// withEnvironment adds what the opened backend says its commands find.
// The kernel's own idle release (session_idle_timeout) stops a sandbox,
// scratch and all, when the backend's would come later: the model is told
// the sooner of the two.
func withEnvironment(info BackendInfo, b backend.Backend, sessionIdle time.Duration) BackendInfo {
	if d, ok := b.(backend.Describer); ok {
		e := d.Environment()
		if e.ScratchDir != "" && sessionIdle > 0 && (e.ScratchIdle == 0 || sessionIdle < e.ScratchIdle) {
			e.ScratchIdle = sessionIdle
		}
		info.Environment = &e
	}
	return info
}

// hostMounts reads host_mounts as the config file gave it; the podman
// backend validates the entries when it opens.
func hostMounts(v any) []HostMount {
	raw, err := json.Marshal(v)
	if err != nil || v == nil {
		return nil
	}
	var entries []struct {
		HostPath  string `json:"host_path"`
		MountPath string `json:"mount_path"`
	}
	if json.Unmarshal(raw, &entries) != nil {
		return nil
	}
	var out []HostMount
	for _, e := range entries {
		wp := "/workspace"
		if p := strings.Trim(strings.TrimPrefix(e.MountPath, "/workspace"), "/"); p != "" {
			wp += "/" + p
		}
		out = append(out, HostMount{HostPath: e.HostPath, WorkspacePath: wp})
	}
	return out
}

// Notice is the one line a person is shown when commands do not run in a
// sandbox, or "" when they do. The CLI prints it before running anything.
func (i BackendInfo) Notice() string {
	if i.Sandboxed {
		return ""
	}
	if i.Fallback {
		return fmt.Sprintf("running on the %s backend because %s is unavailable (fallback = %q): commands are NOT sandboxed; they run on this machine with wai's user and rights",
			i.Backend, i.Configured, i.Backend)
	}
	return fmt.Sprintf("running on the %s backend: commands are NOT sandboxed; they run on this machine with wai's user and rights (Podman is the sandbox: `sudo scripts/setup-podman.sh`)", i.Backend)
}

// commandsNote is the sentence a command tool's description ends with.
// It names no time limit: the host knows only its outer bounds, and a
// tool's own is often stricter (evaluate_python's 5 s, a third-party
// tool's), so "limited to 120 s" after "5-second timeout" would tell the
// model two things. The tools whose timeout is the host's get theirs
// from limitsNote.
func commandsNote(i BackendInfo) string {
	if !i.Sandboxed {
		return fmt.Sprintf("On this server commands run directly on the host (the %s backend), NOT in a sandbox: they can read and change whatever wai's user can, and reach the network.", i.Backend)
	}
	var b strings.Builder
	if i.Backend == "podman" {
		b.WriteString("Commands run in an isolated Podman container; " + writableNote(i.Environment))
	} else {
		fmt.Fprintf(&b, "Commands run in the %s backend's sandbox", i.Backend)
		if i.Environment != nil {
			// It said where its commands can write: as podman's does.
			b.WriteString("; " + writableNote(i.Environment))
		}
	}
	if !i.NetworkEnabled {
		b.WriteString("; there is no network")
	}
	b.WriteString(".")
	return b.String()
}

// writableNote says in a few words where commands can write and what is
// kept.
func writableNote(e *backend.Environment) string {
	if e == nil || e.ScratchDir == "" {
		return "only /workspace persists and is writable"
	}
	return "/workspace is writable and kept; " + e.ScratchDir + " is writable scratch that goes with the container"
}
