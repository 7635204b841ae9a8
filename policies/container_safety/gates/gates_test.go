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
	}{
		{"plain create", Request{Operation: "create", MountPaths: []string{"/home/me/project"}}, ""},
		{"exec", Request{Operation: "exec"}, ""},
		{"gpu", Request{Operation: "create", GPU: true}, "allow_gpu"},
		{"host network", Request{Operation: "create", Network: "host"}, "allow_host_network"},
		{"ssh", Request{Operation: "create", ForwardSSH: true}, "allow_ssh_forwarding"},
		{"env all", Request{Operation: "create", EnvPassthrough: "all"}, "allow_env_passthrough_all"},
		{"destroy_all", Request{Operation: "destroy_all"}, "allow_destroy_all"},
		{"mount /", Request{Operation: "create", MountPaths: []string{"/"}}, "allow_sensitive_mounts"},
		{"mount /etc", Request{Operation: "create", MountPaths: []string{"/etc"}}, "allow_sensitive_mounts"},
		{"mount under /etc", Request{Operation: "create", MountPaths: []string{"/etc/ssl/../ssh"}}, "allow_sensitive_mounts"},
		{"mount /var", Request{Operation: "create", MountPaths: []string{"/var/"}}, "allow_sensitive_mounts"},
		{"mount /root/x", Request{Operation: "create", MountPaths: []string{"/root/.ssh"}}, "allow_sensitive_mounts"},
		{"mount /home", Request{Operation: "create", MountPaths: []string{"/home"}}, "allow_sensitive_mounts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := ParseConfig(nil)
			ok, reason := cfg.Check(c.req)
			if c.key == "" {
				if !ok {
					t.Fatalf("denied: %s", reason)
				}
				return
			}
			if ok || !strings.Contains(reason, c.key+" = true") {
				t.Fatalf("got %v %q, want a denial naming %s", ok, reason, c.key)
			}
			cfg, err := ParseConfig([]byte(`{"` + c.key + `": true}`))
			if err != nil {
				t.Fatal(err)
			}
			if ok, reason := cfg.Check(c.req); !ok {
				t.Errorf("with %s = true still denied: %s", c.key, reason)
			}
		})
	}
}

func TestMaxContainersAndConfig(t *testing.T) {
	cfg, _ := ParseConfig(nil)
	if ok, _ := cfg.Check(Request{Operation: "create", Count: 9}); !ok {
		t.Error("the 10th container was denied")
	}
	if ok, reason := cfg.Check(Request{Operation: "create", Count: 10}); ok || !strings.Contains(reason, "max_containers_per_session") {
		t.Errorf("the 11th: %v %q", ok, reason)
	}
	cfg, err := ParseConfig([]byte(`{"max_containers_per_session": 1, "sensitive_mounts": ["/srv/secrets/**", "/data"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := cfg.Check(Request{Operation: "create", Count: 1}); ok {
		t.Error("max 1 allowed a second")
	}
	for _, p := range []string{"/srv/secrets/a", "/data"} {
		if ok, _ := cfg.Check(Request{Operation: "create", MountPaths: []string{p}}); ok {
			t.Errorf("configured sensitive mount %s allowed", p)
		}
	}
	if ok, _ := cfg.Check(Request{Operation: "create", MountPaths: []string{"/data/x"}}); !ok {
		t.Error("/data/x is not /data")
	}
	for _, bad := range []string{`{"nope": 1}`, `{"max_containers_per_session": 0}`, `{"sensitive_mounts": ["rel"]}`} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%s) accepted", bad)
		}
	}
}
