// Package plugbuild builds Go plugins (main packages on the pdk) into
// WebAssembly with the standard toolchain: GOOS=wasip1 GOARCH=wasm,
// -buildmode=c-shared, so the module is a reactor whose exports the host
// calls.
//
// Tests build the plugins they need rather than the repository checking
// built .wasm in: a checked-in binary goes stale silently, and reviewing a
// binary diff is impossible. A cold build costs seconds, so builds are
// cached on disk, keyed by a hash of everything that goes into one: the Go
// version, the sources of every local package the plugin depends on, and
// the versions of the modules it uses. Many tests and many test processes
// then share one build.
package plugbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/internal/atomicfile"
)

// Build builds the plugin in pkgDir (relative to the module root, or
// absolute) and returns the module's bytes. It fails t on any error.
//
// Under the race detector it also compiles the module into
// CompilationCacheDir with a helper built without it, once per module:
// wazero's compiler, instrumented, takes over fifteen seconds for a Go
// plugin, and every test binary would pay that on a fresh machine.
func Build(t testing.TB, pkgDir string) []byte {
	t.Helper()
	path, err := Path(context.Background(), pkgDir)
	if err != nil {
		t.Fatalf("plugbuild: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("plugbuild: %v", err)
	}
	if raceEnabled {
		if err := warm(context.Background(), CompilationCacheDir(t), path, b); err != nil {
			// Not fatal: the runtime compiles the module itself, slowly.
			t.Logf("plugbuild: warming the compilation cache: %v", err)
		}
	}
	return b
}

var warmMu sync.Mutex

// warm compiles the module at path into the wazero cache dir, unless a
// marker says it has been already.
func warm(ctx context.Context, dir, path string, module []byte) error {
	warmMu.Lock()
	defer warmMu.Unlock()
	sum := sha256.Sum256(module)
	// "both-": warmed for both kinds of test binary (package warm).
	marker := filepath.Join(dir, "both-"+hex.EncodeToString(sum[:16]))
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	// Both warming binaries: wazero keeps apart what test binaries with
	// and without its version in their build information compile (see
	// package warm), and cmd/wai's tests are of the second kind.
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "./internal/plugbuild/warm/...")
	cmd.Dir = root
	cmd.Env = append(hostEnv(), "WAI_WARM_CACHE="+dir, "WAI_WARM_MODULES="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return os.WriteFile(marker, nil, 0o644)
}

// hostEnv is the caller's environment without flags (like -race) that
// would slow the helper down.
func hostEnv() []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "GOFLAGS" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOFLAGS=-mod=readonly")
}

// BuildFile builds the plugin in pkgDir and writes it to outPath.
func BuildFile(ctx context.Context, pkgDir, outPath string) error {
	path, err := Path(ctx, pkgDir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(outPath, b, 0o600)
}

var (
	mu       sync.Mutex
	inflight = map[string]*build{} // by cache key, for this process
)

type build struct {
	done chan struct{}
	path string
	err  error
}

// Path builds (or finds in the cache) the plugin in pkgDir and returns the
// path of the cached .wasm. The file must not be modified.
func Path(ctx context.Context, pkgDir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := pkgDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, pkgDir)
	}
	key, err := cacheKey(ctx, dir)
	if err != nil {
		return "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(cache, key+".wasm")

	mu.Lock()
	b, ok := inflight[key]
	if !ok {
		b = &build{done: make(chan struct{})}
		inflight[key] = b
	}
	mu.Unlock()
	if ok {
		select {
		case <-b.done:
			return b.path, b.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	b.path, b.err = out, nil
	if _, err := os.Stat(out); err != nil {
		b.err = compile(ctx, dir, out)
	}
	if b.err != nil {
		mu.Lock()
		delete(inflight, key) // a later call may retry
		mu.Unlock()
	}
	close(b.done)
	return b.path, b.err
}

func compile(ctx context.Context, dir, out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".build-*.wasm")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-trimpath", "-o", tmp.Name(), ".")
	cmd.Dir = dir
	cmd.Env = wasmEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s for wasip1: %v\n%s", dir, err, stderr.String())
	}
	// Rename is atomic: a concurrent process building the same key either
	// sees no file or a whole one.
	return os.Rename(tmp.Name(), out)
}

// wasmEnv is the environment of the go command: the caller's, for wasip1,
// without flags (like -race) that make no sense there.
func wasmEnv() []string {
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "GOOS" || k == "GOARCH" || k == "GOFLAGS" || k == "CGO_ENABLED" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
}

type listedPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	GoFiles    []string
	SFiles     []string
	EmbedFiles []string
	Module     *struct {
		Path    string
		Version string
		Main    bool
		GoMod   string
	}
	Error *struct{ Err string }
}

// cacheKey hashes the Go version and everything the build of dir reads.
func cacheKey(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json=ImportPath,Dir,Standard,GoFiles,SFiles,EmbedFiles,Module,Error", ".")
	cmd.Dir = dir
	cmd.Env = wasmEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go list %s: %v\n%s", dir, err, stderr.String())
	}
	h := sha256.New()
	ver, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %v", err)
	}
	fmt.Fprintf(h, "plugbuild v1\n%s\n", bytes.TrimSpace(ver))
	dec := json.NewDecoder(&stdout)
	var lines []string
	var main *listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("go list %s: %v", dir, err)
		}
		if p.Error != nil {
			return "", fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		if p.Standard {
			continue
		}
		main = &p
		if p.Module != nil && !p.Module.Main {
			// A module dependency is identified by its version.
			lines = append(lines, "mod "+p.Module.Path+"@"+p.Module.Version)
			continue
		}
		files := append(append(append([]string{}, p.GoFiles...), p.SFiles...), p.EmbedFiles...)
		sort.Strings(files)
		for _, f := range files {
			sum, err := fileSum(filepath.Join(p.Dir, f))
			if err != nil {
				return "", err
			}
			lines = append(lines, "file "+p.ImportPath+"/"+f+" "+sum)
		}
	}
	if main == nil {
		return "", fmt.Errorf("go list %s: no package", dir)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(h, l)
	}
	name := filepath.Base(main.ImportPath)
	return name + "-" + hex.EncodeToString(h.Sum(nil))[:24], nil
}

func fileSum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// ModuleRoot is the directory of go.mod, found upwards from the working
// directory (a test's is its package directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// cacheDir is $WAI_PLUGBUILD_CACHE, else <user cache>/wai/plugbuild.
func cacheDir() (string, error) {
	dir := os.Getenv("WAI_PLUGBUILD_CACHE")
	if dir == "" {
		dir = filepath.Join(userCache(), "plugbuild")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

func userCache() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "wai")
}

// StateDir is a kernel state directory of t's own (its sessions and
// workspaces meet no other test's) whose Wasm compilation cache, the
// "wasm" folder the kernel keeps there, is the shared one of
// CompilationCacheDir: a kernel on an empty state directory compiles
// every plugin again, some 20 s under the race detector.
func StateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(CompilationCacheDir(t), filepath.Join(dir, "wasm")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// CompilationCacheDir returns a directory for wazero's compilation cache
// that tests share across packages and runs ($WAI_WASM_CACHE, else <user
// cache>/wai/wazero-test). Compiling a Go plugin takes wazero about a
// second, and over fifteen under the race detector; with the cache, each
// module is compiled once per machine. Tests that are about the cache
// itself should use a directory of their own.
func CompilationCacheDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("WAI_WASM_CACHE")
	if dir == "" {
		dir = filepath.Join(userCache(), "wazero-test")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("plugbuild: %v", err)
	}
	return dir
}
