package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// describedFake is a fake backend that says what its commands find besides
// the workspace (backend.Describer), as the podman backend does.
type describedFake struct{ *fakeBackend }

// fakeEnvironment is what every describedFake says; no bundled backend
// says it, so finding it proves it came from the fake.
var fakeEnvironment = backend.Environment{ScratchDir: "/scratch", ScratchBytes: 16 << 20, ScratchIdle: 5 * time.Minute, Home: "/home/agent"}

func (describedFake) Environment() backend.Environment { return fakeEnvironment }

// describedFakeName is the name the fake is registered under, for the
// kernel to open by name as it opens podman.
const describedFakeName = "described-fake"

func init() {
	backend.Register(describedFakeName, func(context.Context, backend.Options) (backend.Backend, error) {
		return describedFake{newFake(describedFakeName, true)}, nil
	})
}

// A backend that describes its environment is described to the model
// whether it was handed in (WithBackend) or opened by name: Info carries
// its Environment either way, and the sandboxed one's command tools say
// where commands can write. A backend opened by a name wai does not know
// is told as unsandboxed (it vouches for nothing), so only Info shows its
// environment.
func TestEveryWayOfChoosingDescribesTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name      string
		backend   string // cfg.Backend; "" to hand the fake in
		sandboxed bool
	}{
		{name: "injected", sandboxed: true},
		{name: "by name", backend: describedFakeName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			opts := []Option{withTools(shellTools{demoTools("demo")}, nil)}
			if tc.backend == "" {
				opts = append(opts, WithBackend(describedFake{newFake("described", true)}))
			} else {
				cfg.Backend = tc.backend
			}
			k, info := chosenInfo(t, cfg, opts...)
			if info.Environment == nil || *info.Environment != fakeEnvironment || info.Sandboxed != tc.sandboxed {
				t.Fatalf("Info: %+v (environment %+v), want the fake's environment, sandboxed %v", info, info.Environment, tc.sandboxed)
			}
			want := "directly on the host"
			if tc.sandboxed {
				want = "/workspace is writable and kept; /scratch is writable scratch that goes with the container"
			}
			tools := k.Tools()
			if len(tools) == 0 {
				t.Fatal("no tools to read the descriptions of")
			}
			for _, tool := range tools {
				if !strings.Contains(tool.Description, want) {
					t.Errorf("%s: the description lacks %q: %q", tool.Name, want, tool.Description)
				}
			}
		})
	}
}

// chosenInfo builds a kernel on cfg and returns it with what Info says it
// runs on; the kernel is closed when the test ends.
func chosenInfo(t *testing.T, cfg Config, opts ...Option) (*Kernel, BackendInfo) {
	t.Helper()
	ctx := context.Background()
	k := openKernel(t, cfg, opts...)
	info, err := k.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return k, info
}
