package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
)

// kernelFlags are the flags of every subcommand that needs a kernel.
type kernelFlags struct {
	config  string
	backend string
	verbose bool
	user    string

	// file is the configuration open loaded, for what only the CLI
	// reads ([mcp]).
	file config.File
}

func (k *kernelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.config, "config", "", "config `file` (default ./wai.toml, else $XDG_CONFIG_HOME/wai/config.toml, else built-in defaults)")
	fs.StringVar(&k.backend, "backend", "", "execution backend `name` (podman, the default; host, which is NOT a sandbox; mock), overriding the config's backend")
	fs.BoolVar(&k.verbose, "v", false, "log the kernel's events (policy decisions, execs, backend lifecycle) to stderr")
	fs.StringVar(&k.user, "user", "", "open sessions as this user `name` ([a-z_][a-z0-9_-]*): users never see or touch each other's sessions")
}

// open loads the configuration and builds a kernel from it. The caller
// closes the kernel with closeKernel.
//
// Without withTools the kernel loads no tool plugins: a subcommand that only
// uses a session's Shell or FS (exec) then neither pays for loading Wasm
// nor fails because the plugins are not built. Limits and policies apply
// all the same.
func (k *kernelFlags) open(ctx context.Context, std stdio, stderr io.Writer, withTools bool) (*host.Kernel, error) {
	cfg, err := k.load(std)
	if err != nil {
		return nil, err
	}
	return k.build(ctx, cfg, stderr, withTools)
}

// load loads the configuration the flags name, in std's environment, and
// keeps it in k.file: a subcommand checks what only it reads ([mcp])
// before paying for a kernel.
func (k *kernelFlags) load(std stdio) (config.File, error) {
	cfg, err := loadConfig(std, k.config, k.backend)
	if err != nil {
		return config.File{}, err
	}
	k.file = cfg
	return cfg, nil
}

// build is open with the configuration already loaded.
func (k *kernelFlags) build(ctx context.Context, cfg config.File, stderr io.Writer, withTools bool) (*host.Kernel, error) {
	if !withTools {
		cfg.BundledTools, cfg.Plugins = nil, nil
	}
	var opts []host.Option
	if cfg.UsesBuiltInPlugins() {
		opts = append(opts, host.WithBundledPlugins(bundledPlugins()))
	}
	if k.user != "" {
		opts = append(opts, host.WithUser(k.user))
	}
	if k.verbose {
		opts = append(opts, host.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	kernel, err := host.New(ctx, cfg.Kernel(), opts...)
	if err != nil {
		return nil, err
	}
	// The backend is chosen before anything runs: an unavailable one fails
	// here with what to do, and an unsandboxed one is announced.
	info, err := kernel.Info(ctx)
	if err != nil {
		closeKernel(kernel, stderr)
		return nil, err
	}
	if n := info.Notice(); n != "" {
		fmt.Fprintf(stderr, "wai: notice: %s\n", n)
	}
	return kernel, nil
}

// loadConfig loads the configuration at path (found as config.Load says
// when "") in std's environment and directory, with the backend named
// when backendName is not "". $CONTAINER_HOST of std's environment
// becomes [backends.podman] url when the podman backend may be opened and
// its table names none: the backend would look it up in the process's
// own environment. (The CLI reaches backends only through the kernel, so
// the variable is named here, as Podman documents it.)
func loadConfig(std stdio, path, backendName string) (config.File, error) {
	cfg, err := config.LoadIn(path, config.Env{Getenv: std.getenv, Dir: std.dir})
	if err != nil {
		return config.File{}, err
	}
	if backendName != "" {
		cfg.Backend = backendName
	}
	table, hasTable := cfg.Backends["podman"]
	containerHost := std.getenv("CONTAINER_HOST")
	if _, named := table["url"]; named || containerHost == "" || !hasTable && cfg.Backend != "podman" && cfg.Fallback != "podman" {
		// Adding a table where there was none would make the admin
		// commands look for Podman sessions on a host-only setup.
		return cfg, nil
	}
	withURL := map[string]any{"url": containerHost}
	for key, v := range table {
		withURL[key] = v
	}
	backends := map[string]map[string]any{"podman": withURL}
	for name, t := range cfg.Backends {
		if name != "podman" {
			backends[name] = t
		}
	}
	cfg.Backends = backends
	return cfg, nil
}

// cleanupTimeout bounds closing sessions and backends when wai exits: long
// enough to stop and remove a container, short enough that a hung service
// does not hang the CLI.
const cleanupTimeout = 30 * time.Second

// closeKernel closes k with a fresh context (the command's own may be
// cancelled by an interrupt, and cleanup must still happen) and warns on
// failure: by then the command's result is already out, and its exit
// status is the one that matters.
func closeKernel(k *host.Kernel, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := k.Close(ctx); err != nil {
		fmt.Fprintf(stderr, "wai: warning: cleanup failed: %v\n", err)
		fmt.Fprintf(stderr, "wai: hint: a workspace or container may have been left behind; `wai gc` removes what wai left\n")
	}
}

// fail reports err on stderr with a hint for its kind and returns wai's
// error status. An interrupt is reported as such, not as the error it
// caused.
func fail(ctx context.Context, stderr io.Writer, err error) int {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "wai: interrupted\n")
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "wai: %s\n", printable(err.Error()))
	if h := hint(err); h != "" {
		fmt.Fprintf(stderr, "wai: hint: %s\n", h)
	}
	return exitError
}

