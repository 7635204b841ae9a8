//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// containersDirName holds the managed containers' metadata under the
// workspace directory; '@' keeps it from ever being a session's name.
const containersDirName = "@containers"

func (b *Backend) metaPath(name string) string {
	return filepath.Join(b.cfg.fixedDir(), containersDirName, name, "metadata.json")
}

// saveMeta writes a container's metadata. It holds names only, never an
// environment value or a forwarded file.
func (b *Backend) saveMeta(info backend.ContainerInfo) error {
	return writePrivateJSON(b.metaPath(info.Name), info)
}

// loadMeta reads a container's metadata; ok is false when there is none.
func (b *Backend) loadMeta(name string) (backend.ContainerInfo, bool) {
	var info backend.ContainerInfo
	data, err := os.ReadFile(b.metaPath(name))
	if err != nil || json.Unmarshal(data, &info) != nil {
		return info, false
	}
	return info, true
}

func (b *Backend) removeMeta(name string) {
	_ = os.RemoveAll(filepath.Dir(b.metaPath(name)))
}

// provision creates the container user's home and writes files into the
// running container, owned by its user, through the archive API.
func (b *Backend) provision(ctx context.Context, id string, files []backend.ContainerFile) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mkdir := func(d string) error {
		if dirs[d] {
			return nil
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: time.Now()})
	}
	if err := mkdir(ContainerHome); err != nil {
		return err
	}
	for _, f := range files {
		p := f.Path
		if !path.IsAbs(p) {
			p = path.Join(ContainerHome, p)
		}
		p = path.Clean(p)
		if !strings.HasPrefix(p, ContainerHome+"/") {
			return backend.Errorf(backend.ErrInvalid, "containers.create", f.Path, "provisioned files go under the container user's home")
		}
		var parents []string
		for d := path.Dir(p); d != ContainerHome; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if err := mkdir(d); err != nil {
				return err
			}
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o600
		}
		if err := addTarFile(tw, archiveFile{strings.TrimPrefix(p, "/"), int64(mode.Perm()), f.Data}, time.Now()); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return b.putArchive(ctx, "containers.create", id, "/", &buf)
}

// snapshotMetaPath is where a snapshot's metadata lives, next to the
// containers': '@' keeps the directory from ever being a container's.
func (b *Backend) snapshotMetaPath(user, name string) string {
	repo := strings.TrimPrefix(b.snapshotRepo(user), snapshotRepoPrefix)
	return filepath.Join(b.cfg.fixedDir(), containersDirName, "@snapshots", repo, name+".json")
}

// saveSnapshotMeta records a snapshot: what it was taken from and which
// variables were reset. The image's labels stay the truth for listing.
func (b *Backend) saveSnapshotMeta(info backend.SnapshotInfo) error {
	return writePrivateJSON(b.snapshotMetaPath(info.User, info.Name), info)
}

func (b *Backend) removeSnapshotMeta(user, name string) {
	_ = os.Remove(b.snapshotMetaPath(user, name))
}
