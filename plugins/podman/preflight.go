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
	add := func(name string, st CheckStatus, detail, fix string) {
		checks = append(checks, Check{Name: name, Status: st, Detail: detail, Fix: fix})
	}
	local := strings.HasPrefix(cfg.URL, "unix://")

	if p, err := exec.LookPath("podman"); err != nil {
		st := CheckWarn
		if local {
			st = CheckFail
		}
		add("podman installed", st, "podman is not on PATH", setupFix+"; or apt-get install podman runc catatonit")
	} else {
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := exec.CommandContext(vctx, p, "--version").Output()
		cancel()
		if err != nil {
			add("podman installed", CheckWarn, fmt.Sprintf("%s --version failed: %v", p, err), "reinstall podman: apt-get install --reinstall podman")
		} else {
			add("podman installed", CheckOK, strings.TrimSpace(string(out))+" ("+p+")", "")
		}
	}

	svc := newService(cfg.URL, cfg.Identity)
	defer svc.drop()
	cctx, err := svc.ctx(ctx)
	if err != nil {
		add("service reachable", CheckFail, err.Error(),
			setupFix+"; or start one: podman system service --time=0 "+svc.urlForHint()+" &")
		return checks
	}
	add("service reachable", CheckOK, cfg.URL, "")

	ver := svc.apiVersion()
	if major, _ := strconv.Atoi(strings.SplitN(ver, ".", 2)[0]); major < 4 {
		add("API version", CheckFail, "service API "+ver+"; wai needs 4.0 or later", "upgrade podman on the service's host to 4.x or 5.x")
	} else {
		add("API version", CheckOK, "service API "+ver+" (bindings v5.8.0)", "")
	}

	info, err := system.Info(cctx, nil)
	runtimeOK := false
	switch {
	case err != nil:
		add("OCI runtime", CheckFail, "podman info failed: "+err.Error(), "run `podman info` on the service's host to see why")
	default:
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
		detail := fmt.Sprintf("service default %s (%s); wai uses %s; cgroups %s", name, version, use, cg)
		if use == "crun" && cg == "v1" {
			add("OCI runtime", CheckFail, detail+": crun cannot run containers on cgroup v1 or hybrid hosts",
				// The service's own default is what counts: Podman 4.3
				// services ignore a container spec's runtime.
				setupFix+`, which pins runc for the service (runtime = "runc" under [engine] in a containers.conf drop-in), then restart the service`)
		} else {
			runtimeOK = true
			add("OCI runtime", CheckOK, detail, "")
		}
	}

	imageOK := false
	if cfg.imageDefault && localImagePresent(cctx) {
		imageOK = true
		add("image present", CheckOK, "no image is configured, so "+LocalImage+" (built by scripts/setup-podman.sh) is used", "")
	} else if ok, err := images.Exists(cctx, cfg.Image, nil); err != nil {
		add("image present", CheckFail, err.Error(), "check the service")
	} else if !ok {
		add("image present", CheckFail, cfg.Image+" is not in the service's image store (wai pulls it on first use, which needs a reachable registry)",
			setupFix+`, then set image = "localhost/wai-python:bookworm" in [backends.podman]; or podman pull `+cfg.Image)
	} else {
		imageOK = true
		add("image present", CheckOK, cfg.Image, "")
	}

	disk := []string{cfg.WorkspaceDir}
	if local && info != nil && info.Store != nil && info.Store.GraphRoot != "" {
		disk = append(disk, info.Store.GraphRoot)
	}
	for _, d := range disk {
		free, err := freeBytes(d)
		name := "disk space " + d
		switch {
		case err != nil:
			add(name, CheckWarn, err.Error(), "make sure the directory's file system is mounted")
		case free < 512<<20:
			add(name, CheckFail, fmt.Sprintf("%s free", human(free)), "free space there: at least 512 MiB, better 2 GiB (wai gc removes leftover workspaces)")
		case free < 2<<30:
			add(name, CheckWarn, fmt.Sprintf("%s free", human(free)), "free space there: 2 GiB or more is comfortable (wai gc removes leftover workspaces)")
		default:
			add(name, CheckOK, fmt.Sprintf("%s free", human(free)), "")
		}
	}

	if runtimeOK && imageOK {
		checks = append(checks, sandboxCheck(ctx, cfg))
		if !local {
			checks = append(checks, sharedWorkspaceCheck(ctx, cfg))
		}
	}
	return checks
}

// sandboxCheck runs `id -u` in a throwaway session: create, start, health
// check, exec, remove — the whole path, with the real hardening.
func sandboxCheck(ctx context.Context, cfg Config) Check {
	c := Check{Name: "hardened container runs"}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cfg.IdleTimeout, cfg.MaxUptime = 0, 0
	b, err := newBackend(ctx, cfg, backend.Options{})
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), setupFix
		return c
	}
	defer b.Close(context.WithoutCancel(ctx))
	t0 := time.Now()
	ws, err := b.Open(ctx, backend.WorkspaceSpec{Session: "preflight-" + newID()})
	if err == nil {
		defer ws.Close(context.WithoutCancel(ctx))
		var res backend.ExecResult
		res, err = ws.Shell().Execute(ctx, backend.ExecRequest{Shell: "id -u; touch /workspace/.w && echo writable; touch /etc/.w 2>/dev/null || echo ro"})
		uid, _ := cfg.uidGID()
		want := fmt.Sprintf("%d\nwritable\nro\n", uid)
		if err == nil && res.Stdout != want {
			err = fmt.Errorf("the test command printed %q (stderr %q), want %q", res.Stdout, res.Stderr, want)
		}
	}
	if err != nil {
		c.Status, c.Detail = CheckFail, err.Error()
		c.Fix = "see the message; scripts/setup-podman.sh verifies the same hardened run and explains the known host quirks (runc, rlimits)"
		return c
	}
	c.Status = CheckOK
	c.Detail = fmt.Sprintf("user %s, read-only root, writable /workspace; new session to first result in %s", cfg.User, time.Since(t0).Round(time.Millisecond))
	return c
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

// Interface guards
var _ backend.Lifecycle = (*Workspace)(nil)
