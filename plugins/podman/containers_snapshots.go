//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/wai-dev/wai/host/backend"
)

// Labels of a snapshot image, besides labelManaged, labelUser, labelHome,
// labelSession and labelCreated. The image also keeps the labels its
// container had (podman commit copies them): the ones that could mislead
// are overwritten.
const (
	kindSnapshot        = "snapshot"
	labelSnapshot       = "wai.snapshot"     // the snapshot's name
	labelSource         = "wai.source"       // the container it was taken from
	labelSourceImage    = "wai.source_image" // that container's image
	labelStrippedEnvKey = "wai.stripped_env" // comma-separated names whose values were reset
	snapshotRepoPrefix  = "localhost/wai-snapshot-"
	snapshotKeyScript   = `for f in "$HOME"/.ssh/* "$HOME"/.ssh/.[!.]*; do [ -f "$f" ] && grep -lq 'PRIVATE KEY' "$f" 2>/dev/null && echo "$f"; done; true`
	snapshotTimeFormat  = "20060102-150405"
	snapshotCommitLimit = 30 * time.Minute
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// snapshotLocks holds a mutex per snapshot image being taken: between the
// check that the name is free and the commit, a second snapshot of the
// same name would move the tag and orphan the first silently.
var snapshotLocks sync.Map // image -> *sync.Mutex

// snapshotRepo is the image repository of a user's snapshots: one per
// user and configuration, so a tag (the snapshot's name) is the user's
// own, and a name another user took is no collision.
func (b *Backend) snapshotRepo(user string) string {
	sum := sha256.Sum256([]byte(b.cfg.fixedDir() + "\x00" + user))
	return snapshotRepoPrefix + hex.EncodeToString(sum[:6])
}

func (b *Backend) snapshotRef(op string, owner backend.ContainerOwner, name string) (string, error) {
	if !containerNameRE.MatchString(name) {
		return "", backend.Errorf(backend.ErrInvalid, op, name,
			"a snapshot name is 1–63 letters, digits, '_', '-' or '.', starting with a letter or digit (list_snapshots shows yours)")
	}
	return b.snapshotRepo(owner.User) + ":" + name, nil
}

// SnapshotContainer commits a managed container as the user's snapshot
// name, with the values of forwarded variables reset.
func (b *Backend) SnapshotContainer(ctx context.Context, ref backend.ContainerRef, name string) (backend.SnapshotInfo, error) {
	const op = "containers.snapshot"
	data, err := b.lookup(ctx, op, ref)
	if err != nil {
		return backend.SnapshotInfo{}, err
	}
	if name == "" {
		name = ref.Name[:min(len(ref.Name), 40)] + "-" + time.Now().UTC().Format(snapshotTimeFormat)
	}
	image, err := b.snapshotRef(op, ref.Owner, name)
	if err != nil {
		return backend.SnapshotInfo{}, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return backend.SnapshotInfo{}, err
	}
	mu, _ := snapshotLocks.LoadOrStore(image, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if ok, err := images.Exists(cctx, image, nil); err != nil {
		return backend.SnapshotInfo{}, b.svc.wrap(ctx, op, name, err)
	} else if ok {
		return backend.SnapshotInfo{}, backend.Errorf(backend.ErrExist, op, name, "you have a snapshot of that name: choose another, or delete_snapshot it first")
	}
	if ls, err := b.ListSnapshots(ctx, ref.Owner); err != nil {
		return backend.SnapshotInfo{}, err
	} else if max := b.cfg.Containers.MaxSnapshots; len(ls) >= max {
		return backend.SnapshotInfo{}, backend.Errorf(backend.ErrPermission, op, name,
			"you have %d snapshots, the most containers.max_snapshots (%d) allows: delete_snapshot one first (list_snapshots shows them)", len(ls), max)
	}
	running := data.State != nil && data.State.Running
	if err := b.refuseKeys(ctx, op, ref.Name, data.ID, running); err != nil {
		return backend.SnapshotInfo{}, err
	}
	lb := data.Config.Labels
	info := backend.SnapshotInfo{Name: name, Image: image, Container: ref.Name, SourceImage: data.ImageName, Purpose: lb[labelPurpose],
		Session: ref.Owner.Session, User: ref.Owner.User, Created: time.Now().UTC()}
	changes, stripped := snapshotChanges(info, lb[labelEnvKeys], b.imageEnv(cctx, data.Image), b.cfg.fixedDir())
	info.StrippedEnv = stripped
	commitCtx, cancel := context.WithTimeout(cctx, snapshotCommitLimit)
	defer cancel()
	repo, tag, _ := strings.Cut(image, ":")
	resp, err := containers.Commit(commitCtx, data.ID, new(containers.CommitOptions).WithRepo(repo).WithTag(tag).
		WithChanges(changes).WithPause(true))
	if err != nil {
		return info, b.svc.wrap(ctx, op, name, err)
	}
	info.ID = resp.ID
	if img, err := images.GetImage(cctx, image, nil); err == nil && img.ImageData != nil {
		info.Size = img.Size
	}
	if err := b.saveSnapshotMeta(info); err != nil {
		b.log.Warn("runtime.podman.snapshot_metadata", "snapshot", name, "error", err.Error())
	}
	b.log.InfoContext(ctx, "runtime.podman.snapshot_created", "snapshot", name, "container", ref.Name, "image", image,
		"stripped_env", strings.Join(stripped, ","))
	return info, nil
}

// snapshotChanges are the commit's Dockerfile-style changes: the labels
// that make the image a snapshot of its user, and for each variable the
// kernel passed in (API keys, tokens) the value of the container's image
// (baseEnv: PATH stays usable), else an empty one: a commit would copy
// the container's values into the image's configuration otherwise.
func snapshotChanges(info backend.SnapshotInfo, envKeys string, baseEnv map[string]string, home string) ([]string, []string) {
	var stripped []string
	changes := []string{}
	for _, k := range strings.Split(envKeys, ",") {
		if envNameRE.MatchString(k) && k != "HOME" {
			stripped = append(stripped, k)
			changes = append(changes, "ENV "+k+"="+strconv.Quote(baseEnv[k]))
		}
	}
	sort.Strings(stripped)
	labels := map[string]string{labelManaged: "true", labelKind: kindSnapshot, labelSnapshot: info.Name, labelUser: info.User,
		labelHome: home, labelSession: info.Session, labelSource: info.Container, labelSourceImage: info.SourceImage,
		labelCreated: info.Created.Format(time.RFC3339), labelEnvKeys: "", labelPersistent: "",
		labelStrippedEnvKey: strings.Join(stripped, ",")}
	keys := slices.Sorted(maps.Keys(labels))
	for _, k := range keys {
		changes = append(changes, fmt.Sprintf("LABEL %s=%q", k, labels[k]))
	}
	return changes, stripped
}

// imageEnv is the environment of image (an ID), empty when it cannot be
// read (the variables are then emptied, which is safe).
func (b *Backend) imageEnv(cctx context.Context, image string) map[string]string {
	img, err := images.GetImage(cctx, image, nil)
	if err != nil || img.ImageData == nil || img.Config == nil {
		return nil
	}
	return backend.EnvMap(img.Config.Env)
}

// refuseKeys refuses a snapshot of a container with private keys in the
// user's ~/.ssh (forward_ssh puts them there): an image would keep them
// for anyone who can read it. A stopped container cannot be looked into;
// its metadata says whether keys were forwarded.
func (b *Backend) refuseKeys(ctx context.Context, op, name, id string, running bool) error {
	if !running {
		if m, ok := b.loadMeta(name); ok && m.Provisioning["forward_ssh"] {
			return backend.Errorf(backend.ErrPermission, op, name,
				"the container was made with forward_ssh and is not running, so its ~/.ssh cannot be checked: a snapshot would keep the private keys; snapshot a container made without forward_ssh")
		}
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	code, out, err := b.execSimple(pctx, id, []string{"/bin/sh", "-c", snapshotKeyScript}, []string{"HOME=" + ContainerHome})
	if err != nil {
		return err
	}
	if code != 0 {
		return backend.Errorf(backend.ErrUnavailable, op, name, "checking ~/.ssh for private keys failed (exit %d): %s", code, strings.TrimSpace(out))
	}
	if keys := strings.Fields(out); len(keys) > 0 {
		return backend.Errorf(backend.ErrPermission, op, name,
			"the container holds private keys (%s): a snapshot would keep them in an image; remove them first (exec: rm %s), then snapshot",
			strings.Join(keys, ", "), strings.Join(keys, " "))
	}
	return nil
}

// ListSnapshots lists the user's snapshots of this configuration, found
// by label.
func (b *Backend) ListSnapshots(ctx context.Context, owner backend.ContainerOwner) ([]backend.SnapshotInfo, error) {
	return b.listSnapshots(ctx, owner.User, false)
}

// ListManagedSnapshots lists every user's snapshots (wai ps).
func (b *Backend) ListManagedSnapshots(ctx context.Context) ([]backend.SnapshotInfo, error) {
	return b.listSnapshots(ctx, "", true)
}

func (b *Backend) listSnapshots(ctx context.Context, user string, all bool) ([]backend.SnapshotInfo, error) {
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	// One label filter: the service (Podman 4.3) answers none when an
	// image list gets several; the rest is checked here.
	l, err := listImages(cctx, new(images.ListOptions).WithFilters(map[string][]string{"label": {labelKind + "=" + kindSnapshot}}))
	if err != nil {
		return nil, b.svc.wrap(ctx, "containers.list_snapshots", "", err)
	}
	out := []backend.SnapshotInfo{}
	for _, s := range l {
		if !all && s.Labels[labelUser] != user || s.Labels[labelManaged] != "true" || s.Labels[labelHome] != b.cfg.fixedDir() {
			continue
		}
		repo := b.snapshotRepo(s.Labels[labelUser])
		for _, t := range s.RepoTags {
			if r, tag, _ := strings.Cut(t, ":"); r == repo && tag == s.Labels[labelSnapshot] {
				info := snapshotFromLabels(t, s.ID, s.Labels)
				info.Size = s.Size
				out = append(out, info)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func snapshotFromLabels(image, id string, lb map[string]string) backend.SnapshotInfo {
	info := backend.SnapshotInfo{Name: lb[labelSnapshot], Image: image, ID: id, Container: lb[labelSource], SourceImage: lb[labelSourceImage],
		Purpose: lb[labelPurpose], Session: lb[labelSession], User: lb[labelUser]}
	info.Created, _ = time.Parse(time.RFC3339, lb[labelCreated])
	if s := lb[labelStrippedEnvKey]; s != "" {
		info.StrippedEnv = strings.Split(s, ",")
	}
	return info
}

// snapshot inspects the user's snapshot name: anything that is not one
// (another user's, another configuration's) is ErrNotFound.
func (b *Backend) snapshot(ctx context.Context, op string, owner backend.ContainerOwner, name string) (backend.SnapshotInfo, error) {
	image, err := b.snapshotRef(op, owner, name)
	if err != nil {
		return backend.SnapshotInfo{}, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return backend.SnapshotInfo{}, err
	}
	img, err := images.GetImage(cctx, image, nil)
	if err == nil && img.ImageData != nil {
		lb := img.Labels
		if lb[labelManaged] == "true" && lb[labelKind] == kindSnapshot && lb[labelHome] == b.cfg.fixedDir() &&
			lb[labelUser] == owner.User && lb[labelSnapshot] == name {
			info := snapshotFromLabels(image, img.ID, lb)
			info.Size = img.Size
			return info, nil
		}
	} else if err != nil && !notFound(err) && !strings.Contains(err.Error(), "image not known") {
		return backend.SnapshotInfo{}, b.svc.wrap(ctx, op, name, err)
	}
	return backend.SnapshotInfo{}, backend.Errorf(backend.ErrNotFound, op, name, "no such snapshot (list_snapshots shows yours)")
}

// SnapshotImage is the image restoring the user's snapshot name creates
// from.
func (b *Backend) SnapshotImage(ctx context.Context, owner backend.ContainerOwner, name string) (string, error) {
	info, err := b.snapshot(ctx, "containers.restore", owner, name)
	return info.Image, err
}

// DeleteSnapshot removes the user's snapshot image and its metadata; a
// snapshot a container was made from stays until that container goes.
func (b *Backend) DeleteSnapshot(ctx context.Context, owner backend.ContainerOwner, name string) (backend.SnapshotInfo, error) {
	const op = "containers.delete_snapshot"
	info, err := b.snapshot(ctx, op, owner, name)
	if err != nil {
		return info, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return info, err
	}
	if _, errs := images.Remove(cctx, []string{info.Image}, nil); len(errs) > 0 {
		err := errs[0]
		if strings.Contains(err.Error(), "in use") || strings.Contains(err.Error(), "being used") || httpCode(err) == 409 {
			return info, backend.Errorf(backend.ErrExist, op, name,
				"a container was made from this snapshot: destroy it first (list shows containers with image %s)", info.Image)
		}
		return info, b.svc.wrap(ctx, op, name, err)
	}
	b.removeSnapshotMeta(owner.User, name)
	b.log.InfoContext(ctx, "runtime.podman.snapshot_deleted", "snapshot", name, "image", info.Image)
	return info, nil
}

// Interface guards
var (
	_ backend.ContainerSnapshots    = (*Backend)(nil)
	_ backend.ManagedSnapshotLister = (*Backend)(nil)
)
