package host

import (
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// DotfilesConfig is [dotfiles]: the user's dotfiles, applied to every
// container a create makes unless the request says dotfiles.skip (or its
// purpose profile turns dotfiles off). Empty Repo applies none.
type DotfilesConfig struct {
	// Repo is a git URL (https, ssh, git, file) or a path in the session
	// workspace; it is cloned inside the container, after credential
	// forwarding, so a private repository works with forward_gh or
	// forward_ssh.
	Repo string
	// Branch to clone; "" is the repository's default.
	Branch string
	// Script is the install script, relative to the repository; "" finds
	// one (docs/containers.md "Dotfiles").
	Script string
	// Target is where the repository is cloned; "" is ~/.dotfiles.
	Target string
}

// DotfilesRequest is a create's dotfiles parameter. Fields left empty take
// [dotfiles] from the configuration when Repo is empty.
type DotfilesRequest struct {
	Repo   string `json:"repo,omitempty"`
	Branch string `json:"branch,omitempty"`
	Script string `json:"script,omitempty"`
	Target string `json:"target,omitempty"`
	// Inline files, by path relative to the home directory: written
	// before the repository is cloned.
	Inline map[string]string `json:"inline,omitempty"`
	Skip   bool              `json:"skip,omitempty"`
}

// DotfilesResult is what dotfiles provisioning did. A failure is reported
// here (Failed, ExitCode, Output) and in the response's notes; it never
// fails the create.
type DotfilesResult struct {
	// Source is the repository as given, any password or token in it
	// masked; "inline" for inline files alone.
	Source string `json:"source,omitempty"`
	Branch string `json:"branch,omitempty"`
	Target string `json:"target,omitempty"`
	// Script is what ran: a path in the repository, "Makefile" (make), or
	// "" when the common dotfiles were linked instead (Linked).
	Script   string   `json:"script,omitempty"`
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	Output   string   `json:"output,omitempty"` // the tail of the failing or running step's output
	Linked   []string `json:"linked,omitempty"`
	Inline   []string `json:"inline,omitempty"`
	// Skipped says why nothing was applied.
	Skipped string `json:"skipped,omitempty"`
	// Failed names the step that failed: "clone", "script" or "link".
	Failed string `json:"failed,omitempty"`
}

// Bounds of dotfiles: a dotfiles repository and its inline files are
// configuration, small; anything bigger is a mistake or an abuse.
const (
	maxDotfilesInlineFiles = 64
	maxDotfilesInlineBytes = 1 << 20
	maxDotfilesArg         = 2048
	defaultDotfilesTarget  = "~/.dotfiles"
	// containerWorkspace is where a create with mount_cwd mounts the
	// session workspace.
	containerWorkspace = "/workspace"
)

// dotfilesScripts are the install scripts looked for, in this order,
// when the request names none; Makefile runs make.
var dotfilesScripts = []string{"install.sh", "setup.sh", "bootstrap.sh", "script/setup", "Makefile"}

// commonDotfiles are linked into the home directory when the repository
// has no install script.
var commonDotfiles = []string{".bashrc", ".bash_profile", ".bash_aliases", ".zshrc", ".zprofile",
	".gitconfig", ".gitignore_global", ".vimrc", ".tmux.conf", ".inputrc", ".editorconfig"}

// dotfilesPlan is a validated dotfiles request: what the create writes
// (inline) and then clones and runs (repo).
type dotfilesPlan struct {
	repo    string // what git clones
	shown   string // repo with secrets masked, for results and policies
	branch  string
	script  string
	target  string // home-relative unless absolute
	shownTo string // target as given
	inline  []backend.ContainerFile
	skipped string
}

// dotfilesWhere is what the container sees of the host, for a repository
// given as a path.
type dotfilesWhere struct {
	workspace bool // the session workspace is mounted at /workspace
	mounts    []backend.ContainerMount
	// unknown: the mounts are not known yet (the configuration is
	// checked before any create), so any absolute path may be visible.
	unknown bool
}

// effectiveDotfiles merges a request with the configuration: nil when
// neither asks for dotfiles. useConfig is false when the create's purpose
// turns the configured dotfiles off; an explicit request still applies.
func effectiveDotfiles(req *DotfilesRequest, cfg DotfilesConfig, useConfig bool) *DotfilesRequest {
	if req == nil && (!useConfig || cfg.Repo == "") {
		return nil
	}
	out := DotfilesRequest{}
	if req != nil {
		out = *req
	}
	if out.Repo == "" && useConfig && cfg.Repo != "" {
		out.Repo = cfg.Repo
		out.Branch = firstNonEmpty(out.Branch, cfg.Branch)
		out.Script = firstNonEmpty(out.Script, cfg.Script)
		out.Target = firstNonEmpty(out.Target, cfg.Target)
	}
	return &out
}

// planDotfiles validates an effective request. A bad request is
// ErrInvalid before anything is created; nil is no dotfiles at all.
func planDotfiles(req *DotfilesRequest, where dotfilesWhere) (*dotfilesPlan, error) {
	if req == nil {
		return nil, nil
	}
	if req.Skip {
		return &dotfilesPlan{skipped: "dotfiles.skip was set"}, nil
	}
	if req.Repo == "" && len(req.Inline) == 0 {
		return &dotfilesPlan{skipped: "no dotfiles repository configured: give dotfiles.repo (or dotfiles.inline), or set repo in [dotfiles] of wai.toml"}, nil
	}
	p := &dotfilesPlan{branch: req.Branch, script: req.Script}
	var err error
	if p.inline, err = dotfilesInline(req.Inline); err != nil {
		return nil, err
	}
	if req.Repo == "" {
		return p, nil
	}
	if p.repo, err = dotfilesRepo(req.Repo, where); err != nil {
		return nil, err
	}
	p.shown = maskRepo(req.Repo)
	if err := dotfilesArg("branch", req.Branch); err != nil {
		return nil, err
	}
	if req.Script != "" {
		if p.script, err = relativeInside("script", req.Script); err != nil {
			return nil, err
		}
	}
	p.shownTo = firstNonEmpty(req.Target, defaultDotfilesTarget)
	if p.target, err = dotfilesTarget(p.shownTo); err != nil {
		return nil, err
	}
	return p, nil
}

func invalidDotfiles(format string, args ...any) error {
	return backend.Errorf(backend.ErrInvalid, "containers.create", "dotfiles", format, args...)
}

// dotfilesArg refuses what git could read as an option, and characters
// no name needs.
func dotfilesArg(what, v string) error {
	switch {
	case len(v) > maxDotfilesArg:
		return invalidDotfiles("dotfiles.%s is longer than %d bytes", what, maxDotfilesArg)
	case strings.HasPrefix(v, "-"):
		return invalidDotfiles("dotfiles.%s %q starts with '-': git would read it as an option", what, v)
	case strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f || r == ' ' }):
		return invalidDotfiles("dotfiles.%s %q holds spaces or control characters", what, v)
	}
	return nil
}

