package gates

import (
	"strings"
	"testing"
)

func TestGates(t *testing.T) {
	cases := []struct {
		name string
		req  Request
		key  string // "" allowed by default
		ask  bool   // asks a person by default (else denied outright)
	}{
		{"plain create", Request{Operation: "create", MountPaths: []string{"/home/me/project"}}, "", false},
		{"exec", Request{Operation: "exec"}, "", false},
		{"gpu", Request{Operation: "create", GPU: true}, "allow_gpu", true},
		{"restore", Request{Operation: "restore"}, "", false},
		{"snapshot", Request{Operation: "snapshot"}, "", false},
		{"gpu restore", Request{Operation: "restore", GPU: true}, "allow_gpu", true},
		{"ssh restore", Request{Operation: "restore", ForwardSSH: true}, "allow_ssh_forwarding", true},
		{"host network", Request{Operation: "create", Network: "host"}, "allow_host_network", false},
		{"ssh", Request{Operation: "create", ForwardSSH: true}, "allow_ssh_forwarding", true},
		{"env all", Request{Operation: "create", EnvPassthrough: "all"}, "allow_env_passthrough_all", true},
		{"destroy_all", Request{Operation: "destroy_all"}, "allow_destroy_all", true},
		{"mount /", Request{Operation: "create", MountPaths: []string{"/"}}, "allow_sensitive_mounts", true},
		{"mount /etc", Request{Operation: "create", MountPaths: []string{"/etc"}}, "allow_sensitive_mounts", true},
		{"mount under /etc", Request{Operation: "create", MountPaths: []string{"/etc/ssl/../ssh"}}, "allow_sensitive_mounts", true},
		{"mount /var", Request{Operation: "create", MountPaths: []string{"/var/"}}, "allow_sensitive_mounts", true},
		{"mount /root/x", Request{Operation: "create", MountPaths: []string{"/root/.ssh"}}, "allow_sensitive_mounts", true},
		{"mount /home", Request{Operation: "create", MountPaths: []string{"/home"}}, "allow_sensitive_mounts", true},
		{"internal network", Request{Operation: "create_network"}, "", false},
		{"network with egress", Request{Operation: "create_network", Egress: true}, "allow_network_egress", true},
		// Egress and host credentials are asked for, never given.
		{"bridge network", Request{Operation: "create", Network: "bridge"}, "allow_network_egress", true},
		{"no network", Request{Operation: "create", Network: "none"}, "", false},
		{"env list", Request{Operation: "create", EnvPassthrough: "list"}, "allow_env_passthrough_list", true},
		{"env auto", Request{Operation: "create", EnvPassthrough: "auto"}, "", false},
		{"gh token", Request{Operation: "create", ForwardGh: true}, "allow_gh_forwarding", true},
		{"compose_up", Request{Operation: "compose_up"}, "", false},
		{"dockerfile build", Request{Operation: "create", DockerfileBuild: true}, "allow_dockerfile_build", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := ParseConfig(nil)
			v := cfg.Check(c.req)
			if c.key == "" {
				if !v.Allow {
					t.Fatalf("denied: %s", v.Reason)
				}
				return
			}
			if v.Allow || v.Ask != c.ask || v.ConfigKey != c.key || v.Reason == "" {
				t.Fatalf("got %+v, want ask=%v naming %s", v, c.ask, c.key)
			}
			if c.ask {
				strict, _ := ParseConfig([]byte(`{"ask": false}`))
				if v := strict.Check(c.req); v.Allow || v.Ask || !strings.Contains(v.Reason, c.key+" = true") {
					t.Errorf("with ask = false: %+v, want a denial naming %s = true", v, c.key)
				}
			}
			cfg, err := ParseConfig([]byte(`{"` + c.key + `": true}`))
			if err != nil {
				t.Fatal(err)
			}
			if v := cfg.Check(c.req); !v.Allow {
				t.Errorf("with %s = true still not allowed: %+v", c.key, v)
			}
		})
	}
}

func TestMaxContainersAndConfig(t *testing.T) {
	cfg, _ := ParseConfig(nil)
	if v := cfg.Check(Request{Operation: "create", Count: 9}); !v.Allow {
		t.Error("the 10th container was denied")
	}
	if v := cfg.Check(Request{Operation: "create", Count: 10}); v.Allow || v.Ask || !strings.Contains(v.Reason, "max_containers_per_session") {
		t.Errorf("the 11th (a limit, never asked): %+v", v)
	}
	cfg, err := ParseConfig([]byte(`{"max_containers_per_session": 1, "sensitive_mounts": ["/srv/secrets/**", "/data"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v := cfg.Check(Request{Operation: "create", Count: 1}); v.Allow || v.Ask {
		t.Error("max 1 allowed a second")
	}
	for _, p := range []string{"/srv/secrets/a", "/data"} {
		if v := cfg.Check(Request{Operation: "create", MountPaths: []string{p}}); v.Allow {
			t.Errorf("configured sensitive mount %s allowed", p)
		}
	}
	if v := cfg.Check(Request{Operation: "create", MountPaths: []string{"/data/x"}}); !v.Allow {
		t.Error("/data/x is not /data")
	}
	for _, bad := range []string{`{"nope": 1}`, `{"max_containers_per_session": 0}`, `{"sensitive_mounts": ["rel"]}`} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%s) accepted", bad)
		}
	}
}
