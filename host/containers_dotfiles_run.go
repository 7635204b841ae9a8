package host

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// dotfilesTimeout bounds the clone, and the install script, each: both
// run inside the create call, whose deadline covers setup commands too.
const dotfilesTimeout = 120 * time.Second

// dotfilesOutputTail is how much of a step's output the result keeps: the
// end of a failing script is where its error is.
const dotfilesOutputTail = 4 << 10

// execIn runs one command in the created container.
type execIn func(ctx context.Context, req backend.ExecRequest) (backend.ExecResult, error)

// The shell snippets dotfiles run, as sh -c SCRIPT wai-dotfiles TARGET
// ARGS…: values are positional parameters, never spliced into a script.
// The prelude makes a relative target relative to the home directory.
const (
	dotfilesPrelude = `t=$1; shift; case $t in /*) ;; *) t=$HOME/$t ;; esac; `
	dotfilesClone   = dotfilesPrelude + `mkdir -p -- "${t%/*}" && exec "$@" "$t"`
	// A repository in the container's file system (a mount) is often
	// owned by another user than the container's, which git refuses as
	// "dubious ownership" unless safe.directory says otherwise in the
	// global configuration (git drops -c for the local upload-pack). The
	// clone gets a global configuration of its own that includes the
	// user's and trusts the repository: its scripts are about to run as
	// this user anyway, in the same container.
	dotfilesCloneLocal = dotfilesPrelude + `mkdir -p -- "${t%/*}" && g=$(mktemp) || exit 1; ` +
		`printf '[include]\n\tpath = %s/.gitconfig\n\tpath = %s/.config/git/config\n[safe]\n\tdirectory = *\n' "$HOME" "$HOME" > "$g" && ` +
		`GIT_CONFIG_GLOBAL=$g "$@" "$t"; rc=$?; rm -f -- "$g"; exit $rc`
	dotfilesProbe = dotfilesPrelude + `cd -- "$t" || exit 1; for f in "$@"; do if [ -f "$f" ]; then printf '%s\n' "$f"; fi; done`
	dotfilesRun   = dotfilesPrelude + `cd -- "$t" || exit 1; if [ "$1" = Makefile ]; then exec make; elif [ -x "$1" ]; then exec "./$1"; else exec sh "$1"; fi`
	dotfilesLink  = dotfilesPrelude + `for f in "$@"; do ln -sfn -- "$t/$f" "$HOME/$f" || exit 1; done`
)

// ghCredential lets the clone of a private GitHub repository over https
// use the token forward_gh passes (GH_TOKEN), for github.com only, as
// `gh auth setup-git` would; without the variable it answers nothing.
const ghCredential = `credential.https://github.com.helper=!f() { test "$1" = get && test -n "$GH_TOKEN" && ` +
	`printf 'username=x-access-token\npassword=%s\n' "$GH_TOKEN"; }; f`

// dotfilesCloneArgv is the clone: shallow, only the known transports
// (git's remote helpers such as ext:: stay off whatever the container's
// git configuration says), never asking for a password.
func dotfilesCloneArgv(p *dotfilesPlan) []string {
	argv := []string{"git", "-c", "protocol.allow=never", "-c", ghCredential}
	for _, proto := range []string{"https", "http", "ssh", "git", "file"} {
		argv = append(argv, "-c", "protocol."+proto+".allow=always")
	}
	argv = append(argv, "clone", "--depth", "1")
	if p.branch != "" {
		argv = append(argv, "--branch", p.branch)
	}
	return append(argv, "--", p.repo)
}

// applyDotfiles clones the planned repository into the created container
// and runs its install script, or links the common dotfiles it holds.
// The inline files were written with the create. A failing step is
// reported in the result and the returned note; the container is kept.
func applyDotfiles(ctx context.Context, run execIn, p *dotfilesPlan) (*DotfilesResult, string) {
	res := &DotfilesResult{Skipped: p.skipped}
	for _, f := range p.inline {
		res.Inline = append(res.Inline, f.Path)
	}
	if p.skipped != "" || p.repo == "" {
		if len(p.inline) > 0 {
			res.Source = "inline"
		}
		return res, ""
	}
	res.Source, res.Branch, res.Target = p.shown, p.branch, p.shownTo
	sh := func(script string, args ...string) backend.ExecRequest {
		argv := append([]string{"sh", "-c", script, "wai-dotfiles", p.target}, args...)
		return backend.ExecRequest{Argv: argv, Env: map[string]string{"GIT_TERMINAL_PROMPT": "0"}, Timeout: dotfilesTimeout}
	}
	clone := dotfilesClone
	if strings.HasPrefix(p.repo, "file://") {
		clone = dotfilesCloneLocal
	}
	if r, err := run(ctx, sh(clone, dotfilesCloneArgv(p)...)); failedStep(res, r, err) {
		return dotfilesFailed(res, "clone", fmt.Sprintf("cloning %s failed", p.shown), r, err)
	}
	candidates := append([]string{}, dotfilesScripts...)
	if p.script != "" {
		candidates = []string{p.script}
	}
	r, err := run(ctx, sh(dotfilesProbe, append(candidates, commonDotfiles...)...))
	if failedStep(res, r, err) {
		return dotfilesFailed(res, "script", "looking for an install script failed", r, err)
	}
	script, link, err := resolveDotfiles(p.script, strings.Fields(r.Stdout), p.inline)
	if err != nil {
		res.Failed, res.ExitCode = "script", 1
		return res, "dotfiles: " + err.Error() + "; the container is kept"
	}
	if script != "" {
		res.Script = script
		r, err = run(ctx, sh(dotfilesRun, script))
		res.Output = outputTail(r)
		if failedStep(res, r, err) {
			return dotfilesFailed(res, "script", "the install script "+script+" failed", r, err)
		}
		return res, ""
	}
	if len(link) == 0 {
		return res, "dotfiles: the repository has no install script (" + strings.Join(dotfilesScripts, ", ") + ") and none of the common dotfiles; nothing was applied"
	}
	if r, err = run(ctx, sh(dotfilesLink, link...)); failedStep(res, r, err) {
		return dotfilesFailed(res, "link", "linking the dotfiles failed", r, err)
	}
	res.Linked = link
	return res, ""
}