// dotfilesRepo returns what git clones: a URL of a safe transport as is,
// a path the container sees as a file:// URL. Git's remote helpers
// ("ext::cmd" runs a command) and unknown schemes are refused here, and
// the clone allows only the known protocols besides.
func dotfilesRepo(repo string, where dotfilesWhere) (string, error) {
	if err := dotfilesArg("repo", repo); err != nil {
		return "", err
	}
	if scheme, rest, ok := strings.Cut(repo, "://"); ok && !strings.Contains(scheme, "/") {
		switch strings.ToLower(scheme) {
		case "https", "http", "ssh", "git":
			if rest != "" {
				return repo, nil
			}
		case "file":
			return repoPath(strings.TrimPrefix(rest, "localhost"), repo, where)
		}
		return "", invalidDotfiles("dotfiles.repo %q: use an https, ssh, git or file URL, or a path in the session workspace", repo)
	}
	if i := strings.Index(repo, "::"); i >= 0 && !strings.Contains(repo[:i], "/") {
		return "", invalidDotfiles("dotfiles.repo %q: git remote helpers (%s::) are refused; use an https, ssh, git or file URL", repo, repo[:i])
	}
	if strings.HasPrefix(repo, "/") {
		return repoPath(repo, repo, where)
	}
	// user@host:path, git's scp-like ssh form.
	if i := strings.Index(repo, ":"); i > 0 && !strings.Contains(repo[:i], "/") {
		return repo, nil
	}
	if !where.workspace {
		return "", invalidDotfiles("dotfiles.repo %q is a workspace path, and this create does not mount the workspace (mount_cwd = false): give a URL", repo)
	}
	rel, err := relativeInside("repo", repo)
	if err != nil {
		return "", err
	}
	return "file://" + containerWorkspace + "/" + rel, nil
}

