//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// environmentOf is what a backend of the given config says of its
// commands' environment; nothing is opened.
func environmentOf(t *testing.T, extra map[string]any) backend.Environment {
	t.Helper()
	raw, err := json.Marshal(extra)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(raw, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return (&Backend{cfg: cfg}).Environment()
}

// homeCases are $HOME values and whether a command can write into them
// in a fresh container: only what exists there and is writable, /tmp and
// /workspace themselves; a directory below them exists in no fresh
// container, and the rest of the root is read-only.
var homeCases = []struct {
	home     string
	writable bool
}{
	{"/tmp", true},
	{"/workspace", true},
	{"/tmp/home", false},
	{"/workspace/home", false},
	{"/tmpfoo", false},
	{"/home/agent", false},
}

// The environment follows the config: /tmp is scratch of tmpfs_size that
// goes with the container after idle_timeout, and $HOME is the env's
// (the image's when it sets none), writable only where it is.
func TestEnvironmentFromConfig(t *testing.T) {
	t.Parallel()
	want := backend.Environment{ScratchDir: "/tmp", ScratchBytes: 64 << 20, ScratchIdle: 15 * time.Minute}
	if got := environmentOf(t, nil); got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	want = backend.Environment{ScratchDir: "/tmp", ScratchBytes: 48 << 20, ScratchIdle: 9 * time.Minute, Home: "/home/agent"}
	if got := environmentOf(t, map[string]any{"tmpfs_size": "48m", "idle_timeout": "9m", "env": map[string]any{"HOME": "/home/agent"}}); got != want {
		t.Errorf("tmpfs_size 48m, idle_timeout 9m, HOME /home/agent: %+v, want %+v", got, want)
	}
	for _, c := range homeCases {
		got := environmentOf(t, map[string]any{"env": map[string]any{"HOME": c.home}})
		if got.Home != c.home || got.HomeWritable != c.writable {
			t.Errorf("HOME=%s: said %q writable %v, want writable %v", c.home, got.Home, got.HomeWritable, c.writable)
		}
	}
}

// What Environment says holds in a real container: its scratch takes a
// file and has the size said, the rest of the root takes none, the
// image's $HOME is as unwritable as said, and each configured $HOME is
// writable exactly when it is said to be (one container serves all: a
// command's HOME is what the config's env would give it).
func TestEnvironmentIsTrue(t *testing.T) {
	t.Parallel()
	b := newTestBackend(t, backend.Limits{}, map[string]any{"tmpfs_size": "24m"})
	w := openTest(t, b, false)
	e := b.Environment()
	res := sh(t, w, fmt.Sprintf(`touch %[1]s/w && echo scratch-ok; df -k %[1]s | tail -1; touch "$HOME/w" 2>/dev/null && echo home-rw; touch /w 2>/dev/null && echo root-rw; echo "home=$HOME"`, e.ScratchDir))
	for _, want := range []string{"scratch-ok", fmt.Sprintf(" %d ", e.ScratchBytes>>10)} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("the scratch %s is not as said (%q missing): %q %q", e.ScratchDir, want, res.Stdout, res.Stderr)
		}
	}
	if e.Home != "" || e.HomeWritable || strings.Contains(res.Stdout, "home-rw") || strings.Contains(res.Stdout, "root-rw") {
		t.Errorf("said $HOME %q writable %v; the container: %q", e.Home, e.HomeWritable, res.Stdout)
	}
	for _, c := range homeCases {
		said := environmentOf(t, map[string]any{"env": map[string]any{"HOME": c.home}}).HomeWritable
		res := run(t, w, backend.ExecRequest{Shell: `touch "$HOME/.wai-probe" && echo home-rw`, Env: map[string]string{"HOME": c.home}})
		if got := strings.Contains(res.Stdout, "home-rw"); got != said {
			t.Errorf("HOME=%s: said writable %v, but a command's write there succeeded: %v (%q)", c.home, said, got, res.Stderr)
		}
	}
}
