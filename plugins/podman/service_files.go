//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	"github.com/containers/podman/v5/pkg/copy"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"
	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/wai-dev/wai/host/backend"
)

// kindFiles is labelKind's value on the volume that carries the files
// every container needs from wai: the seccomp profile, which the service
// reads by path on its own machine, and wai-agent, bind-mounted by path.
const kindFiles = "files"

// filesMarker is written into a files volume last, in an upload of its
// own once the files are in: a volume without it, or with a file of the
// wrong size, was left half made (a fill that failed, a process killed
// midway) and is filled again before any container uses it.
const filesMarker = ".wai-complete"

var (
	// filesMu serializes finding and filling files volumes in this
	// process: backends of one process (tests, a server with several
	// configs) wait for the one filling rather than find it half made.
	filesMu sync.Mutex
	// filesChecked holds the files volumes this process found complete or
	// filled, by service and name: the name carries the content's hash but
	// is the same on every service, and one process may use several (a
	// server with a local and an ssh:// configuration), where one checked
	// says nothing of the other.
	filesChecked = map[filesKey]bool{}
)

// filesKey names a files volume on one service.
type filesKey struct{ url, identity, name string }

// serviceFiles are those two files' paths on the service's machine, and
// the volume's key in filesChecked.
type serviceFiles struct {
	mu      sync.Mutex
	seccomp string
	agent   string // "" without an agent binary
	key     filesKey
}

// filesOnService puts the seccomp profile and wai-agent into a volume on
// the service's machine, once per content (the volume's name carries a
// hash of both, so a new wai gets a new volume and a container keeps the
// files it was made with), and returns their paths there: the volume's
// mount point, which the service reports. A volume workspace uses them so
// that nothing needs a path shared with the service. Two processes filling
// the same volume at once may make one container creation fail; the next
// call finds the volume filled.
func (b *Backend) filesOnService(ctx context.Context) (seccompPath, agentPath string, err error) {
	f := &b.svcFiles
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seccomp != "" {
		return f.seccomp, f.agent, nil
	}
	name, files, err := b.serviceFileSet()
	if err != nil {
		return "", "", err
	}
	filesMu.Lock()
	v, err := b.filesVolume(ctx, name, files)
	filesMu.Unlock()
	if err != nil {
		return "", "", err
	}
	f.key = filesKey{b.svc.url, b.svc.identity, name}
	f.seccomp = path.Join(v.Mountpoint, "seccomp.json")
	if len(files) > 1 {
		f.agent = path.Join(v.Mountpoint, "wai-agent")
	}
	return f.seccomp, f.agent, nil
}

// serviceFileSet reads the files the volume carries and names the volume
// after them.
func (b *Backend) serviceFileSet() (string, []archiveFile, error) {
	local, err := writeSeccompProfile(b.seccompDir)
	if err != nil {
		return "", nil, err
	}
	profile, err := os.ReadFile(local)
	if err != nil {
		return "", nil, backend.Errorf(backend.ErrUnavailable, "create", local, "cannot read the seccomp profile: %v", err)
	}
	files := []archiveFile{{"seccomp.json", 0o444, profile}}
	if b.agentBin != "" {
		agent, err := os.ReadFile(b.agentBin)
		if err != nil {
			return "", nil, backend.Errorf(backend.ErrUnavailable, "create", b.agentBin, "cannot read the agent binary: %v", err)
		}
		files = append(files, archiveFile{"wai-agent", 0o555, agent})
	}
	sum := sha256.New()
	for _, f := range files {
		sum.Write(f.body)
	}
	// Named by content alone: configurations with the same files share the
	// volume rather than leave one each (name_prefix keeps sessions apart;
	// these files are the same for all).
	return "wai-files-" + hex.EncodeToString(sum.Sum(nil)[:8]), files, nil
}

// filesVolume returns the files volume, complete: a new one is made and
// filled, a half-made one filled again, and a fill that fails removes a
// volume it made or found lacking, so that no later call finds it half
// made (one found complete stays: other processes' containers may use it,
// as bind sources Podman does not count). A volume of that name that wai
// did not make is refused, never written to.
func (b *Backend) filesVolume(ctx context.Context, name string, files []archiveFile) (*entitiesTypes.VolumeConfigResponse, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	key := filesKey{b.svc.url, b.svc.identity, name}
	v, err := volumes.Inspect(cctx, name, nil)
	made := false
	switch {
	case volumeNotFound(err):
		labels := map[string]string{labelManaged: "true", labelKind: kindFiles}
		_, err := volumes.Create(cctx, entitiesTypes.VolumeCreateOptions{Name: name, Labels: labels}, nil)
		switch {
		case err == nil:
			made = true
		case strings.Contains(err.Error(), "already exists"):
			// Another process made it just now: its fill is its own to
			// undo, so a failure here does not remove it (unless found
			// lacking, below).
		default:
			return nil, b.svc.wrap(ctx, "create", name, err)
		}
	case err != nil:
		return nil, b.svc.wrap(ctx, "create", name, err)
	case v.Labels[labelManaged] != "true" || v.Labels[labelKind] != kindFiles || v.Mountpoint == "":
		return nil, backend.Errorf(backend.ErrUnavailable, "create", name,
			"a volume named %s exists that wai did not make: remove it (`podman volume rm %s`) or change name_prefix", name, name)
	case filesChecked[key]:
		return v, nil
	}
	if lacking, err := b.fillFilesVolume(ctx, name, files); err != nil {
		if made || lacking {
			b.dropFilesVolume(ctx, name)
		}
		return nil, err
	}
	filesChecked[key] = true
	if v, err = volumes.Inspect(cctx, name, nil); err != nil {
		return nil, b.svc.wrap(ctx, "create", name, err)
	}
	return v, nil
}

