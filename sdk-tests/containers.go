package sdktests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// RunContainers checks backend.Containers, when b.Caps.Containers declares
// it: the lifecycle, env and provisioning, refused privileges, owners
// kept apart, exec in a stopped container, timeouts. Every container it
// makes is destroyed when the check ends.
func RunContainers(t *testing.T, b Backend) {
	if b.Caps.Containers == nil {
		t.Skip("the backend declares no Caps.Containers")
	}
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, c backend.Containers, o backend.ContainerOwner)
	}{
		{"lifecycle", checkContainerLifecycle},
		{"refusals", checkContainerRefusals},
		{"owners apart", checkContainerOwners},
		{"exec timeout", checkContainerTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, owner := b.Caps.Containers(t)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				if _, err := cs.DestroyContainers(ctx, owner, false); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			c.fn(t, cs, owner)
		})
	}
}

func mustCreate(t *testing.T, c backend.Containers, spec backend.ContainerSpec) backend.ContainerInfo {
	t.Helper()
	info, err := c.CreateContainer(t.Context(), spec)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	return info
}

func checkContainerLifecycle(t *testing.T, c backend.Containers, o backend.ContainerOwner) {
	ctx := t.Context()
	info := mustCreate(t, c, backend.ContainerSpec{Owner: o, Purpose: "conformance", Network: "none",
		Env: map[string]string{"EXPLICIT": "x"},
		// A list passes exactly its names, but never wai's own (WAI_*).
		EnvPassthrough: backend.EnvPassthrough{Names: []string{"SDK_API_KEY", "WAI_SDK_TOKEN"}},
		HostEnv:        map[string]string{"SDK_API_KEY": "secret-value", "SDK_OTHER": "no", "WAI_SDK_TOKEN": "wai-own"},
		Files:          []backend.ContainerFile{{Path: ".config/sdk/file", Data: []byte("provisioned\n"), Mode: 0o600}}})
	if info.Name == "" || strings.Join(info.EnvKeys, ",") != "EXPLICIT,SDK_API_KEY" {
		t.Errorf("create answered %+v: want a name and env keys EXPLICIT,SDK_API_KEY", info)
	}
	ref := backend.ContainerRef{Owner: o, Name: info.Name}
	res, err := c.ExecContainer(ctx, ref, backend.ExecRequest{Shell: `echo "$EXPLICIT $SDK_API_KEY ${SDK_OTHER:-unset}"; cat ~/.config/sdk/file; exit 3`})
	if err != nil || res.Stdout != "x secret-value unset\nprovisioned\n" || res.ExitCode != 3 {
		t.Errorf("exec: %+v, %v", res, err)
	}
	ls, err := c.ListContainers(ctx, o)
	if err != nil || len(ls) != 1 || ls[0].Name != info.Name || !ls[0].Running {
		t.Errorf("list: %+v, %v", ls, err)
	}
	if h, err := c.InteractiveHint(ctx, ref); err != nil || !strings.Contains(h.Command, info.Name) || h.Shell != "bash" {
		t.Errorf("interactive hint: %+v, %v", h, err)
	}
	if _, err := c.DestroyContainer(ctx, ref, true); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if _, err := c.ContainerStatus(ctx, ref, false); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("status after destroy: %v, want ErrNotFound", err)
	}
	if _, err := c.ExecContainer(ctx, ref, backend.ExecRequest{Shell: "true"}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("exec after destroy: %v, want ErrNotFound", err)
	}
}

func checkContainerRefusals(t *testing.T, c backend.Containers, o backend.ContainerOwner) {
	for name, spec := range map[string]backend.ContainerSpec{
		"privileged": {Privileged: true}, "host network": {Network: "host"}, "host pid": {HostPID: true},
		"host ipc": {HostIPC: true}, "devices": {Devices: []string{"/dev/null"}},
	} {
		spec.Owner = o
		if info, err := c.CreateContainer(t.Context(), spec); !errors.Is(err, backend.ErrPermission) {
			t.Errorf("%s: created %+v, %v; want ErrPermission", name, info, err)
		}
	}
	if ls, _ := c.ListContainers(t.Context(), o); len(ls) != 0 {
		t.Errorf("a refused create left %+v", ls)
	}
}

func checkContainerOwners(t *testing.T, c backend.Containers, o backend.ContainerOwner) {
	info := mustCreate(t, c, backend.ContainerSpec{Owner: o, Network: "none"})
	other := backend.ContainerOwner{User: "sdkother", Session: o.Session}
	ref := backend.ContainerRef{Owner: other, Name: info.Name}
	if _, err := c.ExecContainer(t.Context(), ref, backend.ExecRequest{Shell: "true"}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's exec: %v, want ErrNotFound", err)
	}
	if _, err := c.DestroyContainer(t.Context(), ref, true); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another user's destroy: %v, want ErrNotFound", err)
	}
	if ls, err := c.ListContainers(t.Context(), other); err != nil || len(ls) != 0 {
		t.Errorf("another user lists %+v, %v", ls, err)
	}
}

func checkContainerTimeout(t *testing.T, c backend.Containers, o backend.ContainerOwner) {
	info := mustCreate(t, c, backend.ContainerSpec{Owner: o, Network: "none"})
	ref := backend.ContainerRef{Owner: o, Name: info.Name}
	res, err := c.ExecContainer(t.Context(), ref, backend.ExecRequest{Shell: "echo started; sleep 60", Timeout: time.Second})
	if err != nil || !res.TimedOut || res.ExitCode != backend.TimeoutExitCode || res.Stdout != "started\n" {
		t.Errorf("timeout: %+v, %v; want timed_out, exit 124 and the partial output", res, err)
	}
	if res, err := c.ExecContainer(t.Context(), ref, backend.ExecRequest{Shell: "echo alive"}); err != nil || res.Stdout != "alive\n" {
		t.Errorf("the container after a timeout: %+v, %v", res, err)
	}
}
