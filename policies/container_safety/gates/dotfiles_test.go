package gates

import (
	"strings"
	"testing"
)

func TestDotfilesRepos(t *testing.T) {
	open, _ := ParseConfig(nil)
	if v := open.Check(Request{Operation: "create", DotfilesRepo: "https://example.com/anything"}); !v.Allow {
		t.Errorf("without dotfiles_repos: %+v, want any repository allowed", v)
	}
	c, err := ParseConfig([]byte(`{"dotfiles_repos": ["https://github.com/my-org/", "git@github.com:my-org/"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for repo, allow := range map[string]bool{
		"":                                       true, // no dotfiles
		"https://github.com/my-org/dots":         true,
		"git@github.com:my-org/dots.git":         true,
		"https://github.com/my-org.evil/dots":    false,
		"https://github.com/my-org/../evil/dots": false,
		"https://github.com/other/dots":          false,
		"file:///workspace/dots":                 false,
	} {
		v := c.Check(Request{Operation: "create", DotfilesRepo: repo})
		if v.Allow != allow || !allow && (v.Ask || v.ConfigKey != "dotfiles_repos" || !strings.Contains(v.Reason, "dotfiles.skip")) {
			t.Errorf("%q: %+v, want allowed %v (else denied naming dotfiles_repos)", repo, v, allow)
		}
	}
	if _, err := ParseConfig([]byte(`{"dotfiles_repos": [""]}`)); err == nil {
		t.Error("an empty dotfiles_repos entry is accepted")
	}
}
