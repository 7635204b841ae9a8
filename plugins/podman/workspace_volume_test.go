//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"

	"github.com/wai-dev/wai/host/backend"
	sdktests "github.com/wai-dev/wai/sdk-tests"
)

// volumeExtra is the configuration of volume workspaces in these tests:
// no size limit, since CI's service keeps its volumes on ext4, which has
// no project quotas (TestVolumeWorkspaceSize covers the limit).
var volumeExtra = map[string]any{"workspace": "volume", "workspace_size": "0"}

func withVolume(extra map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range volumeExtra {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// conformanceVolume runs the suites on volume workspaces through the local
// socket; every workspace is checked to leave no directory on this side.
var conformanceVolume = func() sdktests.Backend {
	c := conformanceWith("podman", volumeExtra)
	open := c.Open
	c.Open = func(t *testing.T, l backend.Limits) backend.Workspace {
		ws := open(t, l)
		t.Cleanup(func() { noLocalWorkspace(t, ws.(*Workspace)) })
		return ws
	}
	c.Caps.HostDir = nil // there is none: planting goes through commands
	return c
}()

func TestShellConformanceVolume(t *testing.T) { runShellAlone(t, conformanceVolume) }
func TestFilesystemConformanceVolume(t *testing.T) {
	t.Parallel()
	sdktests.RunFilesystem(t, conformanceVolume)
}

// noLocalWorkspace fails when a volume workspace made anything under
// workspace_dir besides its state file: the point of a volume is that
// wai's machine holds none of the session's files.
func noLocalWorkspace(t testing.TB, w *Workspace) {
	t.Helper()
	root := filepath.Dir(w.dir)
	if _, err := os.Lstat(w.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a volume workspace made %s on wai's side (%v)", w.dir, err)
	}
	if _, err := os.Lstat(w.imagePath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a volume workspace made the image %s on wai's side (%v)", w.imagePath, err)
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "@") {
			t.Errorf("%s holds %s: a volume workspace leaves no session directory on wai's side", root, e.Name())
		}
	}
}

func volumeLabels(t testing.TB, b *Backend, name string) (map[string]string, bool) {
	t.Helper()
	cctx := onServiceCtx(t, b.svc)
	v, err := volumes.Inspect(cctx, name, nil)
	if volumeNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("inspecting volume %s: %v", name, err)
	}
	return v.Labels, true
}

// A volume workspace: a labelled volume made at Open, host_mounts copied
// in through the archive API (owned by the container user), nothing on
// wai's side, and the volume removed with the session.
func TestVolumeWorkspaceLifecycle(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a.txt": "alpha\n", "pkg/b.sh": "echo beta\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	b := newTestBackend(t, backend.Limits{}, withVolume(map[string]any{
		"allowed_host_roots": []string{src},
		"host_mounts":        []map[string]any{{"host_path": src, "mount_path": "src/in"}},
	}))
	w := openTest(t, b, false)
	labels, ok := volumeLabels(t, b, w.volume)
	if !ok || labels[labelSession] != w.session || labels[labelManaged] != "true" || labels[labelWorkspace] != volumePrefix+w.volume {
		t.Fatalf("volume %s: exists %v, labels %v", w.volume, ok, labels)
	}
	if w.Dir() != "" {
		t.Errorf("Dir() = %q for a volume workspace", w.Dir())
	}
	res := sh(t, w, "cat src/in/a.txt src/in/pkg/b.sh; stat -c '%u:%g %n' /workspace src src/in/a.txt; test -e src/in/link && echo LINK; id -u")
	out := res.Stdout
	uid := strings.TrimSpace(out[strings.LastIndexByte(strings.TrimSpace(out), '\n')+1:])
	for _, want := range []string{"alpha\n", "echo beta\n", uid + ":" + uid + " /workspace", uid + ":" + uid + " src", uid + ":" + uid + " src/in/a.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s%s", want, out, res.Stderr)
		}
	}
	if strings.Contains(out, "LINK") {
		t.Errorf("a symlink of the host mount was copied:\n%s", out)
	}
	noLocalWorkspace(t, w)
	// The agent and the seccomp profile come from the files volume on the
	// service's side, not from wai's directory.
	cctx := onServiceCtx(t, b.svc)
	data, err := containers.Inspect(cctx, w.name, nil)
	if err != nil {
		t.Fatal(err)
	}
	agentSrc := ""
	for _, m := range data.Mounts {
		if m.Destination == agentMountPath {
			agentSrc = m.Source
		}
	}
	if !strings.Contains(agentSrc, "/wai-files-") || strings.HasPrefix(agentSrc, b.cfg.WorkspaceDir) {
		t.Errorf("the agent is mounted from %q, not from the files volume", agentSrc)
	}
	if err := w.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, ok := volumeLabels(t, b, w.volume); ok {
		t.Errorf("volume %s outlived its session", w.volume)
	}
	if _, err := os.Stat(w.statePath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left: %v", err)
	}
}

