//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/wai-dev/wai/host/backend"
)

// installHint is how to get what building an image needs.
const installHint = "run as root on a Debian/Ubuntu machine with mmdebstrap installed " +
	"(apt-get install mmdebstrap debian-archive-keyring, or run scripts/setup-podman.sh), e.g. sudo wai image build PURPOSE"

// geteuid and lookPath are replaced by tests of canBuild's advice.
var (
	geteuid  = os.Geteuid
	lookPath = exec.LookPath
)

// canBuild checks that this process can run mmdebstrap: root (it chroots
// and creates device nodes) and the program itself.
func canBuild() error {
	if geteuid() != 0 {
		return backend.Errorf(backend.ErrPermission, "image build", "", "building an image needs root: %s", installHint)
	}
	if _, err := lookPath("mmdebstrap"); err != nil {
		return backend.Errorf(backend.ErrUnavailable, "image build", "", "mmdebstrap not found: %s", installHint)
	}
	return nil
}

// cancelGrace is how long a cancelled mmdebstrap may take to clean up.
const cancelGrace = 30 * time.Second

// mountsUnder lists the mount points below dir, deepest first.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	// mountinfo names real paths: resolve a TMPDIR behind a symlink.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

// unmountUnder detaches every mount below dir (a build's own chroot).
func unmountUnder(dir string) {
	for _, m := range mountsUnder(dir) {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
}

// removeBuildDir removes a build's directory unless something is still
// mounted under it (an mmdebstrap that could not clean up): removing then
// would descend into /proc or /sys of the chroot.
func removeBuildDir(dir string) error {
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		return backend.Errorf(backend.ErrUnavailable, "image build", dir, "cannot check mounts before removing: %v", err)
	}
	if m := mountsUnder(dir); len(m) > 0 {
		return backend.Errorf(backend.ErrUnavailable, "image build", dir,
			"%s is still mounted; unmount it (umount -R %s) and remove %s", m[0], m[0], dir)
	}
	return os.RemoveAll(dir)
}

// buildTempDir is where the root filesystem is written: /var/tmp (on disk,
// hundreds of MB) unless TMPDIR says otherwise.
func buildTempDir() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return os.TempDir()
}

// debootstrap runs mmdebstrap for r into dir/rootfs.tar, reporting its
// steps, and returns the tarball's path. A file, not a pipe: a failed run
// can never be imported half-written.
func debootstrap(ctx context.Context, r Recipe, mirror, dir string, say func(ProgressEvent)) (string, error) {
	if mirror == "" {
		mirror = debianMirror()
	}
	tarball := filepath.Join(dir, "rootfs.tar")
	cmd := exec.CommandContext(ctx, "mmdebstrap", mmdebstrapArgs(r, tarball, mirror)...)
	// Its chroot goes next to the tarball, on disk, not in a /tmp that may
	// be memory.
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	// Cancel with SIGTERM to mmdebstrap alone: it stops apt and dpkg
	// itself and tries to unmount /proc, /sys and /dev/* in its chroot
	// (SIGKILL only if it has not exited within cancelGrace). Whatever
	// it leaves mounted, unmountUnder takes down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = cancelGrace
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	say(ProgressEvent{Phase: PhaseBootstrap, Message: fmt.Sprintf("mmdebstrap %s %s with %d packages from %s",
		r.Suite, r.Variant, len(r.Packages), mirror)})
	if err := cmd.Start(); err != nil {
		return "", backend.Errorf(backend.ErrUnavailable, "image build", r.Purpose, "mmdebstrap: %v", err)
	}
	tail := scanSteps(stderr, say)
	err = cmd.Wait()
	// Its children may outlive it after a cancel: end the group, then
	// take down the chroot's mounts.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	unmountUnder(dir)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", backend.Errorf(backend.ErrUnavailable, "image build", r.Purpose,
			"mmdebstrap failed (%v); check that %s is reachable or set WAI_DEBIAN_MIRROR; its last lines:\n%s",
			err, mirror, strings.Join(tail, "\n"))
	}
	return tarball, nil
}

