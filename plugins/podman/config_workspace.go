package podman

import (
	"net/url"
	"path/filepath"
)

// The two places a session's /workspace can live.
const (
	// workspaceBind: a directory under workspace_dir on wai's machine,
	// bind-mounted into the container; wai reads and writes it directly.
	workspaceBind = "bind"
	// workspaceVolume: a Podman named volume on the service's machine;
	// wai reaches its files only through the container (wai-agent for the
	// file tools, the archive API for copies), so nothing needs a path
	// shared between the two machines.
	workspaceVolume = "volume"
)

// volumePrefix marks a volume workspace where a workspace directory would
// be named (the wai.workspace label, the state file, wai ps): it can never
// be an absolute path, so nothing takes it for a directory to remove.
const volumePrefix = "volume:"

// resolveWorkspaceMode picks bind or volume. A service reached over the
// network defaults to volume: a bind mount names a path on the service's
// machine, which is wai's own directory only on shared storage. bind stays
// possible there when configured explicitly (wai preflight then checks
// that the path is shared); volume is possible on a local socket too.
func (c *Config) resolveWorkspaceMode() error {
	switch c.Workspace {
	case "":
		c.Workspace = workspaceBind
		if c.remoteService() {
			c.Workspace = workspaceVolume
		}
	case workspaceBind, workspaceVolume:
	default:
		return invalid("workspace %q: use \"bind\" (a directory on wai's machine) or \"volume\" (a Podman volume on the service's machine)", c.Workspace)
	}
	return nil
}

// remoteService reports whether the service is reached over the network
// (ssh://, tcp://) rather than a local socket.
func (c Config) remoteService() bool {
	u, err := url.Parse(c.URL)
	return err == nil && u.Scheme != "unix"
}

// volumeMode reports whether sessions' workspaces are named volumes.
func (c Config) volumeMode() bool { return c.Workspace == workspaceVolume }

// workspaceRef is how a session's workspace is named in labels and state
// files: its directory, or volume:<name> for a volume workspace.
func (p sessionPaths) workspaceRef() string {
	if p.volume != "" {
		return volumePrefix + p.volume
	}
	return p.dir
}

// resolveWorkspace parses workspace_size and places workspace_dir (under
// stateDir unless set).
func (c *Config) resolveWorkspace(stateDir string) error {
	var err error
	if c.workspaceBytes, err = parseBytes(c.WorkspaceSize); err != nil || c.workspaceBytes != 0 && c.workspaceBytes < minWorkspaceBytes {
		return invalid("workspace_size %q: give a size of at least 8m, like \"1g\", or \"0\" for no limit", c.WorkspaceSize)
	}
	if c.WorkspaceDir == "" {
		if stateDir == "" {
			return invalid("no workspace_dir and no state directory to put workspaces in")
		}
		c.WorkspaceDir = filepath.Join(stateDir, "podman")
	}
	if c.WorkspaceDir, err = filepath.Abs(c.WorkspaceDir); err != nil {
		return invalid("workspace_dir %q: %v", c.WorkspaceDir, err)
	}
	return c.checkWorkspaceDir()
}
