//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// needImageBuild skips (fails on CI) when this process cannot build images.
func needImageBuild(t *testing.T) {
	t.Helper()
	needPodman(t)
	if err := canBuild(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("image builds are required on CI (scripts/setup-podman.sh installs mmdebstrap): %v", err)
		}
		t.Skipf("cannot build images here: %v", err)
	}
}

// events collects build progress.
type events struct {
	mu  sync.Mutex
	evs []ProgressEvent
}

func (e *events) add(ev ProgressEvent) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

func (e *events) phases() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := map[string]int{}
	for _, ev := range e.evs {
		m[ev.Phase]++
	}
	return m
}

// TestPurposeImageBuildEndToEnd builds the python purpose image from its
// recipe (only when the image of the current recipe is missing: re-runs
// are a cache hit), runs pytest and jq in a hardened session container on
// it, and checks a second build is a cache hit that rebuilds nothing.
//
// Not parallel: see TestOnDemandFindsSetupImages.
func TestPurposeImageBuildEndToEnd(t *testing.T) {
	needImageBuild(t)
	// A first build takes minutes: stop it with a clear error before the
	// test binary's own timeout panics.
	deadline := time.Now().Add(30 * time.Minute)
	if d, ok := t.Deadline(); ok && d.Add(-30*time.Second).Before(deadline) {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(bg, deadline)
	defer cancel()
	cfg, err := ParseConfig(nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var first events
	ref, err := BuildPurposeImage(ctx, cfg, "python", BuildOptions{Progress: first.add})
	if err != nil {
		t.Fatalf("BuildPurposeImage(python): %v", err)
	}
	r, _ := PurposeRecipe("python")
	if ref.Name != r.ImageName() || !ref.Exists || !ref.Current || ref.ID == "" {
		t.Fatalf("ref = %+v, want an existing current %s with an ID", ref, r.ImageName())
	}
	if ph := first.phases(); ref.Built && (ph[PhaseBootstrap] < 2 || ph[PhaseImport] < 1 || ph[PhaseDone] != 1) {
		t.Errorf("a build reported phases %v; want bootstrap steps, import and done", ph)
	}

	var second events
	again, err := BuildPurposeImage(ctx, cfg, "python", BuildOptions{Progress: second.add})
	if err != nil {
		t.Fatalf("second BuildPurposeImage: %v", err)
	}
	if again.Built || again.ID != ref.ID {
		t.Errorf("second build = %+v; want a cache hit on image %s", again, ref.ID)
	}
	if ph := second.phases(); len(ph) != 1 || ph[PhaseCached] != 1 {
		t.Errorf("cache hit reported %v; want one %q event", ph, PhaseCached)
	}
	got, err := PurposeImage(ctx, cfg, "python")
	if err != nil || !got.Exists || got.ID != ref.ID {
		t.Errorf("PurposeImage(python) = %+v, %v; want the built image", got, err)
	}
	assertListed(ctx, t, cfg, ref)

	b := newTestBackend(t, backend.Limits{}, map[string]any{"image": ref.Name})
	w := openTest(t, b, false)
	res := sh(t, w, "python3 -m pytest --version && jq --version && git --version && curl --version | head -n1 && tree --version && command -v vi less make")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout+res.Stderr, "pytest") || !strings.Contains(res.Stdout, "jq-") {
		t.Fatalf("tools in %s: exit %d\nstdout: %s\nstderr: %s", ref.Name, res.ExitCode, res.Stdout, res.Stderr)
	}
}

func assertListed(ctx context.Context, t *testing.T, cfg Config, ref ImageRef) {
	t.Helper()
	all, err := PurposeImages(ctx, cfg)
	if err != nil {
		t.Fatalf("PurposeImages: %v", err)
	}
	purposes := map[string]bool{}
	found := false
	for _, l := range all {
		purposes[l.Purpose] = true
		found = found || l.Name == ref.Name && l.Current && l.Exists && l.Recipe == ref.Recipe
	}
	if !found {
		t.Errorf("PurposeImages lacks current %s: %+v", ref.Name, all)
	}
	for _, p := range Purposes() {
		if !purposes[p] {
			t.Errorf("PurposeImages has no entry for purpose %s", p)
		}
	}
}

// TestBuildPurposeImageUnknownPurpose: a clear ErrInvalid listing the
// purposes, before anything is contacted or built.
func TestBuildPurposeImageUnknownPurpose(t *testing.T) {
	t.Parallel()
	cfg := Config{URL: "unix:///nonexistent/podman.sock"}
	for name, call := range map[string]func() error{
		"build":   func() error { _, err := BuildPurposeImage(bg, cfg, "cobol", BuildOptions{}); return err },
		"resolve": func() error { _, err := PurposeImage(bg, cfg, "cobol"); return err },
	} {
		err := call()
		if !errors.Is(err, backend.ErrInvalid) {
			t.Fatalf("%s: err = %v, want ErrInvalid", name, err)
		}
		for _, p := range []string{"cobol", "general", "go", "node", "python", "rust"} {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error %q does not mention %q", name, err, p)
			}
		}
	}
}

