package mock

import (
	"strings"
	"sync"

	"github.com/wai-dev/wai/host/backend"
)

// canned is a set of canned results and a log of the calls answered,
// which the backend keeps for all its workspaces and each workspace's
// shell for itself (the shell's are consulted first: see Shell.answer).
// It is safe for concurrent use.
type canned struct {
	mu        sync.Mutex
	responses []Response
	def       *backend.ExecResult
	calls     []Call
}

// AddResponse makes commands containing pattern answer result. The first
// registered match wins; a workspace's responses come before its
// backend's.
func (c *canned) AddResponse(pattern string, result backend.ExecResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.responses = append(c.responses, cloneResponse(Response{pattern, result}))
}

// SetDefault sets the result of commands no response matches; a
// workspace's default comes before its backend's.
func (c *canned) SetDefault(result backend.ExecResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := cloneResult(result)
	c.def = &d
}

// Calls returns the calls made, in order: on the backend, every shell
// call of every workspace; on a workspace's shell, its own.
func (c *canned) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cloneCalls(c.calls)
}

func (c *canned) record(call Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

// match returns the first response whose pattern text contains, and the
// default (nil if none), both cloned.
func (c *canned) match(text string) (r backend.ExecResult, ok bool, def *backend.ExecResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.def != nil {
		d := cloneResult(*c.def)
		def = &d
	}
	for _, resp := range c.responses {
		if strings.Contains(text, resp.Pattern) {
			return cloneResult(resp.Result), true, def
		}
	}
	return backend.ExecResult{}, false, def
}
