//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var agentBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// agentBinary builds cmd/wai-agent as bin/wai carries it (static, no cgo)
// once per test process and returns its path. A build that fails skips
// the test, except on CI, where it fails it.
func agentBinary(t testing.TB) string {
	t.Helper()
	agentBuild.once.Do(func() {
		agentBuild.dir, agentBuild.err = os.MkdirTemp("", "wai-agent-build-")
		if agentBuild.err != nil {
			return
		}
		out := filepath.Join(agentBuild.dir, "wai-agent")
		cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/wai-agent")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
		if agentBuild.out, agentBuild.err = cmd.CombinedOutput(); agentBuild.err == nil {
			agentBuild.path = out
		}
	})
	if agentBuild.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("building cmd/wai-agent: %v\n%s", agentBuild.err, agentBuild.out)
		}
		t.Skipf("cannot build cmd/wai-agent: %v\n%s", agentBuild.err, agentBuild.out)
	}
	return agentBuild.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if agentBuild.dir != "" {
		os.RemoveAll(agentBuild.dir)
	}
	os.Exit(code)
}
