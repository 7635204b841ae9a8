package podman

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/backend/backendtest"
)

var bg = context.Background()

func TestParseConfigDefaults(t *testing.T) {
	t.Setenv("CONTAINER_HOST", "")
	c, err := ParseConfig(nil, "/state")
	if err != nil {
		t.Fatal(err)
	}
	if c.Image != DefaultImage || !c.imageDefault || c.NamePrefix != "wai-shell" || c.User != "65534:65534" ||
		c.Network != "none" || c.memoryBytes != 1<<30 || c.CPUs != 1 || c.PidsLimit != 256 || c.Nofile != 1024 ||
		c.Nproc == 0 || c.tmpfsBytes != 64<<20 || c.IdleTimeout != Duration(15*time.Minute) || c.MaxUptime != 0 ||
		c.PullBackoff != Duration(time.Second) || c.PullBackoffMax != Duration(5*time.Minute) ||
		c.WorkspaceDir != "/state/podman" || c.workspaceBytes != 1<<30 || c.networkEnabled() {
		t.Errorf("defaults: %+v", c)
	}
	if c.URL != DefaultURL() || !strings.HasPrefix(c.URL, "unix://") {
		t.Errorf("default url %q", c.URL)
	}
	t.Setenv("CONTAINER_HOST", "ssh://me@box/run/podman/podman.sock")
	if c, _ := ParseConfig(nil, "/state"); c.URL != "ssh://me@box/run/podman/podman.sock" {
		t.Errorf("CONTAINER_HOST not used: %q", c.URL)
	}
	c, err = ParseConfig(json.RawMessage(`{"url":"unix:///x.sock","image":"localhost/img:1","memory":"512m","cpus":0.5,
		"idle_timeout":"2m","max_uptime":3600,"network":"bridge","env":{"A":"b"},"workspace_dir":"/ws","tmpfs_size":"1g"}`), "/state")
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "unix:///x.sock" || c.Image != "localhost/img:1" || c.imageDefault || c.memoryBytes != 512<<20 || c.CPUs != 0.5 ||
		c.IdleTimeout != Duration(2*time.Minute) || c.MaxUptime != Duration(time.Hour) || !c.networkEnabled() ||
		c.Env["A"] != "b" || c.WorkspaceDir != "/ws" || c.tmpfsBytes != 1<<30 {
		t.Errorf("overrides: %+v", c)
	}
}

// wai preflight reaches the checks through the driver, which resolves the
// configuration as New would and refuses a table it cannot check.
func TestDriverPreflightParsesTheTable(t *testing.T) {
	_, ok, err := backend.Preflight(bg, "podman", backend.Options{Config: json.RawMessage(`{"imag": "x"}`), StateDir: t.TempDir()})
	if !ok || !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "imag") {
		t.Fatalf("backend.Preflight with a bad table: ok %v, %v; want ErrInvalid naming the key", ok, err)
	}
}

