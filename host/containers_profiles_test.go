package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/gittest"
)

func TestProfileResolution(t *testing.T) {
	for _, name := range []string{"python", "node", "rust", "go", "general"} {
		p, err := Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		// try-repo resolves its policy check with general's forwarding
		// before it knows the purpose: every detectable profile must agree.
		g, _ := Profile("general")
		if p.ForwardGit != g.ForwardGit || p.ForwardGh != g.ForwardGh || p.ForwardSSH != g.ForwardSSH {
			t.Errorf("%s forwards differently from general: %+v", name, p)
		}
		if !p.Dotfiles || !p.ForwardGit || p.ForwardGh || p.ForwardSSH {
			t.Errorf("%s: want dotfiles and git forwarding only, got %+v", name, p)
		}
	}
	req := applyProfile(ContainerRequest{Operation: "create", Purpose: "python"}, mustProfile(t, "python"), "localhost/wai-python:abc")
	if req.Image != "localhost/wai-python:abc" || !req.ForwardGit || !req.ProfileDotfiles || req.Env["PYTHONUNBUFFERED"] != "1" ||
		len(req.SetupCommands) != 1 || !strings.Contains(req.SetupCommands[0], "venv") {
		t.Errorf("python: %+v", req)
	}
	clean := applyProfile(ContainerRequest{Purpose: "clean"}, mustProfile(t, "clean"), "localhost/wai-general:abc")
	if clean.ForwardGit || clean.ForwardGh || clean.ForwardSSH || clean.ProfileDotfiles || clean.Image != "localhost/wai-general:abc" {
		t.Errorf("clean forwards or applies dotfiles: %+v", clean)
	}
	if _, err := Profile("cobol"); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "python") ||
		!strings.Contains(err.Error(), "try-repo") || !strings.Contains(err.Error(), "clean") {
		t.Errorf("unknown purpose: %v, want ErrInvalid listing the profiles", err)
	}
}

// Explicit parameters win over the profile, false and empty ones too when
// the request says it gave them.
func TestProfileExplicitWins(t *testing.T) {
	raw := `{"operation":"create","purpose":"go","image":"my/img","forward_git":false,"setup_commands":[],"env":{"GOFLAGS":"-mod=vendor","X":"1"}}`
	req, err := DecodeContainerRequest([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := applyProfile(req, mustProfile(t, "go"), "localhost/wai-go:abc")
	if got.Image != "my/img" || got.ForwardGit || len(got.SetupCommands) != 0 {
		t.Errorf("explicit image, forward_git=false, setup_commands=[] lost: %+v", got)
	}
	if got.Env["GOFLAGS"] != "-mod=vendor" || got.Env["X"] != "1" || got.Env["GOPROXY"] != "off" {
		t.Errorf("env merge: %v, want explicit keys over the profile's", got.Env)
	}
	// Not given: the profile fills in.
	req, _ = DecodeContainerRequest([]byte(`{"operation":"create","purpose":"go"}`))
	got = applyProfile(req, mustProfile(t, "go"), "localhost/wai-go:abc")
	if got.Image != "localhost/wai-go:abc" || !got.ForwardGit {
		t.Errorf("profile defaults not applied: %+v", got)
	}
	// A Go caller without Given: non-zero values are given, zero ones not.
	got = applyProfile(ContainerRequest{Purpose: "rust", ForwardSSH: true, Image: "x/y"}, mustProfile(t, "rust"), "localhost/wai-rust:abc")
	if got.Image != "x/y" || !got.ForwardSSH || !got.ForwardGit {
		t.Errorf("Go request: %+v", got)
	}
	names := ProfileNames()
	if want := []string{"clean", "general", "go", "node", "python", "rust", "try-repo"}; !reflect.DeepEqual(names, want) {
		t.Errorf("ProfileNames = %v, want %v", names, want)
	}
}

func mustProfile(t *testing.T, name string) ContainerProfile {
	t.Helper()
	p, err := Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRepoSource(t *testing.T) {
	for _, ok := range []string{"https://example.com/a/b.git", "ssh://git@h/x", "git://h/x", "file:///tmp/x", "src/proj", "proj"} {
		if _, err := repoSource(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"ext::sh -c touch% /tmp/pwned", "fd::3", "/etc", "../up", "-u", "ftp://h/x"} {
		if _, err := repoSource(bad); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
	if ws, _ := repoSource("./a/../b"); ws != "b" {
		t.Errorf("workspace path %q", ws)
	}
	if p := localRepoPath("file:///srv/repo/../x"); p != "/srv/x" {
		t.Errorf("localRepoPath = %q", p)
	}
	if n := repoName("https://h/o/project.git/"); n != "project" {
		t.Errorf("repoName = %q", n)
	}
}

// try-repo's detection, for each marker, on real git repositories cloned
// through file:// as a remote one would be.
func TestTryRepoDetection(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required on CI")
		}
		t.Skip("no git")
	}
	cases := []struct {
		files           []string
		purpose, marker string
	}{
		{[]string{"Cargo.toml", "setup.py"}, "rust", "Cargo.toml"},
		{[]string{"pyproject.toml"}, "python", "pyproject.toml"},
		{[]string{"setup.py"}, "python", "setup.py"},
		{[]string{"requirements.txt", "package.json"}, "python", "requirements.txt"},
		{[]string{"package.json"}, "node", "package.json"},
		{[]string{"go.mod"}, "go", "go.mod"},
		{[]string{"Dockerfile"}, "general", "Dockerfile"},
		{[]string{"README"}, "general", ""},
	}
	for _, c := range cases {
		src := gitRepo(t, c.files...)
		dst := filepath.Join(t.TempDir(), "clone")
		if err := gitClone(context.Background(), "file://"+src, dst); err != nil {
			t.Fatal(err)
		}
		p, m, note := detectPurpose(func(n string) bool { return fileExists(filepath.Join(dst, n)) })
		if p != c.purpose || m != c.marker || note != "" {
			t.Errorf("%v: %s %q %q, want %s %q", c.files, p, m, note, c.purpose, c.marker)
		}
		tarball, err := tarDir(dst)
		if err != nil || !strings.Contains(string(tarball), ".git/HEAD") {
			t.Errorf("tarball of the clone: %v", err)
		}
	}
	if err := gitClone(context.Background(), "file://"+t.TempDir(), filepath.Join(t.TempDir(), "x")); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("clone of a non-repository: %v", err)
	}
}

// gitRepo makes a git repository holding files (each with a line of
// content) and returns its path.
func gitRepo(t *testing.T, files ...string) string {
	t.Helper()
	m := map[string]string{}
	for _, f := range files {
		m[f] = f + "\n"
	}
	return gittest.Repo(t, t.TempDir(), m)
}
