//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wai-dev/wai/host/backend"
)

// agentFiles is the agentbin folder: its README alone in a plain build,
// plus wai-agent when `make build` overlays it in (agentbin/README.md).
//
//go:embed agentbin
var agentFiles embed.FS

// agentMountPath is where the agent binary appears in every container:
// bind-mounted read-only, outside the workspace and every writable mount.
const agentMountPath = "/.wai-agent"

// agentDirName holds the agent binaries in workspace_dir, one file per
// content hash; like seccompDirName, a name no session can have.
const agentDirName = "@agent"

// provisionAgent writes the agent binary (agent_path's, else the embedded
// one) content-addressed under dir and returns its path: a container keeps
// the binary it was created with even when another wai version writes its
// own next to it. "" with a nil error means there is no agent binary: the
// backend then runs every command as a Podman exec.
func provisionAgent(cfg Config, dir string) (string, error) {
	if !cfg.agentEnabled() {
		return "", nil
	}
	var bin []byte
	var err error
	if cfg.AgentPath != "" {
		if bin, err = os.ReadFile(cfg.AgentPath); err != nil {
			return "", backend.Errorf(backend.ErrInvalid, "config", cfg.AgentPath,
				"backend podman: agent_path: %v (build one with `CGO_ENABLED=0 go build -o wai-agent ./cmd/wai-agent`, or drop agent_path to use the one bin/wai carries)", err)
		}
	} else if bin, err = fs.ReadFile(agentFiles, "agentbin/wai-agent"); err != nil {
		return "", nil
	}
	sum := sha256.Sum256(bin)
	path := filepath.Join(dir, agentDirName, "wai-agent-"+hex.EncodeToString(sum[:12]))
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(bin)) && fi.Mode().Perm() == 0o555 {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o711); err != nil {
		return "", backend.Errorf(backend.ErrUnavailable, "open", path, "cannot create the agent directory: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wai-agent-*")
	if err != nil {
		return "", backend.Errorf(backend.ErrUnavailable, "open", path, "cannot write the agent binary: %v", err)
	}
	_, err = tmp.Write(bin)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o555)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", backend.Errorf(backend.ErrUnavailable, "open", path, "cannot write the agent binary: %v", fmt.Errorf("%w", err))
	}
	return path, nil
}
