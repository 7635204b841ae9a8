//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/bindings/images"
	"github.com/containers/podman/v5/pkg/bindings/system"

	"github.com/wai-dev/wai/host/backend"
)

const setupFix = "as root: scripts/setup-podman.sh (installs podman, runc and catatonit, starts the service, builds the local image)"

// Preflight checks, in order, what the backend needs: the podman program,
// a service that answers, its API version, an OCI runtime that works on
// this host's cgroups, the image, disk space, and finally a hardened
// container actually starting and running a command. Each check that does
// not pass says how to fix it; checks that depend on a failed one are not
// run.
func Preflight(ctx context.Context, cfg Config) []Check {
	var checks []Check
	add := func(c Check) { checks = append(checks, c) }
	local := strings.HasPrefix(cfg.URL, "unix://")
	add(podmanInstalledCheck(ctx, local))

	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	cctx, err := svc.ctx(ctx)
	if err != nil {
		add(Check{Name: "service reachable", Status: CheckFail, Detail: err.Error(),
			Fix: setupFix + "; or start one: podman system service --time=0 " + svc.urlForHint() + " &"})
		return checks
	}
	add(Check{Name: "service reachable", Status: CheckOK, Detail: cfg.URL})
	add(apiVersionCheck(svc.apiVersion()))

	info, err := system.Info(cctx, nil)
	runtime := runtimeCheck(cfg, info, err)
	add(runtime)
	image := imageCheck(cctx, cfg)
	add(image)
	disk := []string{cfg.WorkspaceDir}
	if local && info != nil && info.Store != nil && info.Store.GraphRoot != "" {
		disk = append(disk, info.Store.GraphRoot)
	}
	for _, d := range disk {
		add(diskCheck(d))
	}
	if runtime.Status == CheckOK && image.Status == CheckOK {
		add(sandboxCheck(ctx, cfg))
		if cfg.volumeMode() {
			add(volumeWorkspaceCheck(ctx, cfg))
		} else if !local {
			add(sharedWorkspaceCheck(ctx, cfg))
		}
	}
	return checks
}

// podmanInstalledCheck finds the podman program: needed on this machine
// when the service is local, a convenience otherwise.
func podmanInstalledCheck(ctx context.Context, local bool) Check {
	c := Check{Name: "podman installed"}
	p, err := exec.LookPath("podman")
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckWarn, "podman is not on PATH", setupFix+"; or apt-get install podman runc catatonit"
		if local {
			c.Status = CheckFail
		}
		return c
	}
	vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(vctx, p, "--version").Output()
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckWarn, fmt.Sprintf("%s --version failed: %v", p, err), "reinstall podman: apt-get install --reinstall podman"
		return c
	}
	c.Status, c.Detail = CheckOK, strings.TrimSpace(string(out))+" ("+p+")"
	return c
}

func apiVersionCheck(ver string) Check {
	if major, _ := strconv.Atoi(strings.SplitN(ver, ".", 2)[0]); major < 4 {
		return Check{Name: "API version", Status: CheckFail, Detail: "service API " + ver + "; wai needs 4.0 or later",
			Fix: "upgrade podman on the service's host to 4.x or 5.x"}
	}
	return Check{Name: "API version", Status: CheckOK, Detail: "service API " + ver + " (bindings v5.8.0)"}
}

// runtimeCheck judges the OCI runtime wai will use against the host's
// cgroups, from the service's info (or the error getting it).
func runtimeCheck(cfg Config, info *define.Info, err error) Check {
	c := Check{Name: "OCI runtime"}
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, "podman info failed: "+err.Error(), "run `podman info` on the service's host to see why"
		return c
	}
	name, version, cg := "?", "", ""
	if info.Host != nil {
		cg = info.Host.CgroupsVersion
		if info.Host.OCIRuntime != nil {
			name, version = info.Host.OCIRuntime.Name, firstLine(info.Host.OCIRuntime.Version)
		}
	}
	use := cfg.Runtime
	if use == "" {
		use = name
	}
	c.Detail = fmt.Sprintf("service default %s (%s); wai uses %s; cgroups %s", name, version, use, cg)
	if use == "crun" && cg == "v1" {
		c.Status, c.Detail = CheckFail, c.Detail+": crun cannot run containers on cgroup v1 or hybrid hosts"
		// The service's own default is what counts: Podman 4.3 services
		// ignore a container spec's runtime.
		c.Fix = setupFix + `, which pins runc for the service (runtime = "runc" under [engine] in a containers.conf drop-in), then restart the service`
		return c
	}
	c.Status = CheckOK
	return c
}

