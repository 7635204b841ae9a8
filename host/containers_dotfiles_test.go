package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

func TestDotfilesRepoValidation(t *testing.T) {
	ws := dotfilesWhere{workspace: true, mounts: []backend.ContainerMount{{HostPath: "/srv/dots", ContainerPath: "/dots"}}}
	ok := map[string]string{
		"https://github.com/me/dotfiles":       "https://github.com/me/dotfiles",
		"ssh://git@github.com/me/dotfiles.git": "ssh://git@github.com/me/dotfiles.git",
		"git@github.com:me/dotfiles.git":       "git@github.com:me/dotfiles.git",
		"file:///workspace/dots":               "file:///workspace/dots",
		"/workspace/dots/":                     "file:///workspace/dots",
		"dots":                                 "file:///workspace/dots",
		"sub/../dots":                          "file:///workspace/dots",
		"/dots/mine":                           "file:///dots/mine",
		"/srv/dots/mine":                       "file:///dots/mine", // a mount's host path, as the container sees it
		"file:///srv/dots":                     "file:///dots",
	}
	for repo, want := range ok {
		got, err := dotfilesRepo(repo, ws)
		if err != nil || got != want {
			t.Errorf("repo %q: %q, %v; want %q", repo, got, err, want)
		}
	}
	bad := map[string]string{
		"ext::sh -c touch% /tmp/pwned": "spaces",
		"ext::sh":                      "remote helpers",
		"fd::17":                       "remote helpers",
		"--upload-pack=touch /tmp/x":   "option",
		"-uhttps://x":                  "option",
		"gopher://example.com/x":       "use an https, ssh, git or file URL",
		"file:///etc/dots":             "not visible in the container",
		"/home/me/dotfiles":            "not visible in the container",
		"../dots":                      "stays inside",
		"https://x/\n":                 "control",
		"":                             "stays inside",
	}
	for repo, want := range bad {
		if _, err := dotfilesRepo(repo, ws); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("repo %q: %v; want ErrInvalid saying %q", repo, err, want)
		}
	}
	if _, err := dotfilesRepo("dots", dotfilesWhere{}); err == nil || !strings.Contains(err.Error(), "mount_cwd") {
		t.Errorf("a workspace path without the workspace mounted: %v", err)
	}
}

