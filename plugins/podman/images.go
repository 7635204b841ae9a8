//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"os"
	"sort"
	"sync"

	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/wai-dev/wai/host/backend"
)

// PurposeImage says which image serves a purpose and whether it is on the
// service cfg names: built from the current recipe (the tag is the recipe
// hash, and the wai.recipe label must agree). Unknown purpose: ErrInvalid
// listing the purposes.
func PurposeImage(ctx context.Context, cfg Config, purpose string) (ImageRef, error) {
	r, err := PurposeRecipe(purpose)
	if err != nil {
		return ImageRef{}, err
	}
	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	return findImage(ctx, svc, r)
}

// findImage looks up the image of recipe r; Exists is false when it is
// missing or carries another recipe's label.
func findImage(ctx context.Context, svc *service, r Recipe) (ImageRef, error) {
	ref := ImageRef{Purpose: r.Purpose, Name: r.ImageName(), Recipe: r.Hash()}
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return ref, err
	}
	ok, err := images.Exists(cctx, ref.Name, nil)
	if err != nil {
		return ref, svc.wrap(ctx, "image exists", ref.Name, err)
	}
	if !ok {
		return ref, nil
	}
	data, err := images.GetImage(cctx, ref.Name, nil)
	if err != nil {
		return ref, svc.wrap(ctx, "image inspect", ref.Name, err)
	}
	ref.ID = data.ID
	ref.Exists = data.Labels[labelRecipe] == ref.Recipe
	ref.Current = ref.Exists
	return ref, nil
}

// PurposeImages lists the purpose images on the service cfg names: every
// image labelled with a purpose (current or built from an older recipe),
// and a missing entry for each purpose with no current image. Sorted by
// purpose, current first.
func PurposeImages(ctx context.Context, cfg Config) ([]ImageRef, error) {
	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return nil, err
	}
	current := map[string]string{} // purpose -> current recipe hash
	for _, p := range Purposes() {
		r, err := PurposeRecipe(p)
		if err != nil {
			return nil, err
		}
		current[p] = r.Hash()
	}
	sums, err := listImages(cctx, new(images.ListOptions).WithFilters(map[string][]string{"label": {labelPurpose}}))
	if err != nil {
		return nil, svc.wrap(ctx, "image ls", "", err)
	}
	var out []ImageRef
	seen := map[string]bool{}
	for _, s := range sums {
		if s.Labels[labelKind] == kindSnapshot {
			continue // a container's snapshot keeps its purpose label; it is no purpose image
		}
		p := s.Labels[labelPurpose]
		names := s.RepoTags
		if len(names) == 0 {
			names = []string{"<none>"}
		}
		for _, n := range names {
			ref := ImageRef{Purpose: p, Name: n, Recipe: s.Labels[labelRecipe], ID: s.ID, Exists: true}
			ref.Current = ref.Recipe != "" && ref.Recipe == current[p]
			seen[p] = seen[p] || ref.Current && n == "localhost/wai-"+p+":"+ref.Recipe
			out = append(out, ref)
		}
	}
	for p, h := range current {
		if !seen[p] {
			out = append(out, ImageRef{Purpose: p, Name: "localhost/wai-" + p + ":" + h, Recipe: h})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Purpose != out[j].Purpose {
			return out[i].Purpose < out[j].Purpose
		}
		if out[i].Current != out[j].Current {
			return out[i].Current
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// BuildPurposeImage makes sure the image of a purpose exists on the service
// cfg names, building it when it does not (or when opts.Force): mmdebstrap
// writes the root filesystem on this machine, and the tarball is imported
// through the Podman API, so a remote service works too. Building needs
// root and mmdebstrap here; without them the error says what to install.
// opts.Progress, when set, hears every step; a reporter in ctx
// (backend.WithProgress) hears the build as one step.
func BuildPurposeImage(ctx context.Context, cfg Config, purpose string, opts BuildOptions) (ImageRef, error) {
	r, err := PurposeRecipe(purpose)
	if err != nil {
		return ImageRef{}, err
	}
	say := opts.progress
	// One build per image at a time in this process (an MCP server serves
	// many sessions): the second caller waits, then finds the image.
	unlock, err := lockBuild(ctx, r.ImageName())
	if err != nil {
		return ImageRef{}, err
	}
	defer unlock()
	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	ref, err := findImage(ctx, svc, r)
	if err != nil {
		return ref, err
	}
	if ref.Exists && !opts.Force {
		say(ProgressEvent{Phase: PhaseCached, Message: ref.Name + " is up to date (recipe " + ref.Recipe + ")"})
		return ref, nil
	}
	if opts.OnDemand && !opts.Allowed {
		return ref, backend.Errorf(backend.ErrUnavailable, "image", ref.Name,
			"the %s image is not built: run `wai image build %s` (as root), or set build_images = true in [backends.podman.containers] to build it on demand",
			purpose, purpose)
	}
	if err := canBuild(); err != nil {
		return ref, err
	}
	// The context's reporter (CLI status line, MCP progress) hears the
	// build as one slow step; opts.Progress hears every step of it.
	defer backend.StartProgress(ctx, "building image "+ref.Name)()
	tmp := opts.TempDir
	if tmp == "" {
		tmp = buildTempDir()
	}
	dir, err := os.MkdirTemp(tmp, "wai-image-")
	if err != nil {
		return ref, backend.Errorf(backend.ErrUnavailable, "image build", purpose, "temporary directory: %v", err)
	}
	defer func() {
		if err := removeBuildDir(dir); err != nil {
			say(ProgressEvent{Phase: PhaseDone, Message: "left behind: " + err.Error()})
		}
	}()
	tarball, err := debootstrap(ctx, r, opts.Mirror, dir, say)
	if err != nil {
		return ref, err
	}
	id, err := importRootfs(ctx, svc, r, tarball, say)
	if err != nil {
		return ref, err
	}
	ref.ID, ref.Exists, ref.Current, ref.Built = id, true, true, true
	say(ProgressEvent{Phase: PhaseDone, Message: "built " + ref.Name})
	return ref, nil
}

// building holds a one-slot channel per image being built in this process.
var building sync.Map // image name -> chan struct{}

// lockBuild waits, as long as ctx allows, until no other build of name runs
// in this process, and returns the function that lets the next one in.
func lockBuild(ctx context.Context, name string) (unlock func(), err error) {
	v, _ := building.LoadOrStore(name, make(chan struct{}, 1))
	slot := v.(chan struct{})
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
