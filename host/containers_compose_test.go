package host

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

func TestParseCompose(t *testing.T) {
	name, svcs, err := parseCompose([]byte(`
name: demo
services:
  web:
    image: img
    command: python3 -m http.server 8000
    environment: {GREETING: hi, N: 3}
    ports: ["8080:8000", "9000/udp", "127.0.0.1:7000:70"]
    volumes: ["/srv/data:/data:ro"]
    working_dir: /app
    depends_on: {db: {condition: service_started}}
  db:
    image: img
    command: [sleep, infinity]
    environment: [A=1, B=x=y]
    networks: [default]
`))
	if err != nil {
		t.Fatal(err)
	}
	if name != "demo" || len(svcs) != 2 || svcs[0].Name != "db" || svcs[1].Name != "web" {
		t.Fatalf("parseCompose = %q, %+v; want db before web", name, svcs)
	}
	db, web := svcs[0], svcs[1]
	if strings.Join(web.Command, "|") != "/bin/sh|-c|python3 -m http.server 8000" || strings.Join(db.Command, "|") != "sleep|infinity" {
		t.Errorf("commands: %q, %q", web.Command, db.Command)
	}
	if web.Env["N"] != "3" || db.Env["B"] != "x=y" || web.Workdir != "/app" {
		t.Errorf("env or workdir: %v %v %q", web.Env, db.Env, web.Workdir)
	}
	want := []backend.ContainerPort{{HostPort: 8080, ContainerPort: 8000}, {ContainerPort: 9000, Protocol: "udp"}, {HostPort: 7000, ContainerPort: 70}}
	if len(web.Ports) != 3 || web.Ports[0] != want[0] || web.Ports[1] != want[1] || web.Ports[2] != want[2] {
		t.Errorf("ports: %+v, want %+v", web.Ports, want)
	}
	if len(web.Mounts) != 1 || web.Mounts[0] != (backend.ContainerMount{HostPath: "/srv/data", ContainerPath: "/data", ReadOnly: true}) {
		t.Errorf("mounts: %+v", web.Mounts)
	}
	refused := []struct{ file, kind, says string }{
		{"services: {a: {image: i, privileged: true}}", "permission", "privileged"},
		{"services: {a: {image: i, network_mode: host}}", "permission", "host network"},
		{"services: {a: {image: i, cap_add: [SYS_ADMIN]}}", "permission", "capabilities"},
		{"services: {a: {image: i, devices: [/dev/kvm]}}", "permission", "devices"},
		{"services: {a: {image: i, pid: host}}", "permission", "PID"},
		{"services: {a: {build: .}}", "permission", "wai image build"},
		{"services: {a: {image: i, healthcheck: {test: x}}}", "invalid", `"healthcheck" is not supported`},
		{"services: {a: {image: i, volumes: [./src:/src]}}", "invalid", "relative paths"},
		{"services: {a: {image: i, volumes: [data:/data]}}", "invalid", "named volumes"},
		{"services: {a: {image: i, networks: [front]}}", "invalid", "default"},
		{"services: {a: {image: i, ports: [\"0.0.0.0:80:80\"]}}", "invalid", "loopback"},
		{"services: {a: {image: i, depends_on: [b]}, b: {image: i, depends_on: [a]}}", "invalid", "cycle"},
		{"services: {a: {image: i, depends_on: [zz]}}", "invalid", `no service "zz"`},
		{"services: {a: {command: x}}", "invalid", "needs an image"},
		{"services: {a: {image: i}}\nvolumes: {v: {}}", "invalid", `"volumes" is not supported`},
		{"services: {}", "invalid", "needs services"},
		{"services: [", "invalid", "not valid YAML"},
	}
	for _, r := range refused {
		_, _, err := parseCompose([]byte(r.file))
		kind := map[bool]error{true: backend.ErrPermission, false: backend.ErrInvalid}[r.kind == "permission"]
		if !errors.Is(err, kind) || !strings.Contains(err.Error(), r.says) {
			t.Errorf("%s: %v; want %s saying %q", r.file, err, r.kind, r.says)
		}
	}
}

// fakeNetContainers adds networks and host files to the fake containers.
type fakeNetContainers struct {
	*fakeContainers
	files    map[string]string
	networks map[string]backend.NetworkInfo
}

func (f *fakeNetContainers) CreateContainer(ctx context.Context, s backend.ContainerSpec) (backend.ContainerInfo, error) {
	info, err := f.fakeContainers.CreateContainer(ctx, s)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.networks[s.Network]; err == nil && !ok && s.Network != "" {
		delete(f.live, s.Name)
		return info, backend.Errorf(backend.ErrNotFound, "create", s.Network, "no such network")
	}
	info.Project, info.Service, info.Network, info.Image = s.Project, s.Service, s.Network, s.Image
	f.live[s.Name] = info
	return info, err
}

func (f *fakeNetContainers) CreateNetwork(_ context.Context, s backend.NetworkSpec) (backend.NetworkInfo, error) {
	n := backend.NetworkInfo{Name: s.Name, Session: s.Owner.Session, Internal: !s.Egress, Project: s.Project, Persistent: s.Persistent}
	f.networks[s.Name] = n
	return n, nil
}