// mmdebstrapArgs are the arguments that build r into target.
func mmdebstrapArgs(r Recipe, target, mirror string) []string {
	return []string{"--variant=" + r.Variant,
		"--include=" + strings.Join(r.Packages, ","),
		`--aptopt=APT::Install-Recommends "false"`,
		// Apt lists and caches are dropped: the sandbox has no network
		// to install anything with.
		`--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*`,
		r.Suite, target, mirror}
}

// scanSteps reports mmdebstrap's "I: …" lines as progress and returns its
// last lines, for the error when it fails.
func scanSteps(r io.Reader, say func(ProgressEvent)) []string {
	const keep = 20
	var tail []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if tail = append(tail, line); len(tail) > keep {
			tail = tail[1:]
		}
		if msg, ok := strings.CutPrefix(line, "I: "); ok {
			say(ProgressEvent{Phase: PhaseBootstrap, Message: msg})
		}
	}
	return tail
}

// importRootfs streams the tarball to the service's images/import endpoint
// with the recipe's config and labels, tagged with the recipe's name, and
// returns the image ID.
func importRootfs(ctx context.Context, svc *service, r Recipe, tarball string, say func(ProgressEvent)) (string, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var total int64
	if fi, err := f.Stat(); err == nil {
		total = fi.Size()
	}
	cctx, err := svc.ctx(ctx)
	if err != nil {
		return "", err
	}
	name := r.ImageName()
	changes := append(append([]string(nil), r.Changes...),
		"LABEL "+labelRecipe+"="+r.Hash(), "LABEL "+labelPurpose+"="+r.Purpose)
	say(ProgressEvent{Phase: PhaseImport, Message: "importing " + name, Total: total})
	body := &countingReader{r: f, total: total, say: say}
	_, err = images.Import(cctx, body, new(images.ImportOptions).WithChanges(changes).
		WithReference(name).WithMessage("wai image build "+r.Purpose))
	if err != nil {
		return "", svc.wrap(ctx, "image import", name, err)
	}
	data, err := images.GetImage(cctx, name, nil)
	if err != nil {
		return "", svc.wrap(ctx, "image inspect", name, err)
	}
	if data.Labels[labelRecipe] != r.Hash() {
		return "", backend.Errorf(backend.ErrUnavailable, "image import", name,
			"the imported image lacks its %s label (got %q)", labelRecipe, data.Labels[labelRecipe])
	}
	// The import report's ID carries a "sha256:" prefix; inspect's does not,
	// and it is the one the rest of the API uses.
	return data.ID, nil
}

// countingReader reports import progress at every tenth of the tarball.
type countingReader struct {
	r          io.Reader
	n, total   int64
	lastTenths int64
	say        func(ProgressEvent)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.total > 0 {
		if t := c.n * 10 / c.total; t > c.lastTenths {
			c.lastTenths = t
			c.say(ProgressEvent{Phase: PhaseImport, Message: fmt.Sprintf("imported %d of %d MB", c.n>>20, c.total>>20),
				Current: c.n, Total: c.total})
		}
	}
	return n, err
}

var debianMirrorURL = regexp.MustCompile(`https?://[^ \t"]+/debian/?(\s|$)`)

// debianMirror is $WAI_DEBIAN_MIRROR, else the first Debian (not security)
// mirror apt's sources name, else deb.debian.org — as setup-podman.sh does.
func debianMirror() string {
	if m := os.Getenv("WAI_DEBIAN_MIRROR"); m != "" {
		return m
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	for _, p := range append([]string{"/etc/apt/sources.list"}, files...) {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, m := range debianMirrorURL.FindAllString(string(data), -1) {
			if m = strings.TrimSpace(m); !strings.Contains(m, "security") {
				return m
			}
		}
	}
	return "http://deb.debian.org/debian"
}
