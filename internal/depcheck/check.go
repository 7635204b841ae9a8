package depcheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Package is the part of `go list -json` the rules need.
type Package struct {
	ImportPath string
	Standard   bool
	Imports    []string // direct, non-test
	Deps       []string // transitive, non-test
}

// Violation is one import that breaks a rule.
type Violation struct {
	Package string   // the importing package, relative to the module ("." for the root)
	Dep     string   // the forbidden import path
	Chain   []string // Package → … → Dep, relative where local
	Rule    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s depends on %s (%s): %s", v.Package, v.Dep, strings.Join(v.Chain, " → "), v.Rule)
}

// Check returns every violation of the rules among pkgs, the packages of
// module (with their dependencies, as `go list -deps` gives them), sorted.
func Check(module string, pkgs []Package) []Violation {
	byPath := make(map[string]*Package, len(pkgs))
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	classify := func(path string) dep {
		d := dep{path: path}
		if rel, ok := relPath(module, path); ok {
			d.local, d.rel = true, rel
		} else if p, ok := byPath[path]; ok {
			d.std = p.Standard
		} else {
			// Not listed (a synthetic graph): the go command's own rule,
			// no dot in the first element, tells the standard library.
			d.std = !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
		}
		return d
	}
	seen := map[string]bool{}
	var out []Violation
	for _, p := range pkgs {
		from, ok := relPath(module, p.ImportPath)
		if !ok {
			continue
		}
		for _, r := range rules {
			if !r.applies(from) {
				continue
			}
			deps := p.Imports
			if r.transitive {
				deps = union(p.Imports, p.Deps)
			}
			for _, path := range deps {
				if r.allowed(from, classify(path)) {
					continue
				}
				key := from + "\x00" + path + "\x00" + r.text
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, Violation{
					Package: from,
					Dep:     path,
					Chain:   chain(module, byPath, p.ImportPath, path),
					Rule:    r.text,
				})
			}
		}
	}
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Dep, b.Dep), cmp.Compare(a.Rule, b.Rule))
	})
	return out
}

func relPath(module, path string) (string, bool) {
	switch {
	case path == module:
		return ".", true
	case strings.HasPrefix(path, module+"/"):
		return path[len(module)+1:], true
	}
	return "", false
}

func union(a, b []string) []string {
	set := make(map[string]bool, len(a)+len(b))
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !set[s] {
			set[s] = true
			out = append(out, s)
		}
	}
	return out
}

// chain finds the shortest import path from one package to a dependency,
// so a transitive violation names the package that brought it in.
func chain(module string, byPath map[string]*Package, from, to string) []string {
	name := func(p string) string {
		if rel, ok := relPath(module, p); ok {
			return rel
		}
		return p
	}
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var c []string
			for p := to; p != ""; p = prev[p] {
				c = append([]string{name(p)}, c...)
			}
			return c
		}
		if p, ok := byPath[cur]; ok {
			for _, next := range p.Imports {
				if _, seen := prev[next]; !seen {
					prev[next] = cur
					queue = append(queue, next)
				}
			}
		}
	}
	return []string{name(from), "…", name(to)}
}

// Interface guards
var _ fmt.Stringer = Violation{}
