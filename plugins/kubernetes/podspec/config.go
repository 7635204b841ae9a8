package podspec

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wai-dev/wai/host/backend"
)

// Config is the kubernetes backend's table in wai's config, as JSON. Zero
// fields take the defaults below (see Defaults).
type Config struct {
	// Namespace the sessions' pods live in. Use one that holds nothing but
	// wai's pods: NetworkPolicies only ever add, so another policy there
	// that selects wai's pods could open what this one closes. Default
	// "wai".
	Namespace string `json:"namespace"`
	// Image every session pod runs. Default DefaultImage.
	Image string `json:"image"`
	// ImagePullPolicy: "IfNotPresent" (the default), "Always" or "Never".
	ImagePullPolicy string `json:"image_pull_policy"`
	// NamePrefix starts every pod's name. Default "wai".
	NamePrefix string `json:"name_prefix"`
	// RuntimeClass names a RuntimeClass (gVisor's "gvisor", Kata's
	// "kata"): the pod then runs under a kernel of its own. "" uses the
	// cluster's default runtime (runc), which shares the node's kernel.
	RuntimeClass string `json:"runtime_class"`
	// User the pod runs as, "UID:GID". Default "65534:65534" (nobody).
	// UID 0 is refused.
	User string `json:"user"`
	// Network is "none" (the default: every packet in or out is denied)
	// or "egress" (outbound connections to public addresses and the
	// cluster's DNS; private, link-local and metadata addresses and
	// EgressDeny stay denied). Nothing may ever connect in.
	Network string `json:"network"`
	// EgressDeny adds CIDRs the "egress" network may not reach.
	EgressDeny []string `json:"egress_deny"`
	// Memory is the pod's memory request and limit, a Kubernetes quantity
	// ("1Gi", "512Mi"). /tmp is memory-backed and counts against it.
	// Default "1Gi".
	Memory string `json:"memory"`
	// CPUs is the pod's CPU request and limit, fractions allowed.
	// Default 1.
	CPUs float64 `json:"cpus"`
	// WorkspaceSize caps /workspace (an emptyDir, or an ephemeral volume
	// when WorkspaceStorageClass is set). Default "1Gi".
	WorkspaceSize string `json:"workspace_size"`
	// WorkspaceStorageClass, when set, gives /workspace a volume of that
	// StorageClass, created and deleted with the pod, whose size the
	// storage enforces; "" uses an emptyDir on the node's disk, which the
	// kubelet enforces by evicting the pod once it is over.
	WorkspaceStorageClass string `json:"workspace_storage_class"`
	// TmpfsSize caps the memory-backed /tmp. Default "64Mi".
	TmpfsSize string `json:"tmpfs_size"`
	// AgentImage is an OCI image holding the wai-agent binary at
	// /wai-agent; it is mounted read-only at /opt/wai (an image volume,
	// Kubernetes' ImageVolume feature). "" means the session image
	// carries the agent itself at AgentPath.
	AgentImage string `json:"agent_image"`
	// AgentPath is where the pod finds wai-agent. Default
	// "/opt/wai/wai-agent" with AgentImage, else
	// "/usr/local/bin/wai-agent".
	AgentPath string `json:"agent_path"`
	// Command is the pod's main process, which only has to stay alive:
	// commands run beside it through pods/exec. Default
	// ["sleep", "infinity"].
	Command []string `json:"command"`
	// MaxUptime ends a pod this long after it started, busy or not
	// (activeDeadlineSeconds). "0s" (the default) never.
	MaxUptime backend.Duration `json:"max_uptime"`
	// KillGrace is the pod's termination grace period. Default "1s".
	KillGrace backend.Duration `json:"kill_grace"`
	// Env is added to the image's environment.
	Env map[string]string `json:"env"`
}

// Defaults.
const (
	DefaultNamespace  = "wai"
	DefaultImage      = "docker.io/library/python:3.12-bookworm"
	DefaultNamePrefix = "wai"
	DefaultUser       = "65534:65534"
	DefaultMemory     = "1Gi"
	DefaultCPUs       = 1.0
	DefaultWorkspace  = "1Gi"
	DefaultTmpfs      = "64Mi"
	DefaultKillGrace  = time.Second
	// agentMount is where an AgentImage is mounted.
	agentMount = "/opt/wai"
	// maxNamePrefix leaves room in a 63-character pod name for the
	// session and a hash.
	maxNamePrefix = 16
)