// resolveDotfiles picks what to apply from the files the repository has
// (present): the explicit script, else the first of dotfilesScripts, else
// the common dotfiles to link — except those written inline, which win.
func resolveDotfiles(explicit string, present []string, inline []backend.ContainerFile) (string, []string, error) {
	has := map[string]bool{}
	for _, f := range present {
		has[f] = true
	}
	if explicit != "" {
		if !has[explicit] {
			return "", nil, fmt.Errorf("the script %q is not a file in the repository: fix dotfiles.script, or leave it out to find one", explicit)
		}
		return explicit, nil, nil
	}
	for _, s := range dotfilesScripts {
		if has[s] {
			return s, nil, nil
		}
	}
	written := map[string]bool{}
	for _, f := range inline {
		written[f.Path] = true
	}
	var link []string
	for _, f := range commonDotfiles {
		if has[f] && !written[f] {
			link = append(link, f)
		}
	}
	return "", link, nil
}

// failedStep records an exec's outcome and says whether the step failed.
func failedStep(res *DotfilesResult, r backend.ExecResult, err error) bool {
	res.ExitCode, res.TimedOut = r.ExitCode, r.TimedOut
	return err != nil || r.ExitCode != 0 || r.TimedOut
}

func dotfilesFailed(res *DotfilesResult, step, what string, r backend.ExecResult, err error) (*DotfilesResult, string) {
	res.Failed = step
	res.Output = outputTail(r)
	if err != nil {
		if res.ExitCode == 0 {
			res.ExitCode = -1
		}
		res.Output = strings.TrimSpace(res.Output + "\n" + err.Error())
	}
	why := fmt.Sprintf("exit %d", res.ExitCode)
	if res.TimedOut {
		why = fmt.Sprintf("timed out after %s", dotfilesTimeout)
	}
	if line := errorLine(res.Output); line != "" {
		why += ": " + line
	}
	return res, fmt.Sprintf("dotfiles: %s (%s); the container is kept: dotfiles.output has the output, fix it with exec", what, why)
}

// outputTail joins a step's output streams and keeps their end.
func outputTail(r backend.ExecResult) string {
	out := strings.TrimSpace(strings.TrimSpace(r.Stdout) + "\n" + strings.TrimSpace(r.Stderr))
	if len(out) > dotfilesOutputTail {
		out = "…" + out[len(out)-dotfilesOutputTail:]
	}
	return out
}

// requestDotfiles is a create's dotfiles: the request's over the
// configured ones. The policies and the create both use it, so they
// judge and apply the same repository. A purpose whose profile turns
// dotfiles off ("clean") leaves the configured repository out; an
// explicit request still applies. A restore does not take them either:
// the snapshot already has what the container had.
func (s *Session) requestDotfiles(req ContainerRequest) *DotfilesRequest {
	return effectiveDotfiles(req.Dotfiles, s.k.cfg.Dotfiles, req.ProfileDotfiles)
}

// dotfilesPlanFor checks the create's dotfiles against what the
// container will see of the host.
func (s *Session) dotfilesPlanFor(req ContainerRequest, mountCwd bool) (*dotfilesPlan, error) {
	return planDotfiles(s.requestDotfiles(req), dotfilesWhere{workspace: mountCwd, mounts: req.Mounts})
}

// provisionDotfiles applies a plan to the created container; createContainer
// calls it after the forwarded credentials are in (so a private repository
// clones) and before the setup commands (so they see the user's
// configuration). Nothing to apply is a nil result.
func (s *Session) provisionDotfiles(ctx context.Context, c backend.Containers, ref backend.ContainerRef, p *dotfilesPlan) (*DotfilesResult, string) {
	if p == nil {
		return nil, ""
	}
	res, note := applyDotfiles(ctx, func(ctx context.Context, r backend.ExecRequest) (backend.ExecResult, error) {
		return c.ExecContainer(ctx, ref, r)
	}, p)
	return res, note
}

// errorLine picks the line of a step's output that says what went wrong:
// git's first "fatal:" or "error:" line (the cause; later ones are
// consequences), else the last line.
func errorLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			return l
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}
