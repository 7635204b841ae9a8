//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/tooltest"
	// Links the podman backend, which internal/tooltest adds to the
	// backends these tests run on under the same tags.
	_ "github.com/wai-dev/wai/plugins/podman"
)

// dotfilesRepos builds the test's dotfiles repositories in the session
// workspace: each install script records that it ran in ~/ran.
const dotfilesRepos = `set -e
export HOME=/tmp GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
mk() { mkdir -p "$1" && cd "$1" && git init -q -b main; }
commit() { git add -A && git commit -qm "$1"; cd /workspace; }
mk r-install
printf '#!/bin/sh\necho "install.sh on $(git branch --show-current)" >> "$HOME/ran"\n' > install.sh && chmod +x install.sh
printf '#!/bin/sh\necho setup.sh >> "$HOME/ran"\n' > setup.sh && chmod +x setup.sh
commit one
cd r-install && git checkout -q -b dev && sed -i 's/install.sh on/dev install.sh on/' install.sh && commit dev
cd r-install && git checkout -q main && cd /workspace
mk r-make
printf 'all:\n\techo Makefile >> $$HOME/ran\n' > Makefile
commit make
mk r-script
mkdir script && printf 'echo "script/setup in $PWD" >> "$HOME/ran"\n' > script/setup
commit script
mk r-link
echo 'alias ll="ls -l"' > .bashrc && echo 'set number' > .vimrc && echo 'not linked' > README
commit link
mk r-fail
printf '#!/bin/sh\necho starting\necho "boom: no such thing" >&2\nexit 7\n' > install.sh && chmod +x install.sh
commit fail
`

type dotfilesValue struct {
	Container struct {
		Name string `json:"name"`
	} `json:"container"`
	Notes    []string        `json:"notes"`
	Dotfiles *dotfilesResult `json:"dotfiles"`
}

