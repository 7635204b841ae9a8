package shellparse

import (
	"strings"
	"testing"
)

// git runs the programs its configuration and some options name: those
// runs are opaque, wherever git sits (behind sudo, xargs, find -exec),
// and the git commands that run only git stay plain.
func TestGitOptionsThatRunPrograms(t *testing.T) {
	for in, opaque := range map[string]string{
		`git -c alias.x='!id' x`:                     "-c sets configuration",
		`git -c core.fsmonitor='id >&2' status`:      "-c sets configuration",
		`git -C /tmp -c core.pager=id log`:           "-c sets configuration",
		`git --config-env=core.sshCommand=E fetch`:   "--config-env sets",
		`git --config-env core.pager=E log`:          "--config-env sets",
		`git --exec-path=/workspace/x status`:        "--exec-path=",
		`git $opt status`:                            "could be -c",
		`git clone -u 'sh -c id' /r x`:               "clone -u",
		`git clone --upload-pack='id;' /r x`:         "--upload-pack",
		`git clone --config core.fsmonitor=id /r x`:  "--config",
		`git clone -qc core.hooksPath=h /r x`:        "clone -qc",
		`git clone --templ=/workspace/t /r x`:        "--template",
		`git fetch --upl=id origin`:                  "--upload-pack",
		`git ls-remote --upload-pack=id /r`:          "--upload-pack",
		`git push --receive-pack=id origin`:          "--receive-pack",
		`git push --exec=id origin`:                  "--exec",
		`git archive --remote=/r --exec=id HEAD`:     "--exec",
		`git rebase -x id HEAD~2`:                    "rebase -x",
		`git rebase -ixid HEAD~2`:                    "rebase -ixid",
		`git rebase --exec id HEAD~2`:                "--exec",
		`git submodule foreach id`:                   "foreach",
		`git bisect run id`:                          "bisect run",
		`git difftool --extcmd=id`:                   "--extcmd",
		`git grep -Oid x`:                            "grep -Oid",
		`git grep x $files`:                          "could be an option",
		`git grep x *`:                               "could be an option",
		`git send-email --sendmail-cmd=id p`:         "--sendmail-cmd",
		`git filter-branch --tree-filter id`:         "filter-branch",
		`git for-each-repo --config=r -- -c a.x=!id`: "for-each-repo",
		`sudo git -c alias.x='!id' x`:                "-c sets",
		`find . -name .git -exec git -c a.b=c x \;`:  "-c sets",
		`echo x | xargs git -c alias.x=!id`:          "-c sets",
		`git -C $d status`:                           "may become several words",
		`git status`:                                 "",
		`git -C "$d" status`:                         "",
		`git -C sub --no-pager log -p`:               "",
		`git --git-dir -c status`:                    "", // -c is the value of --git-dir
		`git --exec-path`:                            "", // prints the path
		`git add $f "$g"`:                            "",
		`git grep -e x -- *.go`:                      "",
		`git grep "x$y"`:                             "",
		`git commit -m "$(date)"`:                    "",
		`git clone --depth 1 https://x/r`:            "",
		`git fetch -u origin`:                        "", // fetch -u is --update-head-ok
		`git rebase -i HEAD~2`:                       "",
		`git log --exec-path`:                        "",
	} {
		an := AnalyzeShell(in, POSIX)
		var got string
		for _, r := range an.Runs {
			if r.Name() == "git" {
				got = r.Opaque
			}
		}
		if opaque == "" && got != "" || !strings.Contains(got, opaque) || len(an.Problems) > 0 {
			t.Errorf("%s: opaque %q, problems %v; want opaque saying %q", in, got, an.Problems, opaque)
		}
	}
}