// A kept session's volume outlives Close and holds its files for the next
// Open; wai rm removes it, and gc --all removes a kept one.
func TestVolumeWorkspaceKeptRmGC(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, volumeExtra)
	name := session("vk")
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: name, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	w := ws.(*Workspace)
	sh(t, w, "echo kept > f")
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, ok := volumeLabels(t, b, w.volume); !ok {
		t.Fatalf("kept session's volume %s removed at Close", w.volume)
	}
	ws, err = b.Open(bg, backend.WorkspaceSpec{Session: name, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if res := sh(t, ws.(*Workspace), "cat f"); res.Stdout != "kept\n" {
		t.Fatalf("reopened kept volume: %+v", res)
	}
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	rep, err := b.CollectGarbage(bg, backend.GCOptions{All: true, Match: func(s string) bool { return s == name }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gc: %+v", rep)
	if _, ok := volumeLabels(t, b, w.volume); ok {
		t.Errorf("gc --all left the kept session's volume %s", w.volume)
	}
	// wai rm: a kept session whose holder is gone.
	name2 := session("vr")
	ws, err = b.Open(bg, backend.WorkspaceSpec{Session: name2, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	w2 := ws.(*Workspace)
	sh(t, w2, "true")
	if err := ws.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RemoveSession(bg, name2); err != nil {
		t.Fatalf("rm: %v", err)
	}
	if _, ok := volumeLabels(t, b, w2.volume); ok {
		t.Errorf("rm left the session's volume %s", w2.volume)
	}
}

// workspace_size on a volume: the service enforces it with a project quota
// when its volume storage has them; otherwise Open fails, saying how to
// go on, rather than run without the limit.
func TestVolumeWorkspaceSize(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, withVolume(map[string]any{"workspace_size": "16m"}))
	ws, err := b.Open(bg, backend.WorkspaceSpec{Session: session("vs")})
	if err != nil {
		if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), `workspace_size = "0"`) || !strings.Contains(err.Error(), "pquota") {
			t.Fatalf("want ErrUnavailable with the way out, got %v", err)
		}
		t.Logf("not enforceable here, refused: %v", err)
		return
	}
	defer ws.Close(context.WithoutCancel(bg))
	res := sh(t, ws.(*Workspace), "dd if=/dev/zero of=big bs=1M count=32 2>&1; echo rc=$?")
	if !strings.Contains(res.Stdout, "No space left") {
		t.Fatalf("a 32 MiB write into a 16 MiB volume: %q", res.Stdout)
	}
}

// The default workspace follows the service: bind for a local socket,
// volume for one over the network; anything else is refused.
func TestWorkspaceModeConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url, mode, want string
	}{
		{"unix:///run/podman/podman.sock", "", workspaceBind},
		{"ssh://root@h/run/podman/podman.sock", "", workspaceVolume},
		{"tcp://h:8080", "", workspaceVolume},
		{"ssh://root@h/run/podman/podman.sock", "bind", workspaceBind},
		{"unix:///run/podman/podman.sock", "volume", workspaceVolume},
	} {
		raw := `{"url":"` + c.url + `","workspace":"` + c.mode + `"}`
		cfg, err := ParseConfig([]byte(raw), "/state")
		if err != nil || cfg.Workspace != c.want {
			t.Errorf("%s: %q, %v; want %q", raw, cfg.Workspace, err, c.want)
		}
	}
	if _, err := ParseConfig([]byte(`{"workspace":"nfs"}`), "/state"); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("workspace nfs: %v", err)
	}
	cfg, _ := ParseConfig([]byte(`{"workspace":"volume"}`), "/state")
	p, err := cfg.pathsFor(backend.WorkspaceSpec{Session: "s1"})
	if err != nil || p.volume != p.name || p.workspaceRef() != volumePrefix+p.name {
		t.Errorf("volume paths: %+v, %v", p, err)
	}
}

// A volume wai did not make is never adopted.
func TestVolumeWorkspaceForeignVolume(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, volumeExtra)
	name := session("vf")
	p, err := b.cfg.pathsFor(backend.WorkspaceSpec{Session: name})
	if err != nil {
		t.Fatal(err)
	}
	cctx := onServiceCtx(t, b.svc)
	if _, err := volumes.Create(cctx, volumeCreate(p.volume), nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = volumes.Remove(cctx, p.volume, nil) }()
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	_, err = b.Open(ctx, backend.WorkspaceSpec{Session: name})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "podman volume rm") {
		t.Fatalf("want a refusal naming the fix, got %v", err)
	}
}

func volumeCreate(name string) entitiesTypes.VolumeCreateOptions {
	return entitiesTypes.VolumeCreateOptions{Name: name, Labels: map[string]string{"someone": "else"}}
}