func TestParseConfigRejects(t *testing.T) {
	for _, raw := range []string{
		`{"imag":"x"}`, // unknown key
		`{"url":"http://x"}`,
		`{"network":"host"}`,
		`{"network":"weird"}`,
		`{"memory":"lots"}`,
		`{"memory":"1m"}`,
		`{"cpus":0}`,
		`{"pids_limit":3}`,
		`{"nofile":10}`,
		`{"nofile":100000000}`,
		`{"user":"nobody"}`,
		`{"name_prefix":"-x"}`,
		`{"name_prefix":"a/b"}`,
		`{"idle_timeout":"soon"}`,
		`{"kill_grace":"2m"}`,
		`{"pull_backoff":"10s","pull_backoff_max":"1s"}`,
		`{"env":{"WAI_EXEC":"x"}}`,
		`{"env":{"1A":"x"}}`,
		`{"host_mounts":[{"host_path":"/etc","mount_path":"etc"}]}`,
		`{"allowed_host_roots":["rel"],"host_mounts":[]}`,
		`{"allowed_host_roots":["/"],"host_mounts":[{"host_path":"rel","mount_path":"x"}]}`,
		`{"allowed_host_roots":["/"],"host_mounts":[{"host_path":"/etc","mount_path":"../x"}]}`,
		`{"allowed_host_roots":["/"],"host_mounts":[{"host_path":"/etc","mount_path":"a/./b"}]}`,
		`{"allowed_host_roots":["/"],"host_mounts":[{"host_path":"/etc","mount_path":""}]}`,
		`{"allowed_host_roots":["/"],"host_mounts":[{"host_path":"/etc","mount_path":"x","include":["[a"]}]}`,
		`{"workspace_size":"lots"}`,
		`{"workspace_size":"1m"}`,
		`{"workspace_size":"-1g"}`,
		`{"workspace_dir":"/ws/{usr}"}`,
		`{"workspace_dir":"/ws/x{user}"}`,
		`{"workspace_dir":"/ws/{session}/x"}`,
		`{"workspace_dir":"/ws/{user}/{user}"}`,
		`{"workspace_dir":"/ws/{user"}`,
	} {
		_, err := ParseConfig(json.RawMessage(raw), "/state")
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("config %s: error %v, want ErrInvalid", raw, err)
		}
	}
	c, err := ParseConfig(json.RawMessage(`{"allowed_host_roots":["/"],"host_mounts":[{"host_path":"/etc","mount_path":"/workspace/cfg/"}]}`), "/s")
	if err != nil || c.HostMounts[0].MountPath != "cfg" || c.HostMounts[0].MaxBytes != defaultMountBytes {
		t.Errorf("mount path /workspace/cfg/: %+v, %v; want cfg with the default budget", c.HostMounts, err)
	}
}

// Both rlimits wai sets must fit under the host's hard limits, or the
// container cannot start; a config asking for more is refused when read.
func TestParseConfigRlimitsWithinHardLimits(t *testing.T) {
	for _, c := range []struct{ key, limit string }{{"nofile", "Max open files"}, {"nproc", "Max processes"}} {
		hard, ok := hostHardLimit(c.limit)
		if !ok {
			t.Logf("%s: no finite hard limit here, nothing to exceed", c.key)
			continue
		}
		_, err := ParseConfig(json.RawMessage(fmt.Sprintf(`{%q:%d}`, c.key, hard+1)), "/state")
		if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprintf("hard limit %d", hard)) {
			t.Errorf("%s = hard limit + 1: %v, want ErrInvalid naming the hard limit %d", c.key, err, hard)
		}
		if _, err := ParseConfig(json.RawMessage(fmt.Sprintf(`{%q:%d}`, c.key, min(hard, 4096))), "/state"); err != nil {
			t.Errorf("%s = %d, within the hard limit: %v", c.key, min(hard, 4096), err)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "64k": 64 << 10, "512m": 512 << 20, "1g": 1 << 30, "1GiB": 1 << 30, "2GB": 2 << 30, "1.5g": 3 << 29} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "g", "-1m", "1x", "NaN"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

func TestVerdict(t *testing.T) {
	now := time.Now()
	alive := backend.CurrentHolder()
	dead := &backend.Holder{Host: alive.Host, PID: alive.PID, Start: alive.Start + 1} // same pid, another start: reused
	other := &backend.Holder{Host: alive.Host + "-elsewhere", PID: 1, Start: 1}
	fifteen := Duration(15 * time.Minute)
	cases := []struct {
		name   string
		s      *sessionState
		used   time.Time
		all    bool
		remove bool
	}{
		{"no state", nil, now, false, true},
		{"live owner", &sessionState{Owner: alive}, now.Add(-time.Hour), true, false},
		{"owner on another host", &sessionState{Owner: other}, now.Add(-time.Hour), true, false},
		{"dead owner", &sessionState{Owner: dead}, now, false, true},
		{"kept, recent", &sessionState{Keep: true}, now.Add(-time.Minute), false, false},
		{"kept, recent, all", &sessionState{Keep: true}, now.Add(-time.Minute), true, true},
		{"kept, idle", &sessionState{Keep: true}, now.Add(-time.Hour), false, true},
		{"kept, its own longer idle timeout", &sessionState{Keep: true, IdleTimeout: &[]Duration{Duration(2 * time.Hour)}[0]}, now.Add(-time.Hour), false, false},
		{"kept, idle timeout 0", &sessionState{Keep: true, IdleTimeout: new(Duration)}, now.Add(-24 * time.Hour), false, false},
		{"closed, not kept", &sessionState{}, now, false, true},
	}
	for _, c := range cases {
		remove, why := verdict(c.s, c.used, c.all, time.Duration(fifteen), now)
		if remove != c.remove || why == "" {
			t.Errorf("%s: remove %v (%s), want %v", c.name, remove, why, c.remove)
		}
	}
}

func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	p := statePath(dir, "s1")
	if filepath.Base(filepath.Dir(p)) != stateDirName {
		t.Fatalf("state path %s", p)
	}
	want := sessionState{Session: "s1", Container: "c", Workspace: filepath.Join(dir, "s1"), Keep: true, Owner: backend.CurrentHolder(), Created: time.Now().UTC().Round(0)}
	if err := writeState(p, want); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-time.Hour).Round(time.Second)
	touchState(p, when)
	got, used, err := readState(p)
	if err != nil || got.Session != "s1" || !got.Keep || !got.Owner.Alive() || !used.Equal(when) {
		t.Errorf("read back %+v (used %v), %v", got, used, err)
	}
	if err := removeWorkspace(filepath.Join(dir, "other"), "s1", p, removedBy("")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readState(p); err == nil {
		t.Errorf("state file survived removeWorkspace")
	}
}

