//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"
	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/wai-dev/wai/host/backend"
)

// kindFiles is labelKind's value on the volume that carries the files
// every container needs from wai: the seccomp profile, which the service
// reads by path on its own machine, and wai-agent, bind-mounted by path.
const kindFiles = "files"

// filesMu serializes finding and filling files volumes in this process.
var filesMu sync.Mutex

// serviceFiles are those two files' paths on the service's machine.
type serviceFiles struct {
	mu      sync.Mutex
	seccomp string
	agent   string // "" without an agent binary
}

// filesOnService puts the seccomp profile and wai-agent into a volume on
// the service's machine, once per content (the volume's name carries a
// hash of both, so a new wai gets a new volume and a container keeps the
// files it was made with), and returns their paths there: the volume's
// mount point, which the service reports. A volume workspace uses them so
// that nothing needs a path shared with the service. Two processes filling
// the same new volume at once may make one container creation fail; the
// next call finds the volume filled.
func (b *Backend) filesOnService(ctx context.Context) (seccompPath, agentPath string, err error) {
	f := &b.svcFiles
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seccomp != "" {
		return f.seccomp, f.agent, nil
	}
	local, err := writeSeccompProfile(b.seccompDir)
	if err != nil {
		return "", "", err
	}
	profile, err := os.ReadFile(local)
	if err != nil {
		return "", "", backend.Errorf(backend.ErrUnavailable, "create", local, "cannot read the seccomp profile: %v", err)
	}
	var agent []byte
	if b.agentBin != "" {
		if agent, err = os.ReadFile(b.agentBin); err != nil {
			return "", "", backend.Errorf(backend.ErrUnavailable, "create", b.agentBin, "cannot read the agent binary: %v", err)
		}
	}
	sum := sha256.New()
	sum.Write(profile)
	sum.Write(agent)
	// Named by content alone: configurations with the same files share the
	// volume rather than leave one each (name_prefix keeps sessions apart;
	// these files are the same for all).
	name := "wai-files-" + hex.EncodeToString(sum.Sum(nil)[:8])
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return "", "", err
	}
	// Backends of one process (tests, a server with several configs)
	// wait for the one filling rather than find it half made.
	filesMu.Lock()
	v, err := volumes.Inspect(cctx, name, nil)
	if volumeNotFound(err) {
		v, err = b.fillFilesVolume(ctx, name, profile, agent)
	}
	filesMu.Unlock()
	if err != nil {
		return "", "", b.svc.wrap(ctx, "create", name, err)
	}
	if v.Labels[labelManaged] != "true" || v.Labels[labelKind] != kindFiles || v.Mountpoint == "" {
		return "", "", backend.Errorf(backend.ErrUnavailable, "create", name,
			"a volume named %s exists that wai did not make: remove it (`podman volume rm %s`) or change name_prefix", name, name)
	}
	f.seccomp = path.Join(v.Mountpoint, "seccomp.json")
	if agent != nil {
		f.agent = path.Join(v.Mountpoint, "wai-agent")
	}
	return f.seccomp, f.agent, nil
}

// fillFilesVolume makes the files volume and writes both files into it
// through a container that is created, never started, and removed.
func (b *Backend) fillFilesVolume(ctx context.Context, name string, profile, agent []byte) (*entitiesTypes.VolumeConfigResponse, error) {
	if err := b.ensureImage(ctx); err != nil {
		return nil, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{labelManaged: "true", labelKind: kindFiles}
	if _, err := volumes.Create(cctx, entitiesTypes.VolumeCreateOptions{Name: name, Labels: labels}, nil); err != nil && !strings.Contains(err.Error(), "already exists") {
		return nil, err
	}
	s := specgen.NewSpecGenerator(b.image(), false)
	s.Name = name + "-fill-" + newID()[:8]
	s.Command = []string{"true"}
	s.Labels = map[string]string{labelManaged: "true", labelKind: kindFiles}
	s.Volumes = []*specgen.NamedVolume{{Name: name, Dest: "/files", Options: []string{"rw", "nosuid", "nodev"}}}
	resp, err := containers.CreateWithSpec(cctx, s, nil)
	if err != nil {
		return nil, err
	}
	defer b.removeQuiet(resp.ID)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	files := []struct {
		name string
		mode int64
		body []byte
	}{{"seccomp.json", 0o444, profile}}
	if agent != nil {
		files = append(files, struct {
			name string
			mode int64
			body []byte
		}{"wai-agent", 0o555, agent})
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: now}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := b.streamArchive(ctx, resp.ID, "/files", &buf); err != nil {
		return nil, err
	}
	return volumes.Inspect(cctx, name, nil)
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
