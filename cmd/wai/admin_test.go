package main

import (
	"strings"
	"testing"
	"time"
)

// The test binary of wai is built without the Podman tags (see TestMain),
// so these check what a plain `go build` user gets: every Podman
// subcommand says how to build the backend in.
func TestAdminWithoutPodman(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	r := e.run("preflight", "--config", e.config)
	if r.code != exitChecksFailed || !strings.Contains(r.stdout, "FAIL  podman backend built in") || !strings.Contains(r.stdout, "make build") {
		t.Errorf("wai preflight without the backend: want exit 1 and a failing check saying how to build it in; got %v", r)
	}
	for _, args := range [][]string{{"ps"}, {"gc"}, {"gc", "--all"}} {
		r := e.run(append(args, "--config", e.config)...)
		if r.code != exitError || !strings.Contains(r.stderr, "built without the podman backend") || !strings.Contains(r.stderr, "make build") {
			t.Errorf("wai %s without the backend: want exit 2 saying how to build it in; got %v", strings.Join(args, " "), r)
		}
	}
	r = e.run("ps", "extra")
	if r.code != exitError || !strings.Contains(r.stderr, "takes no arguments") {
		t.Errorf("wai ps extra: want a usage error; got %v", r)
	}
}

func TestAgo(t *testing.T) {
	for d, want := range map[string]string{"-1s": "0s", "59s": "59s", "61s": "1m01s", "3h5m": "3h05m", "72h": "3d"} {
		dur, err := time.ParseDuration(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := ago(dur); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
}
