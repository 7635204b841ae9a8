package podman

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wai-dev/wai/host/backend"
)

// A size-limited workspace is an ext4 file system in a sparse image file
// (<session>.ext4 in the @state directory next to the workspace), loop-
// mounted on the workspace directory, which the container bind-mounts as
// before. The kernel enforces the size: a write past it fails with ENOSPC
// in the container and on the host alike. RATIONALE.md says why this and
// not a project quota.
const imageSuffix = ".ext4"

// mountOptions: nothing on a workspace can be a device or gain privileges.
const mountOptions = "loop,nosuid,nodev,noatime"

// volumeTools finds mkfs.ext4 and mount. wai may run with a PATH that
// lacks the sbin directories, where Debian puts mkfs.ext4.
func volumeTools() (mkfs, mount string, err error) {
	find := func(name string) (string, error) {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
		return "", fmt.Errorf("%s is not installed", name)
	}
	if mkfs, err = find("mkfs.ext4"); err != nil {
		return "", "", err
	}
	if mount, err = find("mount"); err != nil {
		return "", "", err
	}
	return mkfs, mount, nil
}

// checkVolumeSupport fails closed, with the way out, when workspace_size
// cannot be enforced here.
func checkVolumeSupport(size int64) error {
	why := ""
	if os.Geteuid() != 0 {
		why = "only root can loop-mount the per-session file system that enforces it (run wai as root, next to a rootful Podman service)"
	} else if _, _, err := volumeTools(); err != nil {
		why = err.Error() + " (apt-get install e2fsprogs mount)"
	} else if _, err := os.Stat("/dev/loop-control"); err != nil {
		why = "this kernel offers no loop devices (/dev/loop-control is missing; `modprobe loop`)"
	}
	if why == "" {
		return nil
	}
	return backend.Errorf(backend.ErrUnavailable, "open", "",
		"backend podman: workspace_size %s cannot be enforced: %s. Or set workspace_size = \"0\" in [backends.podman] to run without a size limit on /workspace",
		formatBytes(size), why)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// attachVolume makes sure dir is the mount of image, a file system of
// size bytes: it creates and formats the image when there is none, and
// mounts it unless it is mounted already (as a kept session's workspace
// stays mounted while its container may run). owner gets the file
// system's root. created reports a new, empty file system.
func attachVolume(ctx context.Context, dir, image string, size int64, owner *ownerIDs) (created bool, err error) {
	if src, ok, err := mountedImage(dir); err != nil {
		return false, err
	} else if ok {
		if src != realPath(image) {
			return false, backend.Errorf(backend.ErrUnavailable, "open", dir,
				"the workspace directory is a mount of %s, not of the session's image %s: unmount it (`umount %s`)", src, image, dir)
		}
		return false, nil
	}
	if _, err := os.Stat(image); errors.Is(err, os.ErrNotExist) {
		if empty, err := isEmptyDir(dir); err != nil || !empty {
			// A workspace made without a size limit: mounting over it
			// would hide its files.
			return false, backend.Errorf(backend.ErrUnavailable, "open", dir,
				"this kept session's workspace was made without workspace_size and holds files: "+
					"open it with workspace_size = \"0\" in [backends.podman], or remove the session (wai gc --all) to start it again with a limit")
		}
		if err := makeImage(ctx, image, size, owner); err != nil {
			return false, err
		}
		created = true
	} else if err != nil {
		return false, backend.Errorf(backend.ErrUnavailable, "open", image, "cannot read the workspace image: %v", err)
	}
	_, mount, err := volumeTools()
	if err != nil {
		return false, backend.Errorf(backend.ErrUnavailable, "open", image, "%v (apt-get install mount)", err)
	}
	out, err := exec.CommandContext(ctx, mount, "-t", "ext4", "-o", mountOptions, image, dir).CombinedOutput()
	if err != nil {
		if created {
			os.Remove(image)
		}
		return false, backend.Errorf(backend.ErrUnavailable, "open", dir,
			"cannot loop-mount the workspace image %s: %v: %s", image, err, strings.TrimSpace(string(out)))
	}
	if created {
		// mkfs made lost+found; a fresh workspace starts empty (e2fsck
		// makes it again when it needs one).
		_ = os.Remove(filepath.Join(dir, "lost+found"))
	}
	return created, nil
}

// makeImage creates the sparse image file and formats it.
func makeImage(ctx context.Context, image string, size int64, owner *ownerIDs) error {
	fail := func(format string, args ...any) error {
		os.Remove(image)
		return backend.Errorf(backend.ErrUnavailable, "open", image, "cannot make the workspace image: "+format, args...)
	}
	if err := os.MkdirAll(filepath.Dir(image), 0o700); err != nil {
		return fail("%v", err)
	}
	f, err := os.OpenFile(image, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return backend.Errorf(backend.ErrUnavailable, "open", image, "cannot make the workspace image: %v", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail("%v", err)
	}
	mkfs, _, err := volumeTools()
	if err != nil {
		return fail("%v (apt-get install e2fsprogs)", err)
	}
	// -m 0: no blocks reserved for root, the container user gets all of
	// it. root_owner: the workspace root belongs to the container user.
	ext := "lazy_itable_init=1,lazy_journal_init=1"
	if owner != nil {
		ext += fmt.Sprintf(",root_owner=%d:%d", owner.uid, owner.gid)
	}
	out, err := exec.CommandContext(ctx, mkfs, "-q", "-F", "-m", "0", "-E", ext, image).CombinedOutput()
	if err != nil {
		return fail("mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// mountedImage reports whether dir is a mount point and, if it is a loop
// mount, the file behind it.
func mountedImage(dir string) (string, bool, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var st, pst unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return "", false, nil
		}
		return "", false, err
	}
	if err := unix.Lstat(filepath.Dir(dir), &pst); err != nil {
		return "", false, err
	}
	if st.Dev == pst.Dev {
		return "", false, nil
	}
	// A mount point: find what is mounted there.
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", true, err
	}
	defer f.Close()
	source := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superopts
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || unescapeMount(fields[4]) != dir {
			continue
		}
		for i, fl := range fields {
			if fl == "-" && i+2 < len(fields) {
				source = unescapeMount(fields[i+2]) // the last mount on dir wins
			}
		}
	}
	if dev, ok := strings.CutPrefix(source, "/dev/"); ok && strings.HasPrefix(dev, "loop") {
		b, err := os.ReadFile("/sys/block/" + dev + "/loop/backing_file")
		if err == nil {
			return strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)"), true, nil
		}
	}
	return source, true, nil
}

// unescapeMount undoes the octal escapes of /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// detachVolume unmounts dir if the session's image is mounted there and
// removes the image. A busy mount (a host process inside it) is detached
// lazily: it goes once the last user leaves.
func detachVolume(dir, image string) error {
	var errs []error
	if src, ok, err := mountedImage(dir); err != nil {
		errs = append(errs, err)
	} else if ok && src == realPath(image) {
		if err := unix.Unmount(dir, 0); err != nil {
			if !errors.Is(err, syscall.EBUSY) {
				errs = append(errs, fmt.Errorf("unmounting workspace %s: %w", dir, err))
			} else if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmounting workspace %s: %w", dir, err))
			}
		}
	} else if ok {
		errs = append(errs, fmt.Errorf("workspace %s is a mount of %s, not of %s: left alone", dir, src, image))
	}
	if len(errs) == 0 {
		if err := os.Remove(image); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// realPath resolves the symlinks of p, as the kernel reports paths; p
// itself when that fails.
func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil, nil
}
