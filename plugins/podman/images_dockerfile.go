//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/containers/buildah/define"
	"github.com/containers/podman/v5/pkg/bindings/images"
	"github.com/containers/podman/v5/pkg/domain/entities/types"

	"github.com/wai-dev/wai/host/backend"
)

const (
	// kindTryRepoImage labels the images try-repo builds from Dockerfiles.
	kindTryRepoImage  = "tryrepo-image"
	tryRepoRepoPrefix = "localhost/wai-tryrepo-"
	// dockerfileOutputCap bounds the build output kept for the result:
	// its first and last halves; the end is what says why a build failed.
	dockerfileOutputCap = 64 << 10
	// dockerfileErrorLines is how much of the output a failure quotes.
	dockerfileErrorLines = 12
)

// BuildsDockerfiles reports containers.build_dockerfiles.
func (b *Backend) BuildsDockerfiles() bool { return b.cfg.Containers.BuildDockerfiles }

// dockerfileTag is the image a source (URL and commit) builds into.
func dockerfileTag(key string) string {
	sum := sha256.Sum256([]byte(key))
	return tryRepoRepoPrefix + hex.EncodeToString(sum[:])[:16] + ":latest"
}

// BuildDockerfile builds req.ContextDir's Dockerfile through the Podman
// API: never pulling (a FROM that is not local fails at once rather than
// waiting on a registry), no network for RUN steps unless the backend
// allows egress, the containers' memory limit, labelled as wai's.
func (b *Backend) BuildDockerfile(ctx context.Context, owner backend.ContainerOwner, req backend.DockerfileBuild) (backend.DockerfileImage, error) {
	const op = "containers.create"
	if !b.cfg.Containers.BuildDockerfiles {
		return backend.DockerfileImage{}, backend.Errorf(backend.ErrPermission, op, req.ContextDir,
			"building Dockerfiles is off: set build_dockerfiles = true in [backends.podman.containers]")
	}
	dockerfile := filepath.Join(req.ContextDir, "Dockerfile")
	if fi, err := os.Lstat(dockerfile); err != nil || !fi.Mode().IsRegular() {
		return backend.DockerfileImage{}, backend.Errorf(backend.ErrInvalid, op, req.ContextDir, "no regular file Dockerfile at the top of the repository")
	}
	if err := b.guardDockerfile(ctx, owner, dockerfile); err != nil {
		return backend.DockerfileImage{}, err
	}
	cctx, err := b.svc.ctx(ctx)
	if err != nil {
		return backend.DockerfileImage{}, err
	}
	img := backend.DockerfileImage{Name: dockerfileTag(req.Key)}
	out := newBuildOutput(req.Progress)
	report, err := images.Build(cctx, []string{dockerfile}, b.dockerfileOptions(req.ContextDir, img.Name, owner, out))
	img.Output = out.String()
	// The bindings end a cancelled build without an error: ask ctx.
	if ctx.Err() != nil {
		b.removeFailedBuild(img.Name)
		return img, ctx.Err()
	}
	if err != nil || report == nil || report.ID == "" {
		b.removeFailedBuild(img.Name)
		msg := "the build failed"
		if err != nil {
			msg = strings.TrimSpace(err.Error())
		}
		return img, backend.Errorf(backend.ErrUnavailable, op, req.ContextDir, "building the Dockerfile: %s; its last lines:\n%s",
			msg, outputTail(img.Output, dockerfileErrorLines))
	}
	img.ID = report.ID
	if req.Progress != nil {
		req.Progress(backend.ImageProgress{Phase: "done", Message: img.Name})
	}
	return img, nil
}

func (b *Backend) dockerfileOptions(dir, tag string, owner backend.ContainerOwner, out *buildOutput) types.BuildOptions {
	var o types.BuildOptions
	o.ContextDirectory = dir
	o.Output = tag
	o.Labels = []string{labelManaged + "=true", labelKind + "=" + kindTryRepoImage, labelUser + "=" + owner.User}
	o.PullPolicy = define.PullNever
	o.ConfigureNetwork = define.NetworkDisabled
	if b.cfg.Containers.AllowNetworkEgress {
		o.ConfigureNetwork = define.NetworkEnabled
	}
	o.CommonBuildOpts = &define.CommonBuildOptions{Memory: b.cfg.Containers.memoryBytes}
	o.RemoveIntermediateCtrs, o.ForceRmIntermediateCtrs = true, true
	o.Out, o.Err, o.ReportWriter = out, out, out
	return o
}

// removeFailedBuild removes a tag a failed or cancelled build may have
// left (never a half-made image to run).
func (b *Backend) removeFailedBuild(tag string) {
	cctx, err := b.svc.ctx(context.Background())
	if err != nil {
		return
	}
	if ok, err := images.Exists(cctx, tag, nil); err == nil && ok {
		_, _ = images.Remove(cctx, []string{tag}, nil)
	}
}

// buildOutput keeps a build's output within dockerfileOutputCap, as
// every command's output is kept (its start and its end, which says why a
// build failed, with a marker where the middle was cut), and reports its
// STEP lines as progress.
type buildOutput struct {
	*backend.OutputBuffer
	say func(backend.ImageProgress)
}

func newBuildOutput(say func(backend.ImageProgress)) *buildOutput {
	return &buildOutput{OutputBuffer: backend.NewOutputBuffer(dockerfileOutputCap), say: say}
}

func (w *buildOutput) Write(p []byte) (int, error) {
	if w.say != nil {
		for _, line := range strings.Split(string(p), "\n") {
			if strings.HasPrefix(line, "STEP ") {
				w.say(backend.ImageProgress{Phase: "build", Message: strings.TrimSpace(line)})
			}
		}
	}
	return w.OutputBuffer.Write(p)
}

// outputTail is the last n non-empty lines of s.
func outputTail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Interface guards
var _ backend.DockerfileBuilder = (*Backend)(nil)