// settings is a validated Config in the forms the builder uses.
type settings struct {
	Config
	uid, gid              int64
	memory, tmpfs, wsSize resource.Quantity
	cpus                  resource.Quantity
	egressDeny            []string
}

// validate fills in defaults and checks every field, returning an
// ErrInvalid that says which key to fix and how.
func (c Config) validate() (settings, error) {
	s := settings{Config: c}
	s.Namespace = or(c.Namespace, DefaultNamespace)
	s.Image = or(c.Image, DefaultImage)
	s.ImagePullPolicy = or(c.ImagePullPolicy, "IfNotPresent")
	s.NamePrefix = or(c.NamePrefix, DefaultNamePrefix)
	s.User = or(c.User, DefaultUser)
	s.Network = or(c.Network, "none")
	if s.CPUs == 0 {
		s.CPUs = DefaultCPUs
	}
	if s.KillGrace == 0 {
		s.KillGrace = backend.Duration(DefaultKillGrace)
	}
	if len(s.Command) == 0 {
		s.Command = []string{"sleep", "infinity"}
	}
	switch {
	case s.AgentPath != "":
	case s.AgentImage != "":
		s.AgentPath = agentMount + "/wai-agent"
	default:
		s.AgentPath = "/usr/local/bin/wai-agent"
	}
	if err := s.checkNames(); err != nil {
		return settings{}, err
	}
	if err := s.checkUser(); err != nil {
		return settings{}, err
	}
	if err := s.checkSizes(); err != nil {
		return settings{}, err
	}
	if err := s.checkNetwork(); err != nil {
		return settings{}, err
	}
	return s, s.checkProcess()
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func invalid(format string, args ...any) error {
	return backend.Errorf(backend.ErrInvalid, "config", "", "kubernetes: "+format, args...)
}

func (s *settings) checkNames() error {
	if errs := validation.IsDNS1123Label(s.Namespace); len(errs) > 0 {
		return invalid("namespace %q is not a Kubernetes namespace name: %s", s.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(s.NamePrefix); len(errs) > 0 || len(s.NamePrefix) > maxNamePrefix {
		return invalid("name_prefix %q must be 1–%d lower-case letters, digits and '-', starting and ending with a letter or digit", s.NamePrefix, maxNamePrefix)
	}
	if s.RuntimeClass != "" {
		if errs := validation.IsDNS1123Subdomain(s.RuntimeClass); len(errs) > 0 {
			return invalid("runtime_class %q is not a RuntimeClass name: %s", s.RuntimeClass, strings.Join(errs, "; "))
		}
	}
	if s.WorkspaceStorageClass != "" {
		if errs := validation.IsDNS1123Subdomain(s.WorkspaceStorageClass); len(errs) > 0 {
			return invalid("workspace_storage_class %q is not a StorageClass name: %s", s.WorkspaceStorageClass, strings.Join(errs, "; "))
		}
	}
	switch s.ImagePullPolicy {
	case "IfNotPresent", "Always", "Never":
	default:
		return invalid(`image_pull_policy %q: use "IfNotPresent", "Always" or "Never"`, s.ImagePullPolicy)
	}
	if strings.ContainsAny(s.Image, " \t\n") || strings.ContainsAny(s.AgentImage, " \t\n") {
		return invalid("image and agent_image are image references and may not contain spaces")
	}
	return nil
}

func (s *settings) checkUser() error {
	u, g, ok := strings.Cut(s.User, ":")
	uid, err1 := strconv.ParseInt(u, 10, 64)
	gid, err2 := strconv.ParseInt(g, 10, 64)
	if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 || uid > 1<<31-1 || gid > 1<<31-1 {
		return invalid(`user %q must be "UID:GID" with numeric ids, e.g. "65534:65534"`, s.User)
	}
	if uid == 0 {
		return invalid(`user %q is root: sandboxes never run as root; use an unprivileged UID such as "65534:65534"`, s.User)
	}
	s.uid, s.gid = uid, gid
	return nil
}

func (s *settings) checkSizes() error {
	var err error
	if s.memory, err = quantity("memory", or(s.Memory, DefaultMemory)); err != nil {
		return err
	}
	if s.tmpfs, err = quantity("tmpfs_size", or(s.TmpfsSize, DefaultTmpfs)); err != nil {
		return err
	}
	if s.wsSize, err = quantity("workspace_size", or(s.WorkspaceSize, DefaultWorkspace)); err != nil {
		return err
	}
	if s.tmpfs.Cmp(s.memory) >= 0 {
		return invalid("tmpfs_size %s must be less than memory %s: /tmp is memory-backed and counts against it", s.tmpfs.String(), s.memory.String())
	}
	if s.CPUs < 0.01 || s.CPUs > 1024 {
		return invalid("cpus %v must be between 0.01 and 1024", s.CPUs)
	}
	s.cpus = *resource.NewMilliQuantity(int64(s.CPUs*1000+0.5), resource.DecimalSI)
	if s.MaxUptime < 0 || s.KillGrace < 0 {
		return invalid("max_uptime and kill_grace may not be negative")
	}
	if s.MaxUptime != 0 && time.Duration(s.MaxUptime) < time.Second {
		return invalid("max_uptime %s is under the one second Kubernetes counts in; use at least \"1s\", or \"0s\" for no limit", time.Duration(s.MaxUptime))
	}
	return nil
}

// quantity parses a byte size the Kubernetes way, refusing the spellings
// that mean something else there than in Podman's config ("512m" is 0.512
// bytes to Kubernetes).
func quantity(key, v string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return q, invalid("%s %q is not a Kubernetes quantity: write sizes like \"512Mi\" or \"1Gi\"", key, v)
	}
	if strings.HasSuffix(v, "m") {
		return q, invalid("%s %q: %q means thousandths of a byte to Kubernetes; write sizes like \"512Mi\" or \"1Gi\"", key, v, "m")
	}
	if q.Value() < 1<<20 {
		return q, invalid("%s %q is under 1Mi: write sizes like \"512Mi\" or \"1Gi\"", key, v)
	}
	return q, nil
}

// alwaysDenied are the destinations the "egress" network never reaches:
// private and shared address space (the cluster's pods, services and
// nodes), loopback, link-local (which holds the clouds' metadata
// services at 169.254.169.254), and their IPv6 counterparts.
var alwaysDenied = []string{
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
	"127.0.0.0/8", "169.254.0.0/16", "0.0.0.0/8",
	"fc00::/7", "fe80::/10", "::1/128",
}

func (s *settings) checkNetwork() error {
	switch s.Network {
	case "none":
		if len(s.EgressDeny) > 0 {
			return invalid(`egress_deny is set but network is "none", which denies everything already; remove egress_deny or set network = "egress"`)
		}
		return nil
	case "egress":
	case "host":
		return invalid(`network "host" is refused: a sandbox never shares the node's network; use "none" or "egress"`)
	default:
		return invalid(`network %q: use "none" (no network, the default) or "egress" (outbound to public addresses only)`, s.Network)
	}
	s.egressDeny = append([]string(nil), alwaysDenied...)
	for _, c := range s.EgressDeny {
		p, err := netip.ParsePrefix(c)
		if err != nil || p.Masked() != p {
			return invalid("egress_deny %q is not a CIDR such as \"203.0.113.0/24\"", c)
		}
		s.egressDeny = append(s.egressDeny, p.String())
	}
	return nil
}

func (s *settings) checkProcess() error {
	if !strings.HasPrefix(s.AgentPath, "/") {
		return invalid("agent_path %q must be an absolute path", s.AgentPath)
	}
	if s.AgentImage != "" && !strings.HasPrefix(s.AgentPath, agentMount+"/") {
		return invalid("agent_path %q must be under %s, where agent_image is mounted", s.AgentPath, agentMount)
	}
	for name := range s.Env {
		if errs := validation.IsEnvVarName(name); len(errs) > 0 {
			return invalid("env name %q: %s", name, strings.Join(errs, "; "))
		}
	}
	if s.Command[0] == "" {
		return invalid("command must start with a program")
	}
	return nil
}