// The kernel's copy-in of a host directory (backend.CopyInFS) works on a
// volume workspace: new files, missing parents, owned by the container
// user; an existing one is ErrExist and stays as it was.
func TestVolumeWorkspaceCopyIn(t *testing.T) {
	t.Parallel()
	w := openTest(t, newTestBackend(t, backend.Limits{}, volumeExtra), false)
	cfs, ok := w.FS().(backend.CopyInFS)
	if !ok {
		t.Fatalf("%T is no CopyInFS", w.FS())
	}
	sh(t, w, "echo old > keep; ln -s /etc up")
	body := strings.Repeat("x", 70000)
	if n, err := cfs.CopyIn(bg, "a/b/c.txt", strings.NewReader(body), 0o640); err != nil || n != int64(len(body)) {
		t.Fatalf("CopyIn: %d, %v", n, err)
	}
	if _, err := cfs.CopyIn(bg, "keep", strings.NewReader("new"), 0o644); !errors.Is(err, backend.ErrExist) {
		t.Errorf("CopyIn over a file: %v", err)
	}
	// Through a symlink that points out of the workspace: it stays inside.
	if _, err := cfs.CopyIn(bg, "up/escaped", strings.NewReader("e"), 0o644); err != nil {
		t.Logf("CopyIn through a symlink: %v", err)
	}
	res := sh(t, w, "wc -c < a/b/c.txt; stat -c '%a %u' a/b/c.txt; stat -c '%u' a a/b; cat keep; test -e /etc/escaped && echo ESCAPED; id -u")
	uid := strings.TrimSpace(res.Stdout[strings.LastIndexByte(strings.TrimSpace(res.Stdout), '\n')+1:])
	want := fmt.Sprintf("70000\n640 %s\n%s\n%s\nold\n", uid, uid, uid)
	if !strings.HasPrefix(res.Stdout, want) || strings.Contains(res.Stdout, "ESCAPED") {
		t.Errorf("got %q, want %q first", res.Stdout, want)
	}
}

// The host-directory side of container copies refuses a volume session's
// workspace (copies with it go container to container, copyVolume): it
// is no directory here, and the refusal says what works instead.
func TestVolumeWorkspaceContainerCopyRefused(t *testing.T) {
	t.Parallel()
	cfg := parsedTestConfig(t, volumeExtra)
	b := &Backend{cfg: cfg}
	p, _ := cfg.pathsFor(backend.WorkspaceSpec{Session: "s1"})
	for _, hp := range []string{"out.txt", filepath.Join(p.dir, "out.txt")} {
		_, err := b.openHostSide("containers.copy_out", backend.ContainerOwner{Session: "s1"}, hp, true)
		if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "allowed_host_roots") {
			t.Errorf("%s: %v", hp, err)
		}
	}
}

// A managed container with mount_cwd mounts the session's volume: both
// see the same files. A session without a volume yet is refused rather
// than given a volume the service would make unlabelled.
func TestVolumeWorkspaceMountCwd(t *testing.T) {
	t.Parallel()
	b, w, owner := containerTest(t, volumeExtra)
	sh(t, w, "echo shared > f")
	info := create(t, b, backend.ContainerSpec{Owner: owner, MountWorkspace: true})
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	if out := cexec(t, b, ref, "cat /workspace/f; echo back > /workspace/g"); out.Stdout != "shared\n" {
		t.Errorf("the managed container sees %+v", out)
	}
	if res := sh(t, w, "cat g"); res.Stdout != "back\n" {
		t.Errorf("the session sees %+v", res)
	}
	_, err := b.CreateContainer(bg, backend.ContainerSpec{Owner: backend.ContainerOwner{Session: session("none")}, MountWorkspace: true})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "open the session") {
		t.Errorf("mount_cwd of a session without a volume: %v", err)
	}
}

// copy_in and copy_out with the session's volume workspace as the host
// side: tar streams between the two containers, symlinks left behind,
// files owned by the session's user, max_copy_bytes kept.
func TestVolumeWorkspaceContainerCopy(t *testing.T) {
	t.Parallel()
	b, w, owner := containerTest(t, withVolume(map[string]any{"containers": map[string]any{"max_copy_bytes": "1m"}}))
	info := create(t, b, backend.ContainerSpec{Owner: owner})
	ref := backend.ContainerRef{Owner: owner, Name: info.Name}
	sh(t, w, "mkdir -p d/sub && echo hello > d/sub/a.txt && ln -s /etc/passwd d/link")
	copyDirRoundTrip(t, b, ref)
	copyVolumeRefusals(t, b, ref, info.ID)
	// Only relative paths, which the kernel judges, reach the volume.
	ws, _ := b.cfg.pathsFor(backend.WorkspaceSpec{Session: owner.Session, User: owner.User})
	if _, err := b.CopyFromContainer(bg, ref, backend.ContainerCopy{HostPath: filepath.Join(ws.dir, "abs"), ContainerPath: "/tmp/d"}); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("copy_out to an absolute path in the volume workspace: %v; want ErrPermission", err)
	}
	if out := sh(t, w, "cat back/sub/a.txt; stat -c %u back/sub/a.txt; id -u"); !strings.HasPrefix(out.Stdout, "hello\nmore\n") ||
		strings.Count(out.Stdout, strings.TrimSpace(out.Stdout[strings.LastIndexByte(strings.TrimSpace(out.Stdout), '\n')+1:])) != 2 {
		t.Errorf("copied out: %+v", out)
	}
	copyOutCapped(t, b, ref)
}