// TestExampleConfigShowsEveryKey: wai.example.toml's commented
// [backends.podman] block names every key, and every key of a host_mounts
// entry, with values that give the defaults.
func TestExampleConfigShowsEveryKey(t *testing.T) {
	t.Setenv("CONTAINER_HOST", "")
	data, err := os.ReadFile(filepath.Join("..", "..", "wai.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// The first commented [backends.podman] block lists every key; the
	// later ones are examples of nested values.
	text := "[backends.podman]\n" + strings.Join(backendtest.ExampleBlock(data, "podman"), "\n")
	var doc struct {
		Backends struct {
			Podman map[string]any `toml:"podman"`
		} `toml:"backends"`
	}
	if _, err := toml.Decode(text, &doc); err != nil || len(doc.Backends.Podman) == 0 {
		t.Fatalf("wai.example.toml has no loadable commented [backends.podman] block (%v):\n%s", err, text)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Config](), reflect.TypeFor[HostMount]()} {
		for i := range typ.NumField() {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if key == "" {
				continue // a parsed form, not a key
			}
			if _, ok := doc.Backends.Podman[key]; !ok && !strings.Contains(string(data), key+" =") {
				t.Errorf("wai.example.toml's [backends.podman] block lacks %s", key)
			}
		}
	}
	raw, err := json.Marshal(doc.Backends.Podman)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := ParseConfig(raw, "/state")
	if err != nil {
		t.Fatalf("wai.example.toml's [backends.podman] block %s: %v", raw, err)
	}
	defaults, err := ParseConfig(nil, "/state")
	if err != nil {
		t.Fatal(err)
	}
	// env = {} and [] lists mean what leaving them out means.
	shown.Env, shown.HostMounts, shown.AllowedHostRoots = nil, nil, nil
	if len(defaults.Env) != 0 || len(defaults.HostMounts) != 0 || len(defaults.AllowedHostRoots) != 0 {
		t.Fatalf("the defaults now have env, host_mounts or allowed_host_roots: update this test and the example")
	}
	if !reflect.DeepEqual(shown, defaults) {
		t.Errorf("wai.example.toml's [backends.podman] block gives\n%+v\nbut the defaults are\n%+v", shown, defaults)
	}
}

func TestWorkspaceSizeConfig(t *testing.T) {
	for raw, want := range map[string]int64{`{}`: 1 << 30, `{"workspace_size":"0"}`: 0, `{"workspace_size":"16m"}`: 16 << 20, `{"workspace_size":"2GiB"}`: 2 << 30} {
		c, err := ParseConfig(json.RawMessage(raw), "/state")
		if err != nil || c.workspaceBytes != want {
			t.Errorf("%s: %d bytes, %v; want %d", raw, c.workspaceBytes, err, want)
		}
	}
	_, err := ParseConfig(json.RawMessage(`{"workspace_size":"1m"}`), "/state")
	if err == nil || !strings.Contains(err.Error(), `"0" for no limit`) {
		t.Errorf("a too small workspace_size: %v, want advice naming \"0\"", err)
	}
}

// TestWorkspaceDirPlaceholders: {user} and {session} in workspace_dir
// give per-user (and per-session) directories; a per-user directory
// without a user is refused, and two users' sessions of one name get
// different directories and containers.
func TestWorkspaceDirPlaceholders(t *testing.T) {
	for _, c := range []struct {
		dir                string
		spec               backend.WorkspaceSpec
		wantDir, wantState string
	}{
		{"/ws", backend.WorkspaceSpec{Session: "s1"}, "/ws/s1", "/ws/@state/s1.json"},
		{"/ws", backend.WorkspaceSpec{Session: "s1", User: "alice"}, "/ws/@users/alice/s1", "/ws/@users/alice/@state/s1.json"},
		{"/ws/{session}", backend.WorkspaceSpec{Session: "s1", User: "alice"}, "/ws/@users/alice/s1", "/ws/@users/alice/@state/s1.json"},
		{"/ws/{user}", backend.WorkspaceSpec{Session: "s1", User: "alice"}, "/ws/alice/s1", "/ws/alice/@state/s1.json"},
		{"/ws/{user}/{session}", backend.WorkspaceSpec{Session: "s1", User: "bob"}, "/ws/bob/s1", "/ws/bob/@state/s1.json"},
		{"/ws/{session}", backend.WorkspaceSpec{Session: "s1"}, "/ws/s1", "/ws/@state/s1.json"},
	} {
		cfg, err := ParseConfig(json.RawMessage(fmt.Sprintf(`{"workspace_dir":%q}`, c.dir)), "/state")
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		p, err := cfg.pathsFor(c.spec)
		if err != nil || p.dir != c.wantDir || p.state != c.wantState || p.image != strings.TrimSuffix(c.wantState, ".json")+".ext4" {
			t.Errorf("%s %+v: %+v, %v; want dir %s state %s", c.dir, c.spec, p, err, c.wantDir, c.wantState)
		}
	}
	cfg, err := ParseConfig(json.RawMessage(`{"workspace_dir":"/ws/{user}"}`), "/state")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.fixedDir() != "/ws" {
		t.Errorf("fixedDir %q, want /ws", cfg.fixedDir())
	}
	_, err = cfg.pathsFor(backend.WorkspaceSpec{Session: "s1"})
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "user name") {
		t.Errorf("a per-user workspace_dir without a user: %v, want ErrInvalid asking for a user name", err)
	}
	a, _ := cfg.pathsFor(backend.WorkspaceSpec{Session: "c", User: "a-b"})
	b, _ := cfg.pathsFor(backend.WorkspaceSpec{Session: "b-c", User: "a"})
	n, _ := cfg.pathsFor(backend.WorkspaceSpec{Session: "c", User: "a"})
	if a.name == b.name || a.name == n.name || a.dir == n.dir {
		t.Errorf("users' sessions collide: %+v %+v %+v", a, b, n)
	}
	// Without {user}, users' sessions still get directories of their own.
	cfg, err = ParseConfig(nil, "/state")
	if err != nil {
		t.Fatal(err)
	}
	a, _ = cfg.pathsFor(backend.WorkspaceSpec{Session: "s", User: "a"})
	b, _ = cfg.pathsFor(backend.WorkspaceSpec{Session: "s", User: "b"})
	n, _ = cfg.pathsFor(backend.WorkspaceSpec{Session: "s"})
	if a.dir == b.dir || a.dir == n.dir || a.state == b.state || a.name == b.name || a.name == n.name {
		t.Errorf("users' sessions share a directory or container on a workspace_dir without {user}: %+v %+v %+v", a, b, n)
	}
}