// hint is the CLI's next step for an error, by its kind and the operation
// that failed. The message itself says what is wrong and how to fix it;
// the hint adds what only a person at the terminal can do (a wai command
// that shows more, a backend to switch to).
func hint(err error) string {
	op := ""
	var be *backend.Error
	if errors.As(err, &be) {
		op = be.Op
	}
	kind := backend.KindOf(err)
	switch {
	case op == "call" && kind == backend.ErrNotFound:
		return "`wai tools` lists every tool with a summary of its params"
	case op == "call" && kind == backend.ErrInvalid:
		return "`wai tools --json` prints each tool's full input schema"
	case op == "config":
		return "fix the configuration as the message says (wai.example.toml documents every key, limit and default); `wai preflight` checks the whole setup"
	case op == "mcp.token":
		// Not "remove it": wai makes only its own token file anew, not
		// an operator's token_file.
		return "a token file must be yours and private (mode 0600, in a directory only you can write): fix it as the message says"
	case kind == backend.ErrUnavailable && errors.Is(err, context.DeadlineExceeded):
		// A call that ran out of time is kinded unavailable, but the
		// backend is fine: pointing at preflight sends the person to look
		// for an outage.
		return "the call ran out of time, not the backend: raise the tool's deadline (tool_timeouts in the config), " +
			"or run long work as a background job (job_start, or exec_background in a managed container)"
	case errors.Is(err, backend.ErrNotBuiltIn):
		// preflight checks the machine, and no setup of it helps here.
		return "the backend cannot serve in this wai, on any machine: do what the message says, or pick another backend with --backend (host runs unsandboxed)"
	case errors.Is(err, host.ErrPolicyFailed):
		return "the policy named is broken: it crashed, ran out of time or answered nonsense, so it denies what it judges; " +
			"fix the policy plugin, or remove it from [[policies]] (or default_policies) in the config"
	case kind == backend.ErrPermission && strings.Contains(err.Error(), "grants ="):
		return "a plugin uses only the capabilities its [[plugins]] entry grants: add the one named if you trust the plugin with it"
	}
	switch kind {
	case backend.ErrInvalid:
		return "the request or the configuration breaks a rule: fix what the message names (wai.example.toml documents every key, limit and default)"
	case backend.ErrPermission:
		return "a policy refused this: change the command, or the policy's settings ([[policies]] and default_policies in the config)"
	case backend.ErrUnavailable:
		return "the backend cannot serve: do what the message says, and run `wai preflight` to check this machine for it; " +
			"or pick another backend with --backend (host runs unsandboxed)"
	case backend.ErrNotFound:
		return "a file or path does not exist: check the path in the message"
	}
	return ""
}
