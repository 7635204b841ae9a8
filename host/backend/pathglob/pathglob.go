// Package pathglob matches slash-separated paths against glob patterns,
// segment by segment: path.Match syntax within a segment, "**" for any
// number of whole segments, none included.
//
// It is the one matcher behind every backend's Glob and Grep filter
// (host/backend/rootfs, which prunes its walks with it, and the mock
// backend) and podman's hydration include and exclude lists, so that a
// pattern means the same wherever it is given. Like host/backend it
// imports only the standard library, so every backend may use it.
package pathglob

import "path"

// Pattern is a compiled pattern. Matching runs as a small NFA over its
// segments (a State's entry i: the path so far matched the first i), so a
// pattern with many "**" cannot blow up, and a walk can prune the
// directories no match can lie in.
type Pattern struct{ segs []string }

// State is how far the segments of a path read so far got through a
// Pattern; Start gives the first, Step the next.
type State []bool

// New compiles the segments of a pattern. Checking their syntax
// (path.Match(seg, "") fails) is the caller's, who words the error for
// its own request. A run of "**" counts as one.
func New(segs []string) *Pattern {
	p := &Pattern{}
	for _, s := range segs {
		if s == "**" && len(p.segs) > 0 && p.segs[len(p.segs)-1] == "**" {
			continue
		}
		p.segs = append(p.segs, s)
	}
	return p
}

// Match reports whether a whole path, given as its segments, matches.
func (p *Pattern) Match(segs []string) bool {
	s := p.Start()
	for _, seg := range segs {
		if s = p.Step(s, seg); !s.Alive() && !s.Accepts() {
			return false
		}
	}
	return s.Accepts()
}

// Start is the state before the first segment.
func (p *Pattern) Start() State {
	s := make(State, len(p.segs)+1)
	s[0] = true
	p.close(s)
	return s
}

// Step consumes one path segment.
func (p *Pattern) Step(s State, name string) State {
	next := make(State, len(s))
	for i, seg := range p.segs {
		if !s[i] {
			continue
		}
		if seg == "**" {
			next[i] = true
		} else if ok, _ := path.Match(seg, name); ok {
			next[i+1] = true
		}
	}
	p.close(next)
	return next
}

// close adds the states reachable by letting a "**" match nothing.
func (p *Pattern) close(s State) {
	for i, seg := range p.segs {
		if s[i] && seg == "**" {
			s[i+1] = true
		}
	}
}

// Accepts reports whether the segments consumed so far match the whole
// pattern.
func (s State) Accepts() bool { return s[len(s)-1] }

// Alive reports whether a longer path could still match.
func (s State) Alive() bool {
	for _, ok := range s[:len(s)-1] {
		if ok {
			return true
		}
	}
	return false
}
