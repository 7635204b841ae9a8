package podman

import (
	"encoding/json"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// ParseConfig decodes the backend's raw config over the defaults, rejects
// unknown keys and bad values (backend.ErrInvalid), and resolves the service
// URL and the workspace directory (under stateDir unless set).
func ParseConfig(raw json.RawMessage, stateDir string) (Config, error) {
	c := DefaultConfig()
	c.Image = ""
	if err := backend.DecodeConfig("podman", raw, &c); err != nil {
		return Config{}, err
	}
	if c.Image == "" {
		c.Image, c.imageDefault = DefaultImage, true
	}
	if err := c.resolve(stateDir); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) resolve(stateDir string) error {
	for _, step := range []func() error{
		c.resolveService,
		c.resolveResources,
		c.resolveTimers,
		c.checkEnv,
		c.checkMounts,
		c.Containers.resolve,
		func() error { return c.resolveWorkspace(stateDir) },
		c.resolveWorkspaceMode,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// invalid is a configuration error of the backend's table.
func invalid(format string, args ...any) error {
	return backend.Errorf(backend.ErrInvalid, "config", "", "backend podman: "+format, args...)
}

// resolveService checks where the service is and what it runs: url,
// image, name_prefix, user and network.
func (c *Config) resolveService() error {
	if c.URL == "" {
		c.URL = DefaultURL()
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return invalid("url %q is not a URL: %v", c.URL, err)
	}
	switch u.Scheme {
	case "unix", "ssh", "tcp":
	default:
		return invalid("url %q: the scheme must be unix://, ssh:// or tcp://", c.URL)
	}
	if c.Image == "" || strings.ContainsAny(c.Image, " \t\n") {
		return invalid("image %q: name an image, like %s", c.Image, DefaultImage)
	}
	if !validPrefix(c.NamePrefix) {
		return invalid("name_prefix %q: use 1–32 letters, digits, '_', '-' or '.', starting with a letter or digit", c.NamePrefix)
	}
	if !validUser(c.User) {
		return invalid("user %q: write it as UID:GID with numbers, like %s (a name may not exist in every image)", c.User, DefaultUser)
	}
	switch c.Network {
	case "none", "bridge", "private", "slirp4netns", "pasta":
	case "host":
		return invalid("network \"host\" would give commands the host's network stack: use \"none\" or \"bridge\"")
	default:
		return invalid("network %q: use \"none\" (default), \"bridge\", \"private\", \"slirp4netns\" or \"pasta\"", c.Network)
	}
	return nil
}

// resolveResources parses and bounds the container's resources: memory,
// tmpfs_size, cpus, pids_limit, nofile and nproc.
func (c *Config) resolveResources() error {
	var err error
	if c.memoryBytes, err = parseBytes(c.Memory); err != nil || c.memoryBytes < 16<<20 {
		return invalid("memory %q: give a size of at least 16m, like \"512m\" or \"1g\"", c.Memory)
	}
	if c.tmpfsBytes, err = parseBytes(c.TmpfsSize); err != nil || c.tmpfsBytes < 1<<20 {
		return invalid("tmpfs_size %q: give a size of at least 1m, like \"64m\"", c.TmpfsSize)
	}
	if math.IsNaN(c.CPUs) || c.CPUs < 0.01 || c.CPUs > 1024 {
		return invalid("cpus %v: give a number of CPUs between 0.01 and 1024", c.CPUs)
	}
	if c.PidsLimit < 16 {
		return invalid("pids_limit %d: at least 16 (the init, the sleeper, a shell and its pipeline need some)", c.PidsLimit)
	}
	if c.Nofile < 64 {
		return invalid("nofile %d: at least 64", c.Nofile)
	}
	if hard, ok := hostHardLimit("Max open files"); ok && c.Nofile > hard {
		return invalid("nofile %d is above this host's hard limit %d (`ulimit -Hn`): a container cannot get more than the service has", c.Nofile, hard)
	}
	if c.Nproc == 0 {
		c.Nproc = defaultNproc()
	} else if hard, ok := hostHardLimit("Max processes"); ok && c.Nproc > hard {
		// Checked here rather than left to the start, which fails with
		// runc's bare "error setting rlimit type 6" long after the config
		// was read.
		return invalid("nproc %d is above this host's hard limit %d (`ulimit -Hu`): a container cannot get more than the service has; leave nproc unset for the highest that works", c.Nproc, hard)
	}
	return nil
}

// resolveTimers checks the durations and defaults pull_backoff.
func (c *Config) resolveTimers() error {
	for _, d := range []struct {
		name string
		v    Duration
	}{{"idle_timeout", c.IdleTimeout}, {"max_uptime", c.MaxUptime}, {"kill_grace", c.KillGrace}, {"pull_backoff", c.PullBackoff}, {"pull_backoff_max", c.PullBackoffMax}} {
		if d.v < 0 {
			return invalid("%s must not be negative, got %s", d.name, time.Duration(d.v))
		}
	}
	if c.AgentPath != "" && !filepath.IsAbs(c.AgentPath) {
		return invalid("agent_path %q: give an absolute path to a wai-agent binary", c.AgentPath)
	}
	if c.KillGrace > Duration(time.Minute) {
		return invalid("kill_grace %s: at most 1m", time.Duration(c.KillGrace))
	}
	if c.PullBackoff == 0 {
		c.PullBackoff = Duration(time.Second)
	}
	if c.PullBackoffMax < c.PullBackoff {
		return invalid("pull_backoff_max (%s) must not be below pull_backoff (%s)", time.Duration(c.PullBackoffMax), time.Duration(c.PullBackoff))
	}
	return nil
}

func (c *Config) checkEnv() error {
	for k, v := range c.Env {
		if !backend.ValidEnvName(k) || k == markerVar {
			return invalid("env %q: names are [A-Za-z_][A-Za-z0-9_]*, and %s is reserved", k, markerVar)
		}
		if strings.ContainsAny(v, "\x00") {
			return invalid("env %s: the value contains a NUL byte", k)
		}
	}
	return nil
}

func (c *Config) checkMounts() error {
	bad := func(format string, args ...any) error {
		return backend.Errorf(backend.ErrInvalid, "config", "", "backend podman: "+format, args...)
	}
	if len(c.HostMounts) > 0 && len(c.AllowedHostRoots) == 0 {
		return bad("host_mounts need allowed_host_roots: list the host directories mounts may copy from")
	}
	for i, r := range c.AllowedHostRoots {
		if !filepath.IsAbs(r) {
			return bad("allowed_host_roots[%d] %q must be an absolute path", i, r)
		}
	}
	for i := range c.HostMounts {
		m := &c.HostMounts[i]
		if !filepath.IsAbs(m.HostPath) {
			return bad("host_mounts[%d].host_path %q must be an absolute path", i, m.HostPath)
		}
		mp := strings.TrimPrefix(strings.TrimPrefix(m.MountPath, ContainerWorkspace), "/")
		clean := path.Clean("/" + mp)[1:]
		if mp == "" || clean == "" || clean != strings.TrimSuffix(mp, "/") || strings.HasPrefix(clean, "..") {
			return bad("host_mounts[%d].mount_path %q must be a path inside the workspace without . or .. elements, like \"src\"", i, m.MountPath)
		}
		m.MountPath = clean
		for _, g := range append(append([]string{}, m.Include...), m.Exclude...) {
			if _, err := path.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
				return bad("host_mounts[%d]: bad glob %q: %v", i, g, err)
			}
		}
		if m.MaxBytes < 0 {
			return bad("host_mounts[%d].max_bytes must not be negative", i)
		}
		if m.MaxBytes == 0 {
			m.MaxBytes = defaultMountBytes
		}
	}
	return nil
}