// Dotfiles through the containers tool on real Podman: repositories in
// the session workspace cloned with file:// inside each container, each
// kind of install script, the configured default, inline files, skip,
// and a failing script that leaves the container created.
func TestDotfilesOnPodman(t *testing.T) {
	pod := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Name == "podman" })
	adjust := func(c *host.Config) {
		c.Dotfiles = host.DotfilesConfig{Repo: "r-install"}
		c.ToolTimeouts["containers"] = 3 * time.Minute
	}
	tooltest.RunOn(t, pod, []string{"tools/containers"}, adjust, func(t *testing.T, e *tooltest.Env) {
		// Container names are the service's: unique to this run.
		id := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
		sess := "dotfiles-" + id
		call := func(params string) (host.ToolResult, dotfilesValue) {
			t.Helper()
			res, err := e.CallIn(t, sess, "containers", strings.ReplaceAll(params, "-@", "-"+id))
			if err != nil {
				t.Fatalf("%s: %v", params, err)
			}
			var v dotfilesValue
			tooltest.Value(t, res, &v)
			return res, v
		}
		exec := func(name, cmd string) string {
			t.Helper()
			res, _ := call(fmt.Sprintf(`{"operation":"exec","container":"%s-@","command":%q}`, name, cmd))
			if !res.OK {
				t.Fatalf("exec %s in %s: %s", cmd, name, res.Message)
			}
			return res.Message
		}
		// skip: the configured repository (not there yet) is left out.
		res, v := call(`{"operation":"create","name":"builder-@","network":"none","dotfiles":{"skip":true}}`)
		if !res.OK || v.Dotfiles == nil || v.Dotfiles.Skipped == "" || !strings.Contains(res.Message, "Dotfiles: skipped") {
			t.Fatalf("create with dotfiles.skip: %s %+v", res.Message, v.Dotfiles)
		}
		exec("builder", dotfilesRepos)
		if out := exec("builder", "test -e ~/.dotfiles && echo cloned || echo absent"); !strings.Contains(out, "absent") {
			t.Errorf("skip cloned the configured repository: %s", out)
		}

		// The configured repository, with a branch from the request; its
		// install.sh wins over setup.sh. Inline files go in beside.
		res, v = call(`{"operation":"create","name":"inst-@","network":"none","dotfiles":{"branch":"dev","inline":{".config/wai/x.conf":"k = v\n"}}}`)
		if d := v.Dotfiles; !res.OK || d == nil || d.Script != "install.sh" || d.Source != "r-install" || d.Failed != "" || len(d.Inline) != 1 {
			t.Fatalf("the configured repository: %s %+v", res.Message, v.Dotfiles)
		}
		if !strings.Contains(res.Message, "Dotfiles from r-install in ~/.dotfiles: ran install.sh, wrote .config/wai/x.conf.") {
			t.Errorf("the create's message does not say what dotfiles did: %s", res.Message)
		}
		if out := exec("inst", "cat ~/ran ~/.config/wai/x.conf; git -C ~/.dotfiles rev-list --count HEAD"); !strings.Contains(out, "dev install.sh on dev\nk = v\n1") {
			t.Errorf("install.sh of branch dev, shallow, and the inline file: %s", out)
		}

		for _, c := range []struct{ name, dotfiles, script, ran string }{
			{"mk", `{"repo":"file:///workspace/r-make","target":"/tmp/dots"}`, "Makefile", "Makefile"},
			{"sc", `{"repo":"/workspace/r-script"}`, "script/setup", "script/setup in /home/wai/.dotfiles"},
			{"ex", `{"repo":"r-install","script":"setup.sh","target":"dots"}`, "setup.sh", "setup.sh"},
		} {
			res, v = call(fmt.Sprintf(`{"operation":"create","name":"%s-@","network":"none","dotfiles":%s}`, c.name, c.dotfiles))
			if !res.OK || v.Dotfiles == nil || v.Dotfiles.Script != c.script || v.Dotfiles.ExitCode != 0 {
				t.Errorf("%s: %s %+v", c.script, res.Message, v.Dotfiles)
				continue
			}
			if out := exec(c.name, "cat ~/ran"); !strings.Contains(out, c.ran) {
				t.Errorf("%s did not run: %s", c.script, out)
			}
		}

		// No install script: the common dotfiles are linked.
		res, v = call(`{"operation":"create","name":"ln-@","network":"none","dotfiles":{"repo":"r-link"}}`)
		if !res.OK || v.Dotfiles == nil || strings.Join(v.Dotfiles.Linked, ",") != ".bashrc,.vimrc" {
			t.Errorf("smart-symlink: %s %+v", res.Message, v.Dotfiles)
		}
		if out := exec("ln", "readlink ~/.bashrc; cat ~/.vimrc; test -e ~/README || echo no-readme"); !strings.Contains(out, "/home/wai/.dotfiles/.bashrc\nset number\nno-readme") {
			t.Errorf("the linked dotfiles: %s", out)
		}

		// A failing script is reported; the container is created and kept.
		res, v = call(`{"operation":"create","name":"bad-@","network":"none","dotfiles":{"repo":"r-fail"}}`)
		if d := v.Dotfiles; !res.OK || d == nil || d.Failed != "script" || d.ExitCode != 7 || !strings.Contains(d.Output, "boom") ||
			len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "install.sh failed (exit 7: boom: no such thing)") {
			t.Errorf("a failing install script: %s %+v", res.Message, v.Dotfiles)
		}
		exec("bad", "true")
		res, v = call(`{"operation":"create","name":"gone-@","network":"none","dotfiles":{"repo":"file:///workspace/nope"}}`)
		if d := v.Dotfiles; !res.OK || d == nil || d.Failed != "clone" || d.ExitCode == 0 {
			t.Errorf("a missing repository: %s %+v", res.Message, v.Dotfiles)
		}

		// Refused before anything is created.
		for args, want := range map[string]string{
			`{"repo":"file:///etc/dots"}`:                  "not visible in the container",
			`{"repo":"ext::sh"}`:                           "remote helpers",
			`{"repo":"r-install","script":"../../bin/sh"}`: "no ..",
		} {
			res, err := e.CallIn(t, sess, "containers", `{"operation":"create","name":"no-`+id+`","dotfiles":`+args+`}`)
			if err != nil || res.OK || !strings.Contains(res.Message, want) {
				t.Errorf("dotfiles %s: %s; want a failure saying %q", args, res.Message, want)
			}
		}
		if res, _ := call(`{"operation":"list"}`); !strings.Contains(res.Message, "- bad-"+id) || strings.Contains(res.Message, "- no-"+id) {
			t.Errorf("list after the refused creates: %s", res.Message)
		}
	})
}