// fillFilesVolume writes the files and then the marker into the files
// volume, through a container that is created, never started, and removed;
// a volume that holds them all, at their sizes, is left as it is. lacking
// reports a volume found without them, which a failed fill leaves so.
func (b *Backend) fillFilesVolume(ctx context.Context, name string, files []archiveFile) (lacking bool, err error) {
	if err := b.ensureImage(ctx); err != nil {
		return false, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return false, err
	}
	s := specgen.NewSpecGenerator(b.image(), false)
	s.Name = name + fillInfix + newID()[:8]
	s.Command = []string{"true"}
	s.Labels = map[string]string{labelManaged: "true", labelKind: kindFiles}
	s.Volumes = []*specgen.NamedVolume{{Name: name, Dest: "/files", Options: []string{"rw", "nosuid", "nodev"}}}
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		return false, b.svc.wrap(ctx, "create", name, err)
	}
	defer b.removeQuiet(resp.ID)
	marker := archiveFile{filesMarker, 0o444, []byte(strings.TrimPrefix(name, "wai-files-") + "\n")}
	if ok, err := b.filesComplete(ctx, resp.ID, append(files, marker)); err != nil || ok {
		return false, err
	}
	b.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "runtime.podman.files_filling", slog.String("volume", name))
	if err := b.putFiles(ctx, resp.ID, files...); err != nil {
		return true, err
	}
	return true, b.putFiles(ctx, resp.ID, marker)
}

// filesComplete reports whether the files volume mounted at /files of
// container id holds every file at its size.
func (b *Backend) filesComplete(ctx context.Context, id string, files []archiveFile) (bool, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return false, err
	}
	for _, f := range files {
		st, err := containers.Stat(cctx, id, path.Join("/files", f.name))
		if errors.Is(err, copy.ErrENOENT) {
			return false, nil
		}
		if err != nil {
			return false, b.svc.wrap(ctx, "create", f.name, err)
		}
		if st.Size != int64(len(f.body)) {
			return false, nil
		}
	}
	return true, nil
}

// putFiles uploads files to /files of container id as one tar stream.
func (b *Backend) putFiles(ctx context.Context, id string, files ...archiveFile) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, f := range files {
		if err := addTarFile(tw, f, now); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return b.putArchive(ctx, "create", id, "/files", &buf)
}

// dropFilesVolume removes a files volume a fill left incomplete, also when
// ctx is what ended the fill. The service refuses while a container uses
// it (another process's fill, say): then the next call fills it again.
func (b *Backend) dropFilesVolume(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if cctx, err := b.svc.ctx(ctx); err == nil {
		_ = volumes.Remove(cctx, name, nil)
	}
}

// useFilesOnService points a container spec of a volume configuration at
// the files volume's copies of the seccomp profile and the agent.
func (b *Backend) useFilesOnService(ctx context.Context, s *specgen.SpecGenerator) error {
	if !b.cfg.volumeMode() {
		return nil
	}
	seccompPath, agentPath, err := b.filesOnService(ctx)
	if err != nil {
		return err
	}
	s.SeccompProfilePath = seccompPath
	for i := range s.Mounts {
		if s.Mounts[i].Destination == agentMountPath && agentPath != "" {
			s.Mounts[i].Source = agentPath
		}
	}
	return nil
}

// forgetLostFiles reports whether err is a container creation or start
// that failed because a file of the cached files volume is gone: the
// volume was removed under this process (wai gc of another wai build,
// `podman volume rm`). It then forgets the volume's paths and its check,
// so that the next try finds the volume or makes and fills it again,
// rather than every creation failing until the process restarts. Podman
// says "no such file or directory" and names the path: the seccomp
// profile at create, the agent's bind source at start.
func (b *Backend) forgetLostFiles(err error) bool {
	f := &b.svcFiles
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil || f.seccomp == "" {
		return false
	}
	m := err.Error()
	if !strings.Contains(m, path.Dir(f.seccomp)+"/") || !strings.Contains(m, "no such file or directory") {
		return false
	}
	f.seccomp, f.agent = "", ""
	filesMu.Lock()
	delete(filesChecked, f.key)
	filesMu.Unlock()
	b.log.LogAttrs(context.Background(), slog.LevelWarn, "runtime.podman.files_lost",
		slog.String("volume", f.key.name), slog.String("error", m))
	return true
}