func (f *fakeNetContainers) ListNetworks(_ context.Context, o backend.ContainerOwner) ([]backend.NetworkInfo, error) {
	var out []backend.NetworkInfo
	for _, n := range f.networks {
		if o.Session == "" || n.Session == o.Session {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeNetContainers) DestroyNetwork(_ context.Context, ref backend.ContainerRef) (backend.NetworkInfo, error) {
	n, ok := f.networks[ref.Name]
	if !ok {
		return n, backend.Errorf(backend.ErrNotFound, "destroy_network", ref.Name, "no such network")
	}
	for _, c := range f.live {
		if c.Network == ref.Name {
			return n, backend.Errorf(backend.ErrUnavailable, "destroy_network", ref.Name, "in use by %s", c.Name)
		}
	}
	delete(f.networks, ref.Name)
	return n, nil
}

func (f *fakeNetContainers) DestroyNetworks(ctx context.Context, o backend.ContainerOwner, keep bool) ([]backend.NetworkInfo, error) {
	ls, _ := f.ListNetworks(ctx, o)
	var out []backend.NetworkInfo
	for _, n := range ls {
		if !keep || !n.Persistent {
			if _, err := f.DestroyNetwork(ctx, backend.ContainerRef{Owner: o, Name: n.Name}); err != nil {
				return out, err
			}
			out = append(out, n)
		}
	}
	return out, nil
}

func (f *fakeNetContainers) ReadHostFile(_ context.Context, _ backend.ContainerOwner, p string, _ int64) ([]byte, string, error) {
	d, ok := f.files[p]
	if !ok {
		return nil, "", backend.Errorf(backend.ErrNotFound, "read", p, "no such file")
	}
	return []byte(d), p, nil
}

// Interface guards
var _ backend.ContainerNetworks = (*fakeNetContainers)(nil)

// Each compose service passes the policy chain as a create: a service
// mounting /etc is denied and nothing of the project is left; a good
// project comes up on its own network, shows its status and goes down;
// the session's networks go with it.
func TestComposeThroughKernel(t *testing.T) {
	ctx := context.Background()
	fc := &fakeNetContainers{fakeContainers: newFakeContainers(), networks: map[string]backend.NetworkInfo{}, files: map[string]string{
		"/r/bad.yaml":  "services:\n  a: {image: i}\n  b: {image: i, depends_on: [a], volumes: [\"/etc:/host-etc\"]}\n",
		"/r/good.yaml": "name: demo\nservices:\n  web: {image: i, command: serve}\n  client: {image: i, depends_on: [web]}\n",
	}}
	k := safetyKernel(t, testConfig(t), nil, fc)
	s := session(t, k, "c")
	_, err := s.Containers(ctx, ContainerRequest{Operation: "compose_up", File: "/r/bad.yaml", Project: "bad", MountCwd: new(bool)})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "allow_sensitive_mounts") || !strings.Contains(err.Error(), "service b") {
		t.Fatalf("compose_up with an /etc mount: %v; want service b denied naming allow_sensitive_mounts", err)
	}
	if len(fc.live) != 0 || len(fc.networks) != 0 {
		t.Fatalf("after the denied compose_up: containers %v, networks %v; want none", fc.live, fc.networks)
	}
	resp, err := s.Containers(ctx, ContainerRequest{Operation: "compose_up", File: "/r/good.yaml", MountCwd: new(bool)})
	if err != nil || resp.Compose == nil || resp.Compose.Project != "demo" || len(resp.Compose.Services) != 2 || resp.Compose.Services[0].Service != "web" {
		t.Fatalf("compose_up = %+v, %v; want demo with web first", resp.Compose, err)
	}
	web := fc.created[len(fc.created)-2]
	if web.Name != "demo-web" || web.Network != "demo-net" || web.Service != "web" || strings.Join(web.Command, " ") != "/bin/sh -c serve" {
		t.Errorf("web's spec: %+v", web)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "compose_up", File: "/r/good.yaml", MountCwd: new(bool)}); !errors.Is(err, backend.ErrExist) {
		t.Errorf("a second compose_up of the project: %v, want ErrExist", err)
	}
	st, err := s.Containers(ctx, ContainerRequest{Operation: "compose_status", Project: "demo"})
	if err != nil || len(st.Compose.Services) != 2 || st.Compose.Network != "demo-net" {
		t.Fatalf("compose_status = %+v, %v", st.Compose, err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "compose_down", Project: "demo"}); err != nil {
		t.Fatal(err)
	}
	if len(fc.live) != 0 || len(fc.networks) != 0 {
		t.Errorf("after compose_down: containers %v, networks %v", fc.live, fc.networks)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create_network", Name: "n1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create_network", Name: "n2", Egress: true}); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "allow_network_egress") {
		t.Errorf("a network with egress: %v; want a denial naming allow_network_egress", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(fc.networks) != 0 {
		t.Errorf("networks after the session closed: %v", fc.networks)
	}
}
