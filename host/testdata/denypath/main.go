// Command denypath is a test policy plugin that protects a directory: it
// denies every file mutation whose requested path OR resolved path (the
// entry actually changed, symlinks followed) lies under the "prefix" in
// its config. A mutation that comes without a resolved path is denied
// too: without it, "p/new" with p -> protected would pass.
package main

import (
	"path"
	"strings"

	"github.com/wai-dev/wai/pdk"
)

// under reports whether p (workspace-relative or absolute inside the
// workspace) is dir or lies beneath it.
func under(p, dir string) bool {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func check(req pdk.CheckRequest) pdk.Decision {
	prefix, _ := pdk.Config("prefix")
	prefix = strings.TrimPrefix(path.Clean("/"+prefix), "/")
	if prefix == "" {
		return pdk.Deny("no prefix configured: set config prefix to the directory to protect")
	}
	switch {
	case req.ResolvedPath == "":
		return pdk.Deny("%s of %s came without a resolved path: cannot tell what it changes", req.Action, req.Path)
	case under(req.Path, prefix):
		return pdk.Deny("%s is under %s/", req.Path, prefix)
	case under(req.ResolvedPath, prefix):
		return pdk.Deny("%s resolves to %s, under %s/", req.Path, req.ResolvedPath, prefix)
	}
	return pdk.Allow()
}

func init() {
	pdk.Declare("denypath", "1.0.0")
	pdk.Policy(check, pdk.ActionFSWrite, pdk.ActionFSEdit, pdk.ActionFSRemove)
}

func main() {}
