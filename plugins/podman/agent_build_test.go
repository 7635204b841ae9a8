//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var agentBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// agentBinary builds cmd/wai-agent as bin/wai carries it (static, no cgo)
// once per test process and returns its path: one file per source tree
// under the temporary directory, replaced atomically by each build (Go's
// build cache makes a rebuild cheap), so concurrent test processes of one
// tree share it and nothing is left per process. A build that fails skips
// the test, except on CI, where it fails it.
func agentBinary(t testing.TB) string {
	t.Helper()
	agentBuild.once.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			agentBuild.err = err
			return
		}
		sum := sha256.Sum256([]byte(root))
		dir := filepath.Join(os.TempDir(), "wai-agent-test-"+hex.EncodeToString(sum[:6]))
		if agentBuild.err = os.MkdirAll(dir, 0o755); agentBuild.err != nil {
			return
		}
		tmp, err := os.CreateTemp(dir, ".build-*")
		if err != nil {
			agentBuild.err = err
			return
		}
		tmp.Close()
		cmd := exec.Command("go", "build", "-trimpath", "-o", tmp.Name(), "./cmd/wai-agent")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=-mod=readonly")
		if agentBuild.out, agentBuild.err = cmd.CombinedOutput(); agentBuild.err != nil {
			os.Remove(tmp.Name())
			return
		}
		agentBuild.path = filepath.Join(dir, "wai-agent")
		if agentBuild.err = os.Rename(tmp.Name(), agentBuild.path); agentBuild.err != nil {
			os.Remove(tmp.Name())
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
