package podman

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

var placeholder = regexp.MustCompile(`\{[^{}/]*\}`)

// checkWorkspaceDir checks the placeholders of an absolute workspace_dir:
// only {user} and {session}, each at most once and a whole path element,
// and {session} only as the last one, so that a session's directory is
// always named after the session (wai gc removes no directory that is
// not).
func (c *Config) checkWorkspaceDir() error {
	bad := func(format string, args ...any) error {
		return backend.Errorf(backend.ErrInvalid, "config", "", "backend podman: workspace_dir %q: "+format, append([]any{c.WorkspaceDir}, args...)...)
	}
	elems := strings.Split(c.WorkspaceDir, "/")
	seen := map[string]bool{}
	for i, e := range elems {
		for _, p := range placeholder.FindAllString(e, -1) {
			switch {
			case p != "{user}" && p != "{session}":
				return bad("unknown placeholder %s (only {user} and {session} exist)", p)
			case e != p:
				return bad("%s must be a whole path element, like /srv/wai/%s", p, p)
			case seen[p]:
				return bad("%s may appear only once", p)
			case p == "{session}" && i != len(elems)-1:
				return bad("{session} may only be the last path element")
			}
			seen[p] = true
		}
		if strings.ContainsAny(placeholder.ReplaceAllString(e, ""), "{}") {
			return bad("unbalanced brace in %q", e)
		}
	}
	return nil
}

// perUser reports whether each user gets workspaces of their own.
func (c Config) perUser() bool { return strings.Contains(c.WorkspaceDir, "{user}") }

// fixedDir is the part of workspace_dir before the first placeholder: the
// directory that holds files common to every session (the seccomp
// profile).
func (c Config) fixedDir() string {
	i := strings.IndexByte(c.WorkspaceDir, '{')
	if i < 0 {
		return c.WorkspaceDir
	}
	return filepath.Dir(c.WorkspaceDir[:i])
}

// sessionPaths are where a session's things live on the host.
type sessionPaths struct {
	dir   string // the workspace directory, mounted at /workspace
	state string // the state file
	image string // the file-system image of a size-limited workspace
	name  string // the container's name
	// volume is the named volume mounted at /workspace in volume mode
	// (then dir and image are never created); "" in bind mode.
	volume string
}

// pathsFor expands workspace_dir for a session. A session's state file and
// image sit in the "@state" directory next to its workspace directory. A
// user's session on a workspace_dir without {user} goes under
// "@users/<user>/" there, so that two users' sessions of one name never
// share files.
func (c Config) pathsFor(spec backend.WorkspaceSpec) (sessionPaths, error) {
	if c.perUser() && spec.User == "" {
		return sessionPaths{}, backend.Errorf(backend.ErrInvalid, "open", spec.Session,
			"workspace_dir %q of [backends.podman] is per user: open the session with a user name (--user NAME)", c.WorkspaceDir)
	}
	root := strings.TrimSuffix(c.WorkspaceDir, "/{session}")
	root = strings.ReplaceAll(root, "{user}", spec.User)
	if !c.perUser() && spec.User != "" && !ownKey(spec) {
		root = filepath.Join(root, usersDirName, spec.User)
	}
	parent := filepath.Join(root, stateDirName)
	p := sessionPaths{
		dir:   filepath.Join(root, spec.Session),
		state: filepath.Join(parent, spec.Session+".json"),
		image: filepath.Join(parent, spec.Session+imageSuffix),
		name:  containerName(c.NamePrefix, spec),
	}
	if c.volumeMode() {
		// The container's name: unique per user and session already, and
		// volumes have a namespace of their own.
		p.volume = p.name
	}
	return p, nil
}

// usersDirName holds users' sessions on a workspace_dir without {user};
// "@" keeps it apart from session names.
const usersDirName = "@users"

// containerName is <name_prefix>-<session>, or for a user's session
// <name_prefix>-u<length of user>-<user>-<session>: the length keeps
// user "a-b" with session "c" apart from user "a" with session "b-c", and
// two users' sessions of the same name apart from each other.
func containerName(prefix string, spec backend.WorkspaceSpec) string {
	if spec.User == "" || ownKey(spec) {
		return prefix + "-" + spec.Session
	}
	return prefix + "-u" + strconv.Itoa(len(spec.User)) + "-" + spec.User + "-" + spec.Session
}

// ownKey reports whether the session name is already its user's session
// key ("u.USER.NAME", what the kernel opens a user's session as): such a
// name cannot meet another user's, so it needs no "@users/<user>" level
// nor a user part in its container name, and wai ps, rm and gc find it by
// its name alone.
func ownKey(spec backend.WorkspaceSpec) bool {
	user, _, ok := backend.SplitSessionKey(spec.Session)
	return ok && user != "" && user == spec.User
}

// pathsOf is pathsFor for a session known by its key alone (wai ps, rm
// and gc): the user, if any, is the key's.
func (c Config) pathsOf(session string) (sessionPaths, error) {
	user, _, ok := backend.SplitSessionKey(session)
	if !ok {
		return sessionPaths{}, backend.Errorf(backend.ErrInvalid, "rm", session, "not a session name")
	}
	return c.pathsFor(backend.WorkspaceSpec{Session: session, User: user})
}

// sessionRoots are the directories that hold this configuration's session
// directories: workspace_dir itself, or each user's expansion of it.
func (c Config) sessionRoots() []string {
	root := strings.TrimSuffix(c.WorkspaceDir, "/{session}")
	if !c.perUser() {
		return []string{root}
	}
	m, _ := filepath.Glob(strings.ReplaceAll(root, "{user}", "*"))
	return m
}