func TestDotfilesPlanValidation(t *testing.T) {
	ws := dotfilesWhere{workspace: true}
	bad := []DotfilesRequest{
		{Repo: "dots", Script: "../escape.sh"},
		{Repo: "dots", Script: "/bin/sh"},
		{Repo: "dots", Script: "-rf"},
		{Repo: "dots", Branch: "--upload-pack=x"},
		{Repo: "dots", Target: "~/../../etc"},
		{Repo: "dots", Target: "/"},
		{Repo: "dots", Target: "~"},
		{Repo: "dots", Target: "~root/x"},
		{Inline: map[string]string{"../.bashrc": "x"}},
		{Inline: map[string]string{"/etc/passwd": "x"}},
		{Inline: map[string]string{".big": strings.Repeat("x", maxDotfilesInlineBytes+1)}},
	}
	for _, r := range bad {
		if p, err := planDotfiles(&r, ws); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%+v: %+v, %v; want ErrInvalid", r.Script+r.Branch+r.Target, p, err)
		}
	}
	p, err := planDotfiles(&DotfilesRequest{Repo: "https://ada:s3cret@example.com/d.git", Target: "~/cfg/dots",
		Inline: map[string]string{"~/.config/x/y.conf": "a", ".vimrc": "b"}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if p.target != "cfg/dots" || p.shownTo != "~/cfg/dots" || strings.Contains(p.shown, "s3cret") || p.repo != "https://ada:s3cret@example.com/d.git" {
		t.Errorf("plan %+v: want a home-relative target, the secret masked in what is shown only", p)
	}
	if len(p.inline) != 2 || p.inline[0].Path != ".config/x/y.conf" || p.inline[1].Path != ".vimrc" {
		t.Errorf("inline %+v: want home-relative paths, sorted", p.inline)
	}
	if got := maskRepo("https://ghp_token@github.com/me/d"); strings.Contains(got, "ghp_token") {
		t.Errorf("a token as the user of an https URL is shown: %s", got)
	}
	if p, err := planDotfiles(&DotfilesRequest{}, ws); err != nil || !strings.Contains(p.skipped, "no dotfiles repository configured") {
		t.Errorf("nothing configured: %+v, %v; want skipped with guidance", p, err)
	}
}

// A request overrides the configuration field by field only when it names
// no repository; a purpose without dotfiles drops the configured ones.
func TestDotfilesEffective(t *testing.T) {
	cfg := DotfilesConfig{Repo: "https://example.com/d", Branch: "main", Script: "go.sh"}
	if d := effectiveDotfiles(nil, DotfilesConfig{}, true); d != nil {
		t.Errorf("nothing configured, nothing asked: %+v", d)
	}
	if d := effectiveDotfiles(nil, cfg, true); d == nil || d.Repo != cfg.Repo || d.Script != "go.sh" {
		t.Errorf("configured: %+v", d)
	}
	if d := effectiveDotfiles(&DotfilesRequest{Branch: "dev"}, cfg, true); d.Repo != cfg.Repo || d.Branch != "dev" || d.Script != "go.sh" {
		t.Errorf("a request overriding the branch: %+v", d)
	}
	if d := effectiveDotfiles(&DotfilesRequest{Repo: "other"}, cfg, true); d.Branch != "" || d.Script != "" {
		t.Errorf("another repository takes nothing of the configured one: %+v", d)
	}
	if d := effectiveDotfiles(nil, cfg, false); d != nil {
		t.Errorf("a purpose without dotfiles: %+v", d)
	}
	if d := effectiveDotfiles(&DotfilesRequest{Repo: "x"}, cfg, false); d == nil || d.Repo != "x" {
		t.Errorf("an explicit request under such a purpose: %+v", d)
	}
}

func TestDotfilesScriptResolution(t *testing.T) {
	all := []string{"Makefile", "script/setup", "bootstrap.sh", "setup.sh", "install.sh", ".bashrc"}
	for i, want := range []string{"install.sh", "setup.sh", "bootstrap.sh", "script/setup", "Makefile"} {
		// Each candidate wins once those before it are gone.
		present := slices.DeleteFunc(slices.Clone(all), func(f string) bool {
			return slices.Index(dotfilesScripts, f) < i && slices.Contains(dotfilesScripts, f)
		})
		if s, link, err := resolveDotfiles("", present, nil); s != want || link != nil || err != nil {
			t.Errorf("with %v: %q %v %v, want %s", present, s, link, err, want)
		}
	}
	if s, _, err := resolveDotfiles("bin/go", []string{"install.sh", "bin/go"}, nil); s != "bin/go" || err != nil {
		t.Errorf("explicit script: %q, %v", s, err)
	}
	if _, _, err := resolveDotfiles("bin/go", []string{"install.sh"}, nil); err == nil || !strings.Contains(err.Error(), "bin/go") {
		t.Errorf("a missing explicit script falls back rather than failing: %v", err)
	}
	s, link, err := resolveDotfiles("", []string{".vimrc", ".bashrc", ".gitconfig", "README"}, []backend.ContainerFile{{Path: ".gitconfig"}})
	if s != "" || err != nil || strings.Join(link, ",") != ".bashrc,.vimrc" {
		t.Errorf("smart-symlink: %q %v %v; want .bashrc and .vimrc (.gitconfig was written inline)", s, link, err)
	}
}

// fakeDotExec answers the dotfiles steps as a container would: the files
// the repository has, and an exit code per step.
type fakeDotExec struct {
	files []string
	fail  map[string]int // step → exit code
	argvs [][]string
}

func (f *fakeDotExec) run(_ context.Context, req backend.ExecRequest) (backend.ExecResult, error) {
	f.argvs = append(f.argvs, req.Argv)
	step := map[string]string{dotfilesClone: "clone", dotfilesCloneLocal: "clone", dotfilesProbe: "probe", dotfilesRun: "script", dotfilesLink: "link"}[req.Argv[2]]
	if code := f.fail[step]; code != 0 {
		return backend.ExecResult{ExitCode: code, Stderr: "fatal: " + step + " went wrong\n"}, nil
	}
	if step == "probe" {
		var out []string
		for _, a := range req.Argv[5:] {
			if slices.Contains(f.files, a) {
				out = append(out, a)
			}
		}
		return backend.ExecResult{Stdout: strings.Join(out, "\n")}, nil
	}
	return backend.ExecResult{Stdout: step + " ok"}, nil
}

func TestDotfilesApply(t *testing.T) {
	ctx := context.Background()
	plan := func(r DotfilesRequest) *dotfilesPlan {
		p, err := planDotfiles(&r, dotfilesWhere{workspace: true})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := &fakeDotExec{files: []string{"setup.sh", ".bashrc"}}
	res, note := applyDotfiles(ctx, f.run, plan(DotfilesRequest{Repo: "dots", Branch: "dev"}))
	clone := strings.Join(f.argvs[0], " ")
	if !strings.Contains(clone, "-c protocol.allow=never") || !strings.Contains(clone, "credential.https://github.com.helper=!f()") || !strings.HasSuffix(clone, "clone --depth 1 --branch dev -- file:///workspace/dots") ||
		f.argvs[0][4] != ".dotfiles" {
		t.Errorf("clone argv %q", f.argvs[0])
	}
	if res.Script != "setup.sh" || res.Failed != "" || note != "" || res.Output != "script ok" || res.Target != "~/.dotfiles" {
		t.Errorf("setup.sh: %+v, note %q", res, note)
	}
	f = &fakeDotExec{files: []string{"install.sh"}, fail: map[string]int{"script": 3}}
	res, note = applyDotfiles(ctx, f.run, plan(DotfilesRequest{Repo: "dots"}))
	if res.Failed != "script" || res.ExitCode != 3 || !strings.Contains(res.Output, "script went wrong") ||
		!strings.Contains(note, "install.sh failed (exit 3: fatal: script went wrong)") {
		t.Errorf("a failing script: %+v, note %q", res, note)
	}
	f = &fakeDotExec{fail: map[string]int{"clone": 128}}
	res, note = applyDotfiles(ctx, f.run, plan(DotfilesRequest{Repo: "https://u:tok@example.com/d"}))
	if res.Failed != "clone" || res.ExitCode != 128 || len(f.argvs) != 1 || strings.Contains(note, "tok") || !strings.Contains(note, "cloning https://u:xxxxx@example.com/d failed") {
		t.Errorf("a failing clone: %+v, note %q", res, note)
	}
	f = &fakeDotExec{files: []string{".bashrc", ".tmux.conf"}}
	res, _ = applyDotfiles(ctx, f.run, plan(DotfilesRequest{Repo: "dots"}))
	if strings.Join(res.Linked, ",") != ".bashrc,.tmux.conf" || strings.Join(f.argvs[2][5:], ",") != ".bashrc,.tmux.conf" {
		t.Errorf("smart-symlink: %+v, argv %q", res, f.argvs[2])
	}
	f = &fakeDotExec{files: []string{"README.md"}}
	if res, note = applyDotfiles(ctx, f.run, plan(DotfilesRequest{Repo: "dots"})); res.Failed != "" || !strings.Contains(note, "nothing was applied") {
		t.Errorf("nothing to apply: %+v, note %q", res, note)
	}
	f = &fakeDotExec{}
	if res, _ = applyDotfiles(ctx, f.run, plan(DotfilesRequest{Skip: true, Repo: "dots"})); res.Skipped == "" || len(f.argvs) != 0 {
		t.Errorf("skip: %+v, ran %q", res, f.argvs)
	}
}

// Through the kernel: a bad dotfiles request creates nothing; inline
// files go with the create; the policy sees the repository, masked.
func TestDotfilesKernelPath(t *testing.T) {
	k, fc := containersKernel(t, nil)
	k.cfg.Dotfiles = DotfilesConfig{Repo: "https://tok@example.com/dots"}
	s := session(t, k, "dots")
	ctx := context.Background()
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Dotfiles: &DotfilesRequest{Repo: "ext::sh"}}); !errors.Is(err, backend.ErrInvalid) || len(fc.created) != 0 {
		t.Fatalf("ext:: repository: %v (created %d)", err, len(fc.created))
	}
	resp, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "a", Dotfiles: &DotfilesRequest{Inline: map[string]string{".inputrc": "set bell-style none\n"}}})
	if err != nil {
		t.Fatal(err)
	}
	spec := fc.created[0]
	if n := len(spec.Files); n != 1 || spec.Files[0].Path != ".inputrc" || !spec.Provisioning["dotfiles"] {
		t.Errorf("inline files in the spec: %+v, provisioning %v", spec.Files, spec.Provisioning)
	}
	if d := resp.Dotfiles; d == nil || d.Source != "https://xxxxx@example.com/dots" || strings.Join(d.Inline, ",") != ".inputrc" {
		t.Errorf("dotfiles result %+v", resp.Dotfiles)
	}
	// As Containers resolves it: no purpose takes the configured dotfiles.
	chk, err := s.containerCheck(ctx, fc, backend.ContainerOwner{Session: "dots"}, ContainerRequest{Operation: "create", ProfileDotfiles: true})
	if err != nil || chk.DotfilesRepo != "https://xxxxx@example.com/dots" {
		t.Errorf("the policy sees dotfiles_repo %q (%v); want the configured one, masked", chk.DotfilesRepo, err)
	}
	resp, err = s.Containers(ctx, ContainerRequest{Operation: "create", Name: "b", Dotfiles: &DotfilesRequest{Skip: true}})
	if err != nil || resp.Dotfiles == nil || resp.Dotfiles.Skipped == "" || fc.created[1].Provisioning["dotfiles"] {
		t.Errorf("skip: %+v, %v", resp.Dotfiles, err)
	}
	k.cfg.Dotfiles = DotfilesConfig{}
	if resp, err = s.Containers(ctx, ContainerRequest{Operation: "create", Name: "c"}); err != nil || resp.Dotfiles != nil {
		t.Errorf("no dotfiles anywhere: %+v, %v; want no dotfiles field", resp.Dotfiles, err)
	}
}