// repoPath maps an absolute path to the file:// URL of the path the
// container sees: under /workspace, under a mount's container path, or
// under a mount's host path (translated).
func repoPath(p, given string, where dotfilesWhere) (string, error) {
	if c := path.Clean(p); !path.IsAbs(p) || c != p && c+"/" != p {
		return "", invalidDotfiles("dotfiles.repo %q: give a clean absolute path", given)
	}
	p = path.Clean(p)
	if where.unknown {
		return "file://" + p, nil
	}
	under := func(root string) (string, bool) {
		root = path.Clean(root)
		if p == root || strings.HasPrefix(p, root+"/") {
			return strings.TrimPrefix(p, root), true
		}
		return "", false
	}
	if where.workspace {
		if _, ok := under(containerWorkspace); ok {
			return "file://" + p, nil
		}
	}
	for _, m := range where.mounts {
		if _, ok := under(m.ContainerPath); ok {
			return "file://" + p, nil
		}
		if rest, ok := under(m.HostPath); ok {
			return "file://" + path.Join(path.Clean(m.ContainerPath), rest), nil
		}
	}
	return "", invalidDotfiles("dotfiles.repo %q is not visible in the container: put the repository in the session workspace "+
		"(mounted at %s; give its workspace path), mount its directory (mounts), or give a URL", given, containerWorkspace)
}

// relativeInside checks a relative path that must stay inside its base
// (the repository, the home directory) and returns it clean.
func relativeInside(what, p string) (string, error) {
	if err := dotfilesArg(what, p); err != nil {
		return "", err
	}
	c := path.Clean(p)
	if p == "" || path.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", invalidDotfiles("dotfiles.%s %q: give a relative path that stays inside (no .., not absolute)", what, p)
	}
	return c, nil
}

// dotfilesTarget returns the clone target: "~/x" and "x" are relative to
// the home directory, "/x" is absolute.
func dotfilesTarget(t string) (string, error) {
	rel := strings.TrimPrefix(t, "~/")
	if strings.HasPrefix(rel, "~") {
		// Not the home directory itself (a clone needs an empty
		// directory), nor another user's (~user).
		return "", invalidDotfiles("dotfiles.target %q: give a directory under the home directory, such as ~/.dotfiles", t)
	}
	if strings.HasPrefix(rel, "/") && rel == t {
		if err := dotfilesArg("target", t); err != nil {
			return "", err
		}
		if c := path.Clean(t); c == t && c != "/" {
			return c, nil
		}
		return "", invalidDotfiles("dotfiles.target %q: give a clean path such as ~/.dotfiles", t)
	}
	return relativeInside("target", rel)
}

// dotfilesInline validates inline files: paths relative to the home
// directory ("~/" allowed), sizes capped.
func dotfilesInline(inline map[string]string) ([]backend.ContainerFile, error) {
	if len(inline) > maxDotfilesInlineFiles {
		return nil, invalidDotfiles("dotfiles.inline has %d files, at most %d", len(inline), maxDotfilesInlineFiles)
	}
	total := 0
	var out []backend.ContainerFile
	for p, content := range inline {
		rel, err := relativeInside("inline path", strings.TrimPrefix(p, "~/"))
		if err != nil {
			return nil, err
		}
		if total += len(content); total > maxDotfilesInlineBytes {
			return nil, invalidDotfiles("dotfiles.inline holds more than %d bytes: put big files in a repository", maxDotfilesInlineBytes)
		}
		out = append(out, backend.ContainerFile{Path: rel, Data: []byte(content), Mode: 0o644})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// maskRepo hides a password or token in a URL's user information: it is
// shown in results, logs and to policies.
func maskRepo(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil || u.Scheme == "" {
		return repo
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	} else if u.Scheme == "https" || u.Scheme == "http" {
		// A bare user of an https URL is a token (https://TOKEN@host/…).
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// checkDotfiles validates [dotfiles] as far as it can before a create: a
// path is judged against the create's mounts when it comes.
func checkDotfiles(c Config) []error {
	d := c.Dotfiles
	if d.Repo == "" {
		if d != (DotfilesConfig{}) {
			return []error{c.invalid("[dotfiles] sets branch, script or target without repo: set repo, or remove the table")}
		}
		return nil
	}
	if _, err := planDotfiles(effectiveDotfiles(nil, d, true), dotfilesWhere{workspace: true, unknown: true}); err != nil {
		return []error{c.invalid("[dotfiles]: %v", err)}
	}
	return nil
}
