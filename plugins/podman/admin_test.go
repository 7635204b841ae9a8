//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

// deadOwner describes a process that has exited: what a crashed wai
// leaves in its state files.
func deadOwner(t *testing.T) *backend.Holder {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	h, _ := os.Hostname()
	return &backend.Holder{Host: h, PID: cmd.ProcessState.Pid(), Start: 1}
}

// crash makes w look abandoned by a process that died.
func crash(t *testing.T, w *Workspace) {
	t.Helper()
	s, _, err := readState(w.statePath)
	if err != nil {
		t.Fatal(err)
	}
	s.Owner = deadOwner(t)
	if err := writeState(w.statePath, s); err != nil {
		t.Fatal(err)
	}
}

func names(items []GCItem) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Kind+":"+filepath.Base(it.Name))
	}
	return strings.Join(out, " ")
}

// TestGCAndList: gc removes what a crash left (container, workspace, state
// file, bare directories) and leaves sessions in use and recently kept
// ones; --all takes the kept ones too. ps lists the containers.
func TestGCAndList(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	orphan := openTest(t, b, false)
	live := openTest(t, b, false)
	kept := openTest(t, b, true)
	for _, w := range []*Workspace{orphan, live, kept} {
		sh(t, w, "echo x >f")
	}
	if err := kept.Close(bg); err != nil {
		t.Fatal(err)
	}
	crash(t, orphan)
	bare := filepath.Join(b.cfg.WorkspaceDir, session("bare"))
	if err := os.Mkdir(bare, 0o755); err != nil {
		t.Fatal(err)
	}

	cs, err := List(bg, b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]Container{}
	for _, c := range cs {
		seen[c.Session] = c
	}
	for _, w := range []*Workspace{orphan, live, kept} {
		c, ok := seen[w.session]
		if !ok {
			t.Fatalf("List lacks session %s", w.session)
		}
		if c.Name != w.ContainerName() || c.State != "running" || c.Workspace != w.Dir() || c.Created.IsZero() ||
			c.LastUsed.IsZero() || c.Idle < 0 || c.Idle > time.Minute {
			t.Errorf("List entry %+v", c)
		}
	}
	if c := seen[live.session]; !c.OwnerAlive || c.Owner == "" {
		t.Errorf("live session listed without its owner: %+v", c)
	}
	if c := seen[orphan.session]; c.OwnerAlive {
		t.Errorf("crashed session listed with a live owner: %+v", c)
	}
	if c := seen[kept.session]; !c.Keep || c.Owner != "" {
		t.Errorf("kept session listed as %+v", c)
	}

	// Scoped to this test's configuration: GC itself sweeps every wai
	// session on the service, and other packages' tests (run in parallel
	// by go test) keep sessions there between their commands.
	rep, err := gcIn(bg, b.svc, b.cfg, gcScope{ours: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("gc errors: %v", rep.Errors)
	}
	removed := names(rep.Removed)
	for _, want := range []string{"container:" + orphan.ContainerName(), "workspace:" + orphan.session, "workspace:" + filepath.Base(bare)} {
		if !strings.Contains(removed, want) {
			t.Errorf("gc removed %q, want %s among them", removed, want)
		}
	}
	if strings.Contains(removed, live.session) || strings.Contains(removed, kept.session) {
		t.Errorf("gc removed a live or recently kept session: %q", removed)
	}
	if containerExists(t, b, orphan.ContainerName()) {
		t.Errorf("the orphan's container survived gc")
	}
	for _, p := range []string{orphan.Dir(), orphan.statePath, bare} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s survived gc: %v", p, err)
		}
	}
	if res := sh(t, live, "cat f"); res.Stdout != "x\n" {
		t.Errorf("the live session broke: %q %q", res.Stdout, res.Stderr)
	}

	rep, err = gcIn(bg, b.svc, b.cfg, gcScope{all: true, ours: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if removed := names(rep.Removed); !strings.Contains(removed, kept.ContainerName()) || strings.Contains(removed, live.session) {
		t.Errorf("gc --all removed %q, want the kept session and not the live one", removed)
	}
	if containerExists(t, b, kept.ContainerName()) || !containerExists(t, b, live.ContainerName()) {
		t.Errorf("after gc --all: kept container exists %v, live one %v",
			containerExists(t, b, kept.ContainerName()), containerExists(t, b, live.ContainerName()))
	}
}

// TestPreflight: on a working setup every check passes (disk space may
// warn); with no service the reachability check fails with a fix.
func TestPreflight(t *testing.T) {
	t.Parallel()
	needPodman(t)
	cfg := parsedTestConfig(t, nil)
	checks := Preflight(bg, cfg)
	var last Check
	for _, c := range checks {
		t.Logf("%-28s %-4s %s", c.Name, c.Status, c.Detail)
		if c.Status == CheckFail || c.Status == CheckWarn && !strings.HasPrefix(c.Name, "disk space") {
			t.Errorf("check %s: %s: %s (fix: %s)", c.Name, c.Status, c.Detail, c.Fix)
		}
		last = c
	}
	if last.Name != "hardened container runs" || last.Status != CheckOK {
		t.Errorf("the last check is %+v, want the hardened container passing", last)
	}
	cfg.URL = "unix://" + filepath.Join(t.TempDir(), "none.sock")
	checks = Preflight(bg, cfg)
	var bad *Check
	for i := range checks {
		if checks[i].Status == CheckFail {
			bad = &checks[i]
			break
		}
	}
	if bad == nil || bad.Name != "service reachable" || !strings.Contains(bad.Fix, "setup-podman.sh") {
		t.Errorf("preflight with no service: %+v, want service reachable failing with a fix", checks)
	}
}

// TestSessionAdmin: the optional interfaces wai ps, rm and gc use. A
// session is listed with its holder and size, and still listed once its
// idle container is gone (its files are kept); rm refuses a held session
// and removes a released one whole; gc takes only what Match accepts.
func TestSessionAdmin(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, nil)
	held := openTest(t, b, false)
	kept := openTest(t, b, true)
	orphan := openTest(t, b, false)
	for _, w := range []*Workspace{held, kept, orphan} {
		sh(t, w, "head -c 20000 /dev/zero >f")
	}
	if err := kept.Close(bg); err != nil {
		t.Fatal(err)
	}
	if err := b.remove(bg, kept.ContainerName()); err != nil { // as idle_timeout does
		t.Fatal(err)
	}
	seen := backendtest.Sessions(t, b)
	if s := seen[held.session]; s.Holder == "" || s.Container != held.ContainerName() || s.State != "running" || s.Size < 20000 || s.Workspace != held.Dir() {
		t.Errorf("held session listed as %+v", s)
	}
	if s, ok := seen[kept.session]; !ok || s.Holder != "" || !s.Keep || s.Container != "" || s.Size < 20000 || s.Created.IsZero() {
		t.Errorf("kept session without a container listed as %+v (found %v)", s, ok)
	}

	_, err := b.RemoveSession(bg, held.session)
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "in use by") {
		t.Errorf("rm of a held session: %v, want ErrPermission naming the holder", err)
	}
	if res := sh(t, held, "wc -c <f"); strings.TrimSpace(res.Stdout) != "20000" {
		t.Errorf("the held session broke after a refused rm: %+v", res)
	}
	if _, err := b.RemoveSession(bg, kept.session); err != nil {
		t.Fatalf("rm of a kept session: %v", err)
	}
	for _, p := range []string{kept.Dir(), kept.statePath} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s survived rm: %v", p, err)
		}
	}
	if _, err := b.RemoveSession(bg, kept.session); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("rm of a removed session: %v, want ErrNotFound", err)
	}

	crash(t, orphan)
	rep, err := b.CollectGarbage(bg, backend.GCOptions{Match: func(s string) bool { return s != orphan.session }})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(err, rep.Errors)
	}
	for _, it := range rep.Removed {
		if it.Session == orphan.session || it.Session == held.session {
			t.Errorf("gc removed %+v, which Match (or its holder) excludes", it)
		}
	}
	rep, err = b.CollectGarbage(bg, backend.GCOptions{})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(err, rep.Errors)
	}
	if !containerExists(t, b, held.ContainerName()) || containerExists(t, b, orphan.ContainerName()) {
		t.Errorf("after gc: held container exists %v (want true), orphan's %v (want false)",
			containerExists(t, b, held.ContainerName()), containerExists(t, b, orphan.ContainerName()))
	}
}