func TestDotfilesConfigChecked(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Dotfiles = DotfilesConfig{Repo: "ext::sh"}
	if err := cfg.Validate(); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "[dotfiles]") {
		t.Errorf("[dotfiles] repo = ext::sh: %v", err)
	}
	cfg.Dotfiles = DotfilesConfig{Branch: "main"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "without repo") {
		t.Errorf("[dotfiles] without repo: %v", err)
	}
	cfg.Dotfiles = DotfilesConfig{Repo: "git@github.com:me/dots.git", Target: "~/.dots"}
	if err := cfg.Validate(); err != nil {
		t.Errorf("a good [dotfiles]: %v", err)
	}
}

// container_safety's dotfiles_repos restricts where dotfiles come from,
// the configured repository included.
func TestDotfilesReposPolicy(t *testing.T) {
	k, fc := containersKernel(t, map[string]any{"dotfiles_repos": []any{"https://github.com/my-org/"}})
	s := session(t, k, "restricted")
	ctx := context.Background()
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "a", Dotfiles: &DotfilesRequest{Repo: "https://github.com/my-org/dots"}}); err != nil {
		t.Errorf("an allowed repository: %v", err)
	}
	k.cfg.Dotfiles = DotfilesConfig{Repo: "https://example.com/dots"}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "b"}); !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "dotfiles_repos") {
		t.Errorf("a configured repository outside dotfiles_repos: %v", err)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "c", Dotfiles: &DotfilesRequest{Skip: true}}); err != nil {
		t.Errorf("skip under dotfiles_repos: %v", err)
	}
	if len(fc.created) != 2 {
		t.Errorf("created %d containers, want 2 (the denied one never reaches the backend)", len(fc.created))
	}
}
