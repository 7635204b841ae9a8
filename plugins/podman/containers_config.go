package podman

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// ContainersConfig is [backends.podman.containers]: the containers an
// agent manages (backend.Containers). Every key is optional.
type ContainersConfig struct {
	// Image a create without one runs. Default: the backend's image
	// (localhost/wai-python:bookworm when present).
	Image string `json:"image"`
	// Memory limit of each container, swap included. Default "4g".
	Memory string `json:"memory"`
	// PidsLimit caps each container's processes. Default 256.
	PidsLimit int64 `json:"pids_limit"`
	// CPUs each container may use. Default 2.
	CPUs float64 `json:"cpus"`
	// AllowWriteMounts lets a create mount host paths writable; without
	// it every mount is read-only whatever the request says. The session
	// workspace (mount_cwd) is always writable: it is the agent's own.
	AllowWriteMounts bool `json:"allow_write_mounts"`
	// MaxCopyBytes caps one copy_in or copy_out. Default "256m".
	MaxCopyBytes string `json:"max_copy_bytes"`
	// MaxExecTimeout is the longest timeout an exec may ask for. Default
	// "1h"; an exec without one gets 300 s.
	MaxExecTimeout Duration `json:"max_exec_timeout"`
	// EnvPatterns are the host variables env_passthrough "auto" passes
	// (fnmatch globs). Default none: host credentials reach a container
	// only when the operator lists them here (wai's own WAI_* never).
	EnvPatterns []string `json:"env_patterns"`
	// CDISpecDirs are where a gpu create and preflight look for the
	// NVIDIA CDI spec, on the machine of a unix:// service. Default
	// DefaultCDISpecDirs (/etc/cdi, /var/run/cdi), as Podman.
	CDISpecDirs []string `json:"cdi_spec_dirs"`
	// MaxSnapshots caps each user's snapshots: each is an image of up to
	// the container's size, kept until deleted. Default 20.
	MaxSnapshots int `json:"max_snapshots"`
	// BuildImages lets a create whose purpose image is missing build it
	// (minutes, as root, from the Debian mirror) instead of failing with
	// the `wai image build PURPOSE` to run. Default false.
	BuildImages bool `json:"build_images"`
	// AllowNetworkEgress lets a managed container reach outside: a create
	// with network = "bridge" (Podman's network, with a route out) and a
	// create_network with egress = true. Without it a create gets no
	// network unless it names an internal one create_network made: its
	// containers reach each other, nothing else.
	AllowNetworkEgress bool `json:"allow_network_egress"`
	// BuildDockerfiles lets a try-repo create build a repository's
	// top-level Dockerfile (no pulls; RUN steps get a network only with
	// allow_network_egress) instead of running the general image.
	// Default false: a build runs the repository's code.
	BuildDockerfiles bool `json:"build_dockerfiles"`

	memoryBytes int64
	copyBytes   int64
}

// Defaults of the managed containers.
const (
	defaultContainerMemory = "4g"
	defaultContainerCPUs   = 2
	defaultCopyBytes       = "256m"
	defaultExecTimeout     = 300 * time.Second
	defaultMaxExecTimeout  = time.Hour
	defaultMaxSnapshots    = 20
)

func (c *ContainersConfig) resolve() error {
	bad := func(format string, args ...any) error {
		return backend.Errorf(backend.ErrInvalid, "config", "", "backend podman: containers."+format, args...)
	}
	if c.Memory == "" {
		c.Memory = defaultContainerMemory
	}
	if c.PidsLimit == 0 {
		c.PidsLimit = defaultPids
	}
	if c.CPUs == 0 {
		c.CPUs = defaultContainerCPUs
	}
	if c.MaxCopyBytes == "" {
		c.MaxCopyBytes = defaultCopyBytes
	}
	if c.MaxExecTimeout == 0 {
		c.MaxExecTimeout = Duration(defaultMaxExecTimeout)
	}
	var err error
	if c.memoryBytes, err = parseBytes(c.Memory); err != nil || c.memoryBytes < 16<<20 {
		return bad("memory %q: give a size of at least 16m, like \"4g\"", c.Memory)
	}
	if c.copyBytes, err = parseBytes(c.MaxCopyBytes); err != nil || c.copyBytes < 1 {
		return bad("max_copy_bytes %q: give a size, like \"256m\"", c.MaxCopyBytes)
	}
	if c.PidsLimit < 16 {
		return bad("pids_limit %d: at least 16", c.PidsLimit)
	}
	if c.CPUs < 0.01 || c.CPUs > 1024 {
		return bad("cpus %v: between 0.01 and 1024", c.CPUs)
	}
	if c.MaxExecTimeout < Duration(time.Second) {
		return bad("max_exec_timeout %s: at least 1s", time.Duration(c.MaxExecTimeout))
	}
	if len(c.EnvPatterns) == 0 {
		c.EnvPatterns = nil // auto passes nothing
	} else {
		if err := backend.ValidEnvPatterns(c.EnvPatterns); err != nil {
			return bad("env_patterns: %v", err)
		}
	}
	if c.MaxSnapshots == 0 {
		c.MaxSnapshots = defaultMaxSnapshots
	}
	if c.MaxSnapshots < 0 {
		return bad("max_snapshots %d: at least 1", c.MaxSnapshots)
	}
	if len(c.CDISpecDirs) == 0 {
		c.CDISpecDirs = DefaultCDISpecDirs
	}
	for _, d := range c.CDISpecDirs {
		if !filepath.IsAbs(d) {
			return bad("cdi_spec_dirs %q: give absolute directories", d)
		}
	}
	if strings.ContainsAny(c.Image, " \t\n") {
		return bad("image %q: name an image", c.Image)
	}
	return nil
}

// underRoot reports whether the absolute, clean path p lies in one of
// roots (or is one).
func underRoot(roots []string, p string) (string, bool) {
	for _, r := range roots {
		r = filepath.Clean(r)
		if p == r || strings.HasPrefix(p, r+"/") || r == "/" {
			return r, true
		}
	}
	return "", false
}
