package gates

import (
	"fmt"
	"strings"
)

// dotfiles judges a create's dotfiles repository against dotfiles_repos:
// with the list set, a repository must start with one of its entries
// ("https://github.com/my-org/" — end a URL prefix with "/", or
// my-org.evil.example would pass too) and hold no ".." segment, which a
// server may resolve past the prefix. A restriction, not an approval:
// what does not match is denied. denied is false when it allows.
func (c Config) dotfiles(repo string) (Verdict, bool) {
	if repo == "" || len(c.DotfilesRepos) == 0 {
		return Verdict{}, false
	}
	dotdot := false
	for _, seg := range strings.FieldsFunc(repo, func(r rune) bool { return r == '/' || r == ':' }) {
		dotdot = dotdot || seg == ".."
	}
	if !dotdot {
		for _, p := range c.DotfilesRepos {
			if strings.HasPrefix(repo, p) {
				return Verdict{}, false
			}
		}
	}
	return Verdict{ConfigKey: "dotfiles_repos", Reason: fmt.Sprintf("the dotfiles repository %s is not one the container_safety "+
		"policy's dotfiles_repos allows (%s): use one of those, leave dotfiles out (dotfiles.skip), or add it to dotfiles_repos",
		repo, strings.Join(c.DotfilesRepos, ", "))}, true
}
