//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// PodmanAgent is set by a test package (before its tests run) to mount a
// wai-agent built from this repository into the podman runs' containers,
// as bin/wai does with the one it embeds; a plain test binary embeds
// none, so without it commands take Podman execs and background jobs are
// unavailable.
var PodmanAgent bool

var agentBuild struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// agentPath builds cmd/wai-agent once per test binary (static, as `make
// build` does) and returns where.
func agentPath(t *testing.T) string {
	t.Helper()
	agentBuild.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			agentBuild.err = err
			return
		}
		dir, err := os.MkdirTemp("", "wai-tooltest-agent-")
		if err != nil {
			agentBuild.err = err
			return
		}
		agentBuild.path = filepath.Join(dir, "wai-agent")
		cmd := exec.Command("go", "build", "-trimpath", "-o", agentBuild.path, "./cmd/wai-agent")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		agentBuild.out, agentBuild.err = cmd.CombinedOutput()
	})
	if agentBuild.err != nil {
		t.Fatalf("building wai-agent: %v\n%s", agentBuild.err, agentBuild.out)
	}
	return agentBuild.path
}
