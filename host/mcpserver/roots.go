//lint:file-ignore SA1019 MCP logging and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but functional for at least twelve months; wai serves clients of 2025-11-25, which use them (RATIONALE.md).

package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
)

// Client roots: with mcp.client_roots configured, the directories a
// client names as its roots, when they lie under one of those host
// directories, are copied into its workspace under roots/ when its
// session opens. Copies, never mounts: the sandbox cannot change the
// person's files.

const (
	rootsTimeout = 10 * time.Second
	// rootsLimits bound all the roots a session copies together.
	rootsMaxFiles = 10000
	rootsMaxBytes = 256 << 20
)

// copyRoots copies the client's allowed roots into ws and returns the
// line that tells the model where they are ("" when nothing was copied).
func (s *Server) copyRoots(ctx context.Context, ss *mcp.ServerSession, ws *host.Session) string {
	allowed := s.opts.ClientRoots
	ip := ss.InitializeParams()
	if len(allowed) == 0 || ip == nil || ip.Capabilities == nil {
		return ""
	}
	lctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	res, err := ss.ListRoots(lctx, nil)
	cancel()
	if err != nil {
		s.log.Warn("mcp.roots", "err", err)
		return ""
	}
	lim := host.CopyLimits{MaxFiles: rootsMaxFiles, MaxBytes: rootsMaxBytes}
	used := map[string]bool{}
	var copied, refused []string
	c := s.clientOf(ss)
	for _, r := range res.Roots {
		dir, ok := underAllowed(r.URI, allowed)
		if !ok {
			refused = append(refused, r.URI)
			continue
		}
		dst := "roots/" + uniqueName(filepath.Base(dir), used)
		rep, err := ws.CopyHostDir(ctx, dir, dst, lim)
		if err != nil {
			s.log.Warn("mcp.roots.copy", "root", dir, "err", err)
			refused = append(refused, r.URI)
			continue
		}
		lim.MaxFiles -= rep.Files
		lim.MaxBytes -= rep.Bytes
		line := fmt.Sprintf("%s → %s (%d files)", dir, dst, rep.Files)
		if rep.Cut {
			line += ", cut at the copy limit"
		}
		copied = append(copied, line)
	}
	if c != nil && len(refused) > 0 {
		c.log.send(ctx, mcp.LevelWarning, map[string]any{"event": "roots.refused", "roots": refused,
			"why": "not under a directory of mcp.client_roots in wai.toml"})
	}
	if len(copied) == 0 {
		return ""
	}
	return "[wai: the client's roots were copied into the workspace (copies: changes stay in the workspace and never reach the host): " +
		strings.Join(copied, "; ") + "]"
}

// underAllowed returns the host directory a file:// root names when it
// lies (symlinks resolved) under one of allowed.
func underAllowed(uri string, allowed []string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	dir, err := filepath.EvalSymlinks(filepath.Clean(u.Path))
	if err != nil {
		return "", false
	}
	for _, a := range allowed {
		ra, err := filepath.EvalSymlinks(a)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(ra, dir)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return dir, true
		}
	}
	return "", false
}

func uniqueName(base string, used map[string]bool) string {
	if base == "" || base == "/" || base == "." {
		base = "root"
	}
	name := base
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	used[name] = true
	return name
}
