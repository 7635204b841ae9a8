package host

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wai-dev/wai/host/backend"
)

// composeService is one service of a compose file, in the subset wai
// runs: each becomes a managed container through the create path.
type composeService struct {
	Name      string
	Image     string
	Command   []string
	Env       map[string]string
	Ports     []backend.ContainerPort
	Mounts    []backend.ContainerMount
	Workdir   string
	DependsOn []string
}

// composeSupported are the service keys wai runs; composeRefused the ones
// it refuses with a reason (the rest are "not supported").
var (
	composeSupported = []string{"image", "command", "environment", "ports", "volumes", "working_dir", "depends_on", "networks"}
	composeRefused   = map[string]string{
		"privileged":   "wai never gives a managed container --privileged",
		"network_mode": "a service runs on the project's network (the host network is refused)",
		"cap_add":      "managed containers run without capabilities",
		"devices":      "host devices are refused",
		"pid":          "the host's PID namespace is refused",
		"ipc":          "the host's IPC namespace is refused",
		"security_opt": "the hardening is wai's, not the file's",
		"userns_mode":  "user namespaces are wai's choice",
		"build":        "images are not built from compose files: build one (wai image build) and name it with image",
	}
	composeTopKeys = map[string]bool{"version": true, "name": true, "services": true}
	projectRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
)

// parseCompose reads a compose file into its services, in depends_on
// order. Anything outside the supported subset is refused naming the key:
// a key silently ignored could be a gate silently skipped.
func parseCompose(data []byte) (name string, svcs []composeService, err error) {
	const op = "containers.compose_up"
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		return "", nil, backend.Errorf(backend.ErrInvalid, op, "", "the compose file is not valid YAML: %v", err)
	}
	for k := range top {
		if !composeTopKeys[k] {
			return "", nil, backend.Errorf(backend.ErrInvalid, op, k, "top-level key %q is not supported (supported: version, name, services; "+
				"each project gets one internal network of its own)", k)
		}
	}
	if n, ok := top["name"]; ok {
		name = n.Value
	}
	var raw map[string]map[string]yaml.Node
	if sn, ok := top["services"]; !ok || sn.Decode(&raw) != nil || len(raw) == 0 {
		return "", nil, backend.Errorf(backend.ErrInvalid, op, "", "the compose file needs services: a map of service name to its settings")
	}
	byName := map[string]composeService{}
	for sname, keys := range raw {
		svc, err := parseService(sname, keys)
		if err != nil {
			return "", nil, err
		}
		byName[sname] = svc
	}
	svcs, err = composeOrder(byName)
	return name, svcs, err
}

func parseService(name string, keys map[string]yaml.Node) (composeService, error) {
	const op = "containers.compose_up"
	svc := composeService{Name: name}
	if !containerNameOK(name) {
		return svc, backend.Errorf(backend.ErrInvalid, op, name, "a service name is letters, digits, '_', '-' or '.', starting with a letter or digit")
	}
	bad := func(key, format string, args ...any) error {
		return backend.Errorf(backend.ErrInvalid, op, name+"."+key, format, args...)
	}
	for k, n := range keys {
		if why, ok := composeRefused[k]; ok {
			return svc, backend.Errorf(backend.ErrPermission, op, name+"."+k, "refused: %s", why)
		}
		var err error
		switch k {
		case "image":
			err = n.Decode(&svc.Image)
		case "working_dir":
			err = n.Decode(&svc.Workdir)
		case "command":
			svc.Command, err = stringOrList(n)
		case "environment":
			svc.Env, err = composeEnv(n)
		case "depends_on":
			svc.DependsOn, err = composeDepends(n)
		case "ports":
			svc.Ports, err = composePorts(n)
		case "volumes":
			svc.Mounts, err = composeVolumes(n)
		case "networks":
			err = composeNetworks(n)
		default:
			return svc, bad(k, "key %q is not supported (supported: %s)", k, strings.Join(composeSupported, ", "))
		}
		if err != nil {
			return svc, bad(k, "%v", err)
		}
	}
	if svc.Image == "" {
		return svc, bad("image", "every service needs an image present on the Podman service (build is not supported)")
	}
	return svc, nil
}

var serviceNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,40}$`)

func containerNameOK(s string) bool { return serviceNameRE.MatchString(s) }

// stringOrList: a string command runs with /bin/sh -c (so quoting works
// as a person typed it); a list is the argv.
func stringOrList(n yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		return []string{"/bin/sh", "-c", n.Value}, nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return nil, fmt.Errorf("give a string or a list of strings")
	}
	return l, nil
}

// composeEnv reads a map (NAME: value) or a list (NAME=value).
func composeEnv(n yaml.Node) (map[string]string, error) {
	env := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		var l []string
		if err := n.Decode(&l); err != nil {
			return nil, fmt.Errorf("give a map or a list of NAME=value")
		}
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		return env, nil
	}
	var m map[string]yaml.Node
	if err := n.Decode(&m); err != nil {
		return nil, fmt.Errorf("give a map or a list of NAME=value")
	}
	for k, v := range m {
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: give a plain value", k)
		}
		env[k] = v.Value
	}
	return env, nil
}

// composeDepends reads a list of services or a map of service to
// condition (conditions beyond "started" are not waited for).
func composeDepends(n yaml.Node) ([]string, error) {
	var l []string
	if n.Kind == yaml.SequenceNode {
		err := n.Decode(&l)
		return l, err
	}
	var m map[string]yaml.Node
	if err := n.Decode(&m); err != nil {
		return nil, fmt.Errorf("give a list of services")
	}
	return slices.Sorted(maps.Keys(m)), nil
}

// composePorts reads "C", "H:C", "127.0.0.1:H:C", each with /tcp or /udp.
// Ports are published on the host's loopback only, as for create.
func composePorts(n yaml.Node) ([]backend.ContainerPort, error) {
	var l []string
	if err := n.Decode(&l); err != nil {
		return nil, fmt.Errorf("give a list of \"host:container\" strings")
	}
	var out []backend.ContainerPort
	for _, p := range l {
		spec, proto, _ := strings.Cut(p, "/")
		parts := strings.Split(spec, ":")
		if len(parts) == 3 && parts[0] == "127.0.0.1" {
			parts = parts[1:]
		}
		if len(parts) > 2 || proto != "" && proto != "tcp" && proto != "udp" {
			return nil, fmt.Errorf("%q: give \"container\", \"host:container\" or \"127.0.0.1:host:container\" (ports are published on loopback only)", p)
		}
		nums := make([]uint16, len(parts))
		for i, s := range parts {
			v, err := strconv.ParseUint(s, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("%q: ports are numbers (ranges are not supported)", p)
			}
			nums[i] = uint16(v)
		}
		cp := backend.ContainerPort{ContainerPort: nums[len(nums)-1], Protocol: proto}
		if len(nums) == 2 {
			cp.HostPort = nums[0]
		}
		out = append(out, cp)
	}
	return out, nil
}

// composeVolumes reads "/host:/container[:ro]" bind mounts; the backend
// checks the host path against allowed_host_roots as for create. Named
// volumes and relative paths are refused: the workspace is at /workspace.
func composeVolumes(n yaml.Node) ([]backend.ContainerMount, error) {
	var l []string
	if err := n.Decode(&l); err != nil {
		return nil, fmt.Errorf("give a list of \"/host/path:/container/path[:ro]\" strings")
	}
	var out []backend.ContainerMount
	for _, v := range l {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || !path.IsAbs(parts[0]) || len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw" {
			return nil, fmt.Errorf("%q: give \"/host/path:/container/path[:ro]\" with an absolute host path under allowed_host_roots "+
				"(named volumes and relative paths are not supported; the session workspace is mounted at /workspace)", v)
		}
		out = append(out, backend.ContainerMount{HostPath: parts[0], ContainerPath: parts[1], ReadOnly: len(parts) == 3 && parts[2] == "ro"})
	}
	return out, nil
}

// composeNetworks accepts only the project's default network.
func composeNetworks(n yaml.Node) error {
	var l []string
	if n.Decode(&l) == nil && (len(l) == 0 || len(l) == 1 && l[0] == "default") {
		return nil
	}
	return fmt.Errorf("only [default] is supported: each project gets one internal network its services share")
}

// composeOrder sorts services so each comes after what it depends on.
func composeOrder(by map[string]composeService) ([]composeService, error) {
	names := slices.Sorted(maps.Keys(by))
	var out []composeService
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n, from string) error
	visit = func(n, from string) error {
		svc, ok := by[n]
		switch {
		case !ok:
			return backend.Errorf(backend.ErrInvalid, "containers.compose_up", from+".depends_on", "no service %q in the file", n)
		case state[n] == 1:
			return backend.Errorf(backend.ErrInvalid, "containers.compose_up", n+".depends_on", "depends_on forms a cycle")
		case state[n] == 2:
			return nil
		}
		state[n] = 1
		for _, d := range svc.DependsOn {
			if err := visit(d, n); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, svc)
		return nil
	}
	for _, n := range names {
		if err := visit(n, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}
