package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/internal/wasm"
)

// Actions a policy is asked about: the wire's own names (docs/ABI.md),
// so the kernel and the plugin runtime cannot disagree on one.
const (
	ActionShellExec      = wasm.ActionShellExec      // "shell.exec"
	ActionShellScript    = wasm.ActionShellScript    // "shell.script"
	ActionFSWrite        = wasm.ActionFSWrite        // "fs.write"
	ActionFSEdit         = wasm.ActionFSEdit         // "fs.edit"
	ActionFSRemove       = wasm.ActionFSRemove       // "fs.remove"
	ActionLifecycleStart = wasm.ActionLifecycleStart // "lifecycle.start"
	ActionLifecycleStop  = wasm.ActionLifecycleStop  // "lifecycle.stop"
)

// CheckRequest is what a policy sees of one action: its JSON form is the
// ABI's wai_check input.
type CheckRequest struct {
	Action string `json:"action"`
	// Command is the argv shell.exec runs: Argv, or ["/bin/sh", "-c",
	// Shell]. For shell.script it is the interpreter.
	Command []string `json:"command,omitempty"`
	// Shell is the shell string of shell.exec, when it has one.
	Shell string `json:"shell,omitempty"`
	// Script is the text of shell.script.
	Script  string   `json:"script,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	EnvKeys []string `json:"env_keys,omitempty"`
	Path    string   `json:"path,omitempty"`
	// ResolvedPath is, for fs.write, fs.edit and fs.remove, the entry the
	// mutation changes: Path with every symlink followed inside the
	// workspace, chroot-style (an absolute target counts from the
	// workspace root, unlike in the workspace's commands; the last element
	// too, except for fs.remove), relative to the workspace root. A policy about a
	// directory must judge both: "p/new" with p -> protected is
	// "protected/new". The mutation then acts on this path without
	// following any symlink, so it changes what the policy judged or
	// nothing.
	ResolvedPath string `json:"resolved_path,omitempty"`
	Tool         string `json:"tool,omitempty"`
	Session      string `json:"session,omitempty"`
	// Container describes a containers.* action (never an environment
	// value). On a shell.exec it says the command runs in a managed
	// container, not the session's sandbox: Operation is the one running
	// it (exec, exec_background, create for setup commands and a compose
	// service's command), Container its name ("" for a create that
	// generates one), Cwd the container's working directory.
	Container *ContainerCheck `json:"container,omitempty"`
}

// Decision is a policy's answer: allow, deny, or (Ask) ask a person.
type Decision struct {
	Allow bool
	// Ask, with Allow false, asks a person to approve the action; Reason
	// is then the question's why ("\"curl\" is not in the allowlist").
	// Without an Approver to ask, it denies.
	Ask    bool
	Reason string
	// ConfigKey optionally names the key of the policy's config that
	// would allow the action without asking ("commands"); a deny's
	// message points the operator to it.
	ConfigKey string
}

// ErrPolicyFailed is in the refusal of an action whose policy could not
// judge it (an error, a trap, no answer in time, a broken answer): the
// action is denied as a deny would be (ErrPermission), but changing the
// command does not help; the policy plugin must be fixed or removed. It
// is backend.ErrPolicyFailed, the sentinel the plugin runtime (which may
// not import this package) maps the wire's "policy_failed" back to, so a
// refusal a tool plugin passes on still matches it.
var ErrPolicyFailed = backend.ErrPolicyFailed

// asker settles a policy's ask: nil error when a person approved.
type asker func(ctx context.Context, policy string, req CheckRequest, d Decision) (outcome string, err error)

// Policy decides whether an action may run. A Policy must be safe for
// concurrent use. An error means the policy could not decide; the chain
// treats it as a deny.
type Policy interface {
	Name() string
	Check(ctx context.Context, req CheckRequest) (Decision, error)
}

// policyChain asks every policy in order; the first deny wins.
type policyChain struct {
	policies []Policy
	timeout  time.Duration
	log      *slog.Logger
	clock    func() time.Time // reads the time an answer arrived; nil: time.Now
}

// check returns nil when every policy allows, else an ErrPermission error
// naming the policy and its reason. A policy that fails, panics or runs
// past the per-check deadline denies: a broken guard must not open the
// door. A policy that asks is settled by ask (nil: deny), outside the
// policy's deadline, since a person takes their time.
func (c *policyChain) check(ctx context.Context, req CheckRequest, ask asker) error {
	for _, p := range c.policies {
		if j, ok := p.(interface{ judges(string) bool }); ok && !j.judges(req.Action) {
			continue
		}
		start := time.Now()
		d, err := c.ask(ctx, p, req)
		if err != nil {
			if ctx.Err() != nil {
				// The caller gave up; that is not the policy's verdict.
				return backend.Errorf(backend.ErrUnavailable, req.Action, subject(req), "cancelled while policy %s was checking: %v", p.Name(), ctx.Err())
			}
			d = Decision{Reason: fmt.Sprintf("%v: %v", ErrPolicyFailed, err)}
			c.event(ctx, slog.LevelWarn, p.Name(), req, d, time.Since(start))
			// The failure's text, not its kind: a plugin's broken answer
			// is ErrInvalid, and the refusal must stay ErrPermission.
			return &backend.Error{Kind: backend.ErrPermission, Op: req.Action, Path: subject(req),
				Msg: "denied by policy " + p.Name(), Err: fmt.Errorf("%w: %v", ErrPolicyFailed, err)}
		}
		if d.Ask && !d.Allow {
			if err := c.settleAsk(ctx, p.Name(), req, d, ask, start); err != nil {
				return err
			}
			continue
		}
		if !d.Allow {
			if d.Reason == "" {
				d.Reason = "no reason given"
			}
			c.event(ctx, slog.LevelWarn, p.Name(), req, d, time.Since(start))
			return backend.Errorf(backend.ErrPermission, req.Action, subject(req), "denied by policy %s: %s", p.Name(), d.Reason)
		}
		c.event(ctx, slog.LevelDebug, p.Name(), req, d, time.Since(start))
	}
	return nil
}

// settleAsk asks a person about an action a policy asked about; nil means
// approved. The ask and its outcome are one policy.decision event.
func (c *policyChain) settleAsk(ctx context.Context, policy string, req CheckRequest, d Decision, ask asker, start time.Time) error {
	if d.Reason == "" {
		d.Reason = "no reason given"
	}
	outcome, err := "no_approver", askDenied(policy, req, d, "no one can be asked here")
	if ask != nil {
		outcome, err = ask(ctx, policy, req, d)
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
	}
	c.event(ctx, level, policy, req, d, time.Since(start), slog.String("answer", outcome))
	return err
}

// askDenied is the refusal of an action a policy asked about and no
// person approved: the policy's reason, why, and the config key that
// would allow it without asking.
func askDenied(policy string, req CheckRequest, d Decision, why string) error {
	fix := "the operator can allow it in the config of policy " + policy + " (wai.toml)"
	if d.ConfigKey != "" {
		fix = "the operator can allow it without asking with the key `" + d.ConfigKey + "` of policy " + policy + "'s config (wai.toml)"
	}
	return backend.Errorf(backend.ErrPermission, req.Action, subject(req), "denied by policy %s: %s; %s; %s", policy, d.Reason, why, fix)
}

// judges reports whether some policy of the chain judges action.
func (c *policyChain) judges(action string) bool {
	for _, p := range c.policies {
		if j, ok := p.(interface{ judges(string) bool }); !ok || j.judges(action) {
			return true
		}
	}
	return false
}

func (c *policyChain) ask(ctx context.Context, p Policy, req CheckRequest) (d Decision, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	defer func() {
		if r := recover(); r != nil {
			d, err = Decision{}, fmt.Errorf("panic: %v", r)
		}
	}()
	d, err = p.Check(ctx, req)
	now := time.Now
	if c.clock != nil {
		now = c.clock
	}
	if err == nil && (ctx.Err() != nil || !now().Before(deadline)) {
		// An answer that arrived after the deadline is not trusted: the
		// check must be bounded for the chain to be. The clock decides,
		// not ctx.Err(): on busy cores the timer that cancels ctx can fire
		// well after the deadline it stands for.
		err = fmt.Errorf("no answer within %s", c.timeout)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", c.timeout)
	}
	return d, err
}

func (c *policyChain) event(ctx context.Context, level slog.Level, policy string, req CheckRequest, d Decision, dur time.Duration, extra ...slog.Attr) {
	if !c.log.Enabled(ctx, level) {
		return
	}
	decision := "deny"
	switch {
	case d.Allow:
		decision = "allow"
	case d.Ask:
		decision = "ask"
	}
	attrs := []slog.Attr{slog.String("policy", policy), slog.String("action", req.Action),
		slog.String("subject", subject(req)), slog.String("decision", decision),
		slog.String("reason", d.Reason), slog.String("session", req.Session),
		slog.String("tool", req.Tool), slog.Duration("duration", dur)}
	if req.ResolvedPath != "" {
		attrs = append(attrs, slog.String("resolved_path", req.ResolvedPath))
	}
	attrs = append(attrs, extra...)
	c.log.LogAttrs(ctx, level, "policy.decision", attrs...)
}

// subject is what an action is about, for messages and events.
func subject(req CheckRequest) string {
	switch {
	case req.Path != "":
		return req.Path
	case req.Action == ActionShellScript:
		return "script"
	case req.Shell != "":
		return req.Shell + inContainer(req)
	case req.Container != nil && req.Action != ActionShellExec:
		return req.Container.Container
	}
	return joinArgv(req.Command) + inContainer(req)
}

// inContainer says where a shell.exec runs when that is a managed
// container: the person asked, the audit and the refusal name it, and a
// session-long approval of a command in the session's shell does not
// approve it in a container, nor the other way round.
func inContainer(req CheckRequest) string {
	if req.Action != ActionShellExec || req.Container == nil {
		return ""
	}
	if req.Container.Container == "" {
		return " (in the container " + req.Container.Operation + " makes)"
	}
	return " (in container " + req.Container.Container + ")"
}