func imageCheck(cctx context.Context, cfg Config) Check {
	c := Check{Name: "image present"}
	if cfg.imageDefault && localImagePresent(cctx) {
		c.Status, c.Detail = CheckOK, "no image is configured, so "+LocalImage+" (built by scripts/setup-podman.sh) is used"
		return c
	}
	ok, err := images.Exists(cctx, cfg.Image, nil)
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), "check the service"
	case !ok:
		c.Status = CheckFail
		c.Detail = cfg.Image + " is not in the service's image store (wai pulls it on first use, which needs a reachable registry)"
		c.Fix = setupFix + `, then set image = "localhost/wai-python:bookworm" in [backends.podman]; or podman pull ` + cfg.Image
	default:
		c.Status, c.Detail = CheckOK, cfg.Image
	}
	return c
}

func diskCheck(dir string) Check {
	c := Check{Name: "disk space " + dir}
	free, err := freeBytes(dir)
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = CheckWarn, err.Error(), "make sure the directory's file system is mounted"
	case free < 512<<20:
		c.Status, c.Detail, c.Fix = CheckFail, fmt.Sprintf("%s free", human(free)), "free space there: at least 512 MiB, better 2 GiB (wai gc removes leftover workspaces)"
	case free < 2<<30:
		c.Status, c.Detail, c.Fix = CheckWarn, fmt.Sprintf("%s free", human(free)), "free space there: 2 GiB or more is comfortable (wai gc removes leftover workspaces)"
	default:
		c.Status, c.Detail = CheckOK, fmt.Sprintf("%s free", human(free))
	}
	return c
}

// sandboxCheck runs `id -u` in a throwaway session: create, start, health
// check, exec, remove — the whole path, with the real hardening.
func sandboxCheck(ctx context.Context, cfg Config) Check {
	c := Check{Name: "hardened container runs"}
	fix := "see the message; scripts/setup-podman.sh verifies the same hardened run and explains the known host quirks (runc, rlimits)"
	return inThrowawaySession(ctx, cfg, c, setupFix, fix, func(ctx context.Context, ws backend.Workspace, t0 time.Time) Check {
		res, err := ws.Shell().Execute(ctx, backend.ExecRequest{Shell: "id -u; touch /workspace/.w && echo writable; touch /etc/.w 2>/dev/null || echo ro"})
		uid, _ := cfg.uidGID()
		want := fmt.Sprintf("%d\nwritable\nro\n", uid)
		if err == nil && res.Stdout != want {
			err = fmt.Errorf("the test command printed %q (stderr %q), want %q", res.Stdout, res.Stderr, want)
		}
		if err != nil {
			c.Status, c.Detail, c.Fix = CheckFail, err.Error(), fix
			return c
		}
		c.Status = CheckOK
		c.Detail = fmt.Sprintf("user %s, read-only root, writable /workspace; new session to first result in %s", cfg.User, time.Since(t0).Round(time.Millisecond))
		return c
	})
}

// inThrowawaySession runs check in a new session of cfg (no reaping,
// within two minutes) and removes the session and its backend after. A
// backend that cannot be made fails c with newFix, a session that cannot
// be opened with openFix. check gets the time Open was called.
func inThrowawaySession(ctx context.Context, cfg Config, c Check, newFix, openFix string,
	check func(ctx context.Context, ws backend.Workspace, opened time.Time) Check) Check {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cfg.IdleTimeout, cfg.MaxUptime = 0, 0
	b, err := newBackend(ctx, cfg, backend.Options{})
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), newFix
		return c
	}
	defer b.Close(context.WithoutCancel(ctx))
	t0 := time.Now()
	ws, err := b.Open(ctx, backend.WorkspaceSpec{Session: "preflight-" + newID()})
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), openFix
		return c
	}
	defer ws.Close(context.WithoutCancel(ctx))
	return check(ctx, ws, t0)
}

// freeBytes is the space available to unprivileged users where dir is (or
// would be).
func freeBytes(dir string) (uint64, error) {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			return st.Bavail * uint64(st.Bsize), nil
		} else if !os.IsNotExist(err) || d == "/" {
			return 0, err
		}
	}
}

func human(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", n>>20)
	}
}

func localImagePresent(cctx context.Context) bool {
	ok, err := images.Exists(cctx, LocalImage, nil)
	return err == nil && ok
}