// TestRecipeHashMatchesScript: recipe.sh (what setup-podman.sh uses) and
// the Go code agree on every recipe's hash, packages and changes.
func TestRecipeHashMatchesScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, p := range Purposes() {
		r, err := PurposeRecipe(p)
		if err != nil {
			t.Fatal(err)
		}
		file := "../../scripts/images/wai-" + p + ".packages"
		for what, want := range map[string]string{"hash": r.Hash(), "packages": strings.Join(r.Packages, "\n"),
			"changes": strings.Join(r.Changes, "\n")} {
			out, err := exec.Command("bash", "../../scripts/images/recipe.sh", what, file).Output()
			if err != nil {
				t.Fatalf("recipe.sh %s %s: %v", what, file, err)
			}
			if got := strings.TrimSpace(string(out)); got != want {
				t.Errorf("%s of %s: recipe.sh says %q, Go says %q", what, p, got, want)
			}
		}
	}
}

// TestCanBuildAdvice: without root or mmdebstrap the error says what to
// install and how to run, with the kind a caller can act on. Not parallel:
// it swaps geteuid and lookPath, which every build (TestBuildCancelCleansUp)
// reads; sequential, it is done before the parallel tests are released.
func TestCanBuildAdvice(t *testing.T) {
	savedUID, savedLook := geteuid, lookPath
	t.Cleanup(func() { geteuid, lookPath = savedUID, savedLook })

	geteuid = func() int { return 1000 }
	if err := canBuild(); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "needs root") ||
		!strings.Contains(err.Error(), "sudo wai image build") {
		t.Errorf("non-root: %v", err)
	}
	geteuid = func() int { return 0 }
	lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	if err := canBuild(); !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install mmdebstrap") {
		t.Errorf("no mmdebstrap: %v", err)
	}
	lookPath = func(string) (string, error) { return "/usr/bin/mmdebstrap", nil }
	if err := canBuild(); err != nil {
		t.Errorf("root with mmdebstrap: %v", err)
	}
}

// TestLockBuild: a second build of one image waits for the first, gives up
// when its context ends, and other images do not wait.
func TestLockBuild(t *testing.T) {
	t.Parallel()
	unlock, err := lockBuild(bg, "localhost/wai-test:lock")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if _, err := lockBuild(ctx, "localhost/wai-test:lock"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second lock while held: err = %v, want DeadlineExceeded", err)
	}
	other, err := lockBuild(bg, "localhost/wai-test:other")
	if err != nil {
		t.Fatalf("another image: %v", err)
	}
	other()
	unlock()
	again, err := lockBuild(bg, "localhost/wai-test:lock")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}

// TestBuildCancelCleansUp: cancelling a build while mmdebstrap installs
// into its chroot returns the context's error, leaves no mount and no
// build directory behind, and keeps the existing image.
func TestBuildCancelCleansUp(t *testing.T) {
	t.Parallel()
	needImageBuild(t)
	cfg, err := ParseConfig(nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	before, err := PurposeImage(bg, cfg, "python")
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("/var/tmp", "wai-test-cancel-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := removeBuildDir(tmp); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(bg, 20*time.Minute)
	defer cancel()
	_, err = BuildPurposeImage(ctx, cfg, "python", BuildOptions{Force: true, TempDir: tmp, Progress: func(ev ProgressEvent) {
		if strings.Contains(ev.Message, "installing essential packages") {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: err = %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("a cancelled build left %d entries in %s (first: %s)", len(left), tmp, left[0].Name())
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), tmp) {
		t.Errorf("a cancelled build left mounts under %s", tmp)
	}
	after, err := PurposeImage(bg, cfg, "python")
	if err != nil || after.ID != before.ID || after.Exists != before.Exists {
		t.Errorf("image after a cancelled build = %+v, %v; want %+v", after, err, before)
	}
}
