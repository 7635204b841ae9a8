package podspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// Every invalid setting is refused with ErrInvalid, and the message names
// the key and says what to write instead.
func TestInvalidConfigRejected(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // in the message
	}{
		{"namespace not a DNS label", Config{Namespace: "Wai_NS"}, "namespace"},
		{"name prefix too long", Config{NamePrefix: strings.Repeat("p", maxNamePrefix+1)}, "name_prefix"},
		{"name prefix upper case", Config{NamePrefix: "Wai"}, "name_prefix"},
		{"root user", Config{User: "0:0"}, "never run as root"},
		{"root uid with a group", Config{User: "0:1000"}, "never run as root"},
		{"user not numeric", Config{User: "nobody"}, `"UID:GID"`},
		{"user without group", Config{User: "1000"}, `"UID:GID"`},
		{"negative uid", Config{User: "-1:-1"}, `"UID:GID"`},
		{"podman-style memory", Config{Memory: "1g"}, `"1Gi"`},
		{"milli bytes", Config{Memory: "512m"}, "thousandths of a byte"},
		{"tiny memory", Config{Memory: "1Ki"}, "under 1Mi"},
		{"negative workspace", Config{WorkspaceSize: "-1Gi"}, `workspace_size "-1Gi" is under 1Mi`},
		{"tmpfs as large as memory", Config{Memory: "64Mi", TmpfsSize: "64Mi"}, "tmpfs_size"},
		{"cpus too small", Config{CPUs: 0.001}, "cpus"},
		{"cpus negative", Config{CPUs: -1}, "cpus"},
		{"host network", Config{Network: "host"}, "never shares the node's network"},
		{"unknown network", Config{Network: "bridge"}, `"egress"`},
		{"egress_deny without egress", Config{EgressDeny: []string{"203.0.113.0/24"}}, "egress_deny"},
		{"egress_deny not a CIDR", Config{Network: "egress", EgressDeny: []string{"203.0.113.7"}}, "not a CIDR"},
		{"egress_deny with host bits", Config{Network: "egress", EgressDeny: []string{"203.0.113.7/24"}}, "not a CIDR"},
		{"runtime class with a bang", Config{RuntimeClass: "kata!"}, "runtime_class"},
		{"storage class upper case", Config{WorkspaceStorageClass: "SSD"}, "workspace_storage_class"},
		{"pull policy", Config{ImagePullPolicy: "sometimes"}, "image_pull_policy"},
		{"image with a space", Config{Image: "python 3"}, "spaces"},
		{"relative agent path", Config{AgentPath: "wai-agent"}, "absolute"},
		{"agent path outside the agent image", Config{AgentImage: "r/a:1", AgentPath: "/usr/bin/wai-agent"}, "/opt/wai"},
		{"env name", Config{Env: map[string]string{"1BAD": "x"}}, "env name"},
		{"sub-second max uptime", Config{MaxUptime: backend.Duration(500e6)}, "max_uptime"},
		{"negative kill grace", Config{KillGrace: backend.Duration(-1)}, "kill_grace"},
		{"empty command", Config{Command: []string{""}}, "command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := New(c.cfg)
			if b != nil || !errors.Is(err, backend.ErrInvalid) {
				t.Fatalf("New(%+v) = %v, %v; want ErrInvalid", c.cfg, b, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// Valid spellings that look like the invalid ones above are accepted.
func TestValidConfigAccepted(t *testing.T) {
	for _, cfg := range []Config{
		{Memory: "1G", TmpfsSize: "100M", WorkspaceSize: "10Gi"},
		{Memory: "1073741824"},
		{User: "1000:1000", CPUs: 0.25},
		{Network: "egress", EgressDeny: []string{"203.0.113.0/24", "2001:db8::/32"}},
		{RuntimeClass: "kata-qemu", WorkspaceStorageClass: "local-path"},
		{AgentImage: "r/a:1", AgentPath: "/opt/wai/bin/wai-agent"},
	} {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}
}
