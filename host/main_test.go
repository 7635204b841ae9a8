package host

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedStateDir is the state directory of every kernel the tests build
// with Wasm plugins, so the compilation cache in it is shared: compiling a
// Go-built module takes seconds (tens under -race), loading it from the
// cache a fraction of that. It outlives the test process, like the build
// cache, because the cache is keyed by module content and wazero version;
// the sessions the tests open in it are removed when they close.
var SharedStateDir string

// TestTempRoot holds what the examples (package host_test) make; TestMain
// removes it. Examples have no testing.T to clean up after them.
var TestTempRoot string

func TestMain(m *testing.M) {
	dir := ""
	if base, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(base, "wai-test", "host-state")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			dir = ""
		}
	}
	temp := dir == ""
	if temp {
		var err error
		if dir, err = os.MkdirTemp("", "wai-host-test-"); err != nil {
			panic(err)
		}
	}
	SharedStateDir = dir
	var err error
	if TestTempRoot, err = os.MkdirTemp("", "wai-host-test-tmp-"); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(TestTempRoot)
	if temp {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}
