package host

import (
	"context"
	"strings"
	"sync"

	"github.com/wai-dev/wai/host/backend"
)

// Commands in managed containers go through the command policies: a
// security team's "only git and ls", or the bundled blocklist, must see
// every command the agent runs, wherever it runs. The containers.* check
// (container_safety's) sees what an operation asks of the container
// (image, mounts, forwarding), never the command; so each command the
// agent gives (exec, exec_background, create's setup_commands, a compose
// service's command) is also put to the chain as a shell.exec check, with
// Container saying which managed container it runs in. A deny from either
// check refuses; nothing runs before both allowed.

// containerCommand is one command an operation runs in a managed
// container: a shell string (run as /bin/sh -c), or an argv.
type containerCommand struct {
	shell   string
	argv    []string
	cwd     string
	envKeys []string
}

// check is the shell.exec request a policy sees of c, run where.
func (c containerCommand) check(where ContainerCheck) CheckRequest {
	argv := c.argv
	if c.shell != "" {
		argv = []string{"/bin/sh", "-c", c.shell}
	}
	return CheckRequest{Action: ActionShellExec, Command: argv, Shell: c.shell, Cwd: c.cwd, EnvKeys: c.envKeys, Container: &where}
}

// fits holds c to the kernel's command length, and refuses a NUL byte
// (no shell string can carry one).
func (c containerCommand) fits(where ContainerCheck, max int) error {
	op := ActionContainersPrefix + where.Operation
	n, nul := len(c.shell), strings.IndexByte(c.shell, 0) >= 0
	if c.shell == "" {
		n = len(strings.Join(c.argv, " "))
		nul = strings.IndexByte(strings.Join(c.argv, " "), 0) >= 0
	}
	if nul {
		return backend.Errorf(backend.ErrInvalid, op, where.Container, "the command contains a NUL byte")
	}
	if n > max {
		return backend.Errorf(backend.ErrInvalid, op, where.Container,
			"command is %d bytes, over the limit of %d: copy a script in with copy_in and run that", n, max)
	}
	return nil
}

// checkInContainer puts each command to the policy chain as shell.exec in
// the container where describes; the first refusal is the error. A
// policy's ask is put to the person once per call for one question (two
// identical setup commands ask once).
func (s *Session) checkInContainer(ctx context.Context, where ContainerCheck, cmds []containerCommand) error {
	for _, c := range cmds { // limits first, as for a session command: nothing over them reaches a policy
		if err := c.fits(where, s.k.cfg.Limits.MaxCommandBytes); err != nil {
			return err
		}
	}
	for _, c := range cmds {
		if err := s.k.chain.check(ctx, s.checkRequest(ctx, c.check(where)), s.askOncePerCall(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// execCommands are the commands exec and exec_background run (none for
// the other operations: they run none of the agent's).
func execCommands(req ContainerRequest) []containerCommand {
	if req.Operation != "exec" && req.Operation != "exec_background" || strings.TrimSpace(req.Command) == "" {
		return nil // an empty command fails as invalid, before anything runs
	}
	return []containerCommand{{shell: req.Command, cwd: req.Workdir}}
}

// createCommands are the commands a create runs in the container it makes:
// the setup commands (the profile's too, as resolved), then a compose
// service's command. They run with the create's env and workdir.
func createCommands(req ContainerRequest, cwd string) []containerCommand {
	keys := envKeys(req.Env)
	var out []containerCommand
	for _, cmd := range req.SetupCommands {
		out = append(out, containerCommand{shell: cmd, cwd: cwd, envKeys: keys})
	}
	if len(req.ServiceCommand) > 0 {
		c := containerCommand{argv: req.ServiceCommand, cwd: cwd, envKeys: keys}
		// A compose string command is ["/bin/sh","-c",s]: judged as the
		// shell string it is, as a session command would be.
		if len(c.argv) == 3 && c.argv[0] == "/bin/sh" && c.argv[1] == "-c" {
			c.shell = c.argv[2]
		}
		out = append(out, c)
	}
	return out
}

// createWhere describes a container a create makes, for its commands'
// checks.
func createWhere(req ContainerRequest) ContainerCheck {
	return ContainerCheck{Operation: "create", Container: req.Name, Image: req.Image, Project: req.Project, Service: req.Service}
}

// callAsksKey carries one containers call's settled asks.
type callAsksKey struct{}

// callAsks are the questions a person approved during one call.
type callAsks struct {
	mu       sync.Mutex
	approved map[string]bool
}

// withCallAsks starts a call's record of settled asks; the containers
// operation's checks share it.
func withCallAsks(ctx context.Context) context.Context {
	if _, ok := ctx.Value(callAsksKey{}).(*callAsks); ok {
		return ctx
	}
	return context.WithValue(ctx, callAsksKey{}, &callAsks{approved: map[string]bool{}})
}

// askOncePerCall is the session's asker, except that a question the
// person approved earlier in this call is not asked again.
func (s *Session) askOncePerCall(ctx context.Context) asker {
	ca, ok := ctx.Value(callAsksKey{}).(*callAsks)
	if !ok {
		return s.askPerson
	}
	return func(ctx context.Context, policy string, req CheckRequest, d Decision) (string, error) {
		key := approvalKey(policy, req)
		ca.mu.Lock()
		done := ca.approved[key]
		ca.mu.Unlock()
		if done {
			return "approved_earlier_in_call", nil
		}
		outcome, err := s.askPerson(ctx, policy, req, d)
		if err == nil {
			ca.mu.Lock()
			ca.approved[key] = true
			ca.mu.Unlock()
		}
		return outcome, err
	}
}
