package main

import (
	"bytes"
	"context"
	"flag"
	"runtime"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	r := newEnv(t, "").run("version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("wai version: %v", r)
	}
	// The version stamped with -ldflags, the toolchain, and the backends
	// linked in (host and mock always; podman as a stub without tags).
	for _, want := range []string{"wai " + testVersion + " ", runtime.Version(), "backends: ", "host", "mock"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("wai version output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := newEnv(t, "").run("version", "extra"); r.code != exitError {
		t.Errorf("wai version with an argument: want exit %d; got %v", exitError, r)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	r := e.run()
	if r.code != exitError || !strings.Contains(r.stderr, "usage: wai SUBCOMMAND") {
		t.Errorf("wai with no arguments: want usage on stderr and exit 2; got %v", r)
	}
	for name := range commands {
		if !strings.Contains(r.stderr, "\n  "+name+" ") {
			t.Errorf("usage does not list %q:\n%s", name, r.stderr)
		}
	}
	if r := e.run("help"); r.code != 0 || !strings.Contains(r.stdout, "usage: wai SUBCOMMAND") {
		t.Errorf("wai help: want usage on stdout and exit 0; got %v", r)
	}
	if r := e.run("nosuch"); r.code != exitError || !strings.Contains(r.stderr, `unknown subcommand "nosuch"`) {
		t.Errorf("wai nosuch: want an error and exit 2; got %v", r)
	}
	if r := e.run("help", "exec"); r.code != 0 || !strings.Contains(r.stdout, "-timeout duration") || !strings.Contains(r.stdout, "usage: wai exec") {
		t.Errorf("wai help exec: want the flags on stdout; got %v", r)
	}
	if r := e.run("exec", "-h"); r.code != 0 || !strings.Contains(r.stdout, "-session name") {
		t.Errorf("wai exec -h: want the flags and exit 0; got %v", r)
	}
}

// A subcommand is one registered value: run finds it, parses its flags and
// hands it what is left.
func TestRegistry(t *testing.T) {
	var got []string
	var n int
	register(&command{
		name:    "registry-test",
		summary: "test",
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			fs.IntVar(&n, "n", 0, "a number")
			return func(_ context.Context, _ stdio, args []string) int {
				got = args
				return 42
			}
		},
	})
	defer delete(commands, "registry-test")

	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"registry-test", "-n", "3", "a", "-b"}, strings.NewReader(""), &out, &errb)
	if code != 42 || n != 3 || strings.Join(got, " ") != "a -b" {
		t.Errorf("run: code %d, n %d, args %q; stderr %s", code, n, got, errb.String())
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	register(&command{name: "registry-test"})
}

func TestExitStatus(t *testing.T) {
	cases := []struct {
		res  backend.ExecResult
		want int
	}{
		{backend.ExecResult{ExitCode: 0}, 0},
		{backend.ExecResult{ExitCode: 3}, 3},
		{backend.ExecResult{ExitCode: 255}, 255},
		{backend.ExecResult{ExitCode: -1, Signal: 9}, 137},
		{backend.ExecResult{ExitCode: 143, Signal: 15}, 143},
		{backend.ExecResult{ExitCode: -1}, 1},
		{backend.ExecResult{ExitCode: 300}, 1},
	}
	for _, c := range cases {
		if got := exitStatus(c.res); got != c.want {
			t.Errorf("exitStatus(exit %d, signal %d) = %d, want %d", c.res.ExitCode, c.res.Signal, got, c.want)
		}
	}
}

func TestReadBounded(t *testing.T) {
	if s, err := readBounded(strings.NewReader("12345"), 5); err != nil || s != "12345" {
		t.Errorf("at the limit: %q, %v", s, err)
	}
	_, err := readBounded(strings.NewReader("123456"), 5)
	if backend.KindOf(err) != backend.ErrInvalid {
		t.Errorf("over the limit: want ErrInvalid, got %v", err)
	}
}
