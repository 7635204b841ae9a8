package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// The workspace as MCP resources: every file of a client's workspace is
// wai://workspace/PATH, listed (bounded), readable as text or, for binary
// content, as a base64 blob (size-capped), and subscribable: a client
// subscribed to a file is told when a tool call changed it.

const (
	workspaceURI = "wai://workspace/"
	// maxResourceBytes caps one resources/read: base64 makes a blob a
	// third larger, and a stdio message is at most MaxMessageBytes.
	maxResourceBytes = 2 << 20
	// maxListedResources bounds resources/list.
	maxListedResources = 500
	// maxSubscriptions bounds the files one client watches.
	maxSubscriptions = 100
)

func (s *Server) addResources() {
	s.linked = map[string]bool{}
	s.mutating = map[string]bool{}
	for _, t := range s.k.Tools() {
		own := t.Name
		if t.Original != "" {
			own = t.Original
		}
		s.linked[t.Name] = t.Plugin == "vfs" && (own == "write_file" || own == "edit_file")
		s.mutating[t.Name] = t.Annotations == nil || !t.Annotations.ReadOnlyHint
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: workspaceURI + "{+path}",
		Name:        "workspace",
		Title:       "Workspace files",
		Description: "A file of this session's workspace, by its path relative to the workspace root. " +
			"Text files read as text, others as a base64 blob (at most 2 MiB).",
	}, s.readResource)
}

// resourceURI is the URI of a workspace path ("dir/a b.txt").
func resourceURI(p string) string {
	parts := strings.Split(p, "/")
	for i, seg := range parts {
		parts[i] = url.PathEscape(seg)
	}
	return workspaceURI + strings.Join(parts, "/")
}

// resourcePath is the workspace path a URI names.
func resourcePath(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, workspaceURI)
	if !ok || rest == "" {
		return "", fmt.Errorf("%q is not a workspace file: workspace files are %sPATH", uri, workspaceURI)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%q: %v", uri, err)
	}
	return p, nil
}

// openedSession is the client's wai session when its workspace is open:
// listing or reading files never creates a sandbox.
func (s *Server) openedSession(ss *mcp.ServerSession) *host.Session {
	c := s.clientOf(ss)
	if c == nil {
		return nil
	}
	s.mu.Lock()
	ws := c.ws
	s.mu.Unlock()
	if ws == nil || !s.kernelHolds(ws) || !ws.Opened() {
		return nil
	}
	return ws
}

// listResources answers resources/list with the workspace's files, at
// most maxListedResources of them (and the backend's max_results).
func (s *Server) listResources(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
		ws := s.openedSession(ss)
		if ws == nil {
			return out, nil // no workspace yet: no files
		}
		g, err := ws.FS().Glob(ctx, backend.GlobRequest{Pattern: "**"})
		if err != nil {
			return nil, err
		}
		for i, p := range g.Paths {
			if i == maxListedResources {
				break
			}
			out.Resources = append(out.Resources, &mcp.Resource{
				URI: resourceURI(p), Name: p, MIMEType: mime.TypeByExtension(path.Ext(p)),
			})
		}
		return out, nil
	}
}

// readResource reads one workspace file: text when it is UTF-8 text, else
// a base64 blob; the MIME type comes from its content (and, for text,
// its extension).
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, err := resourcePath(uri)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ws := s.openedSession(req.Session)
	if ws == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, size, err := ws.ReadBytes(ctx, p, maxResourceBytes+1)
	switch {
	case errors.Is(err, backend.ErrNotFound):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		return nil, err
	case size > maxResourceBytes || len(data) > maxResourceBytes:
		return nil, fmt.Errorf("%s is %d bytes, over the %d bytes a resource read returns; read it in parts with the tools", p, size, maxResourceBytes)
	}
	mt, text := sniff(p, data)
	c := &mcp.ResourceContents{URI: uri, MIMEType: mt}
	if text {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// sniff returns data's MIME type, by content (http.DetectContentType),
// refined by the extension for text, and whether it is text.
func sniff(p string, data []byte) (string, bool) {
	mt := http.DetectContentType(data)
	isText := strings.HasPrefix(mt, "text/") && utf8.Valid(data)
	if isText || len(data) == 0 {
		if byExt := mime.TypeByExtension(path.Ext(p)); byExt != "" {
			mt = byExt
		}
		return mt, true
	}
	return mt, false
}

// link is the resource_link a write_file or edit_file result carries to
// the file it wrote, so the person can open it; nil for other results.
func (s *Server) link(tool string, value []byte) mcp.Content {
	if !s.linked[tool] {
		return nil
	}
	var v struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(value, &v) != nil {
		return nil
	}
	v.Path = strings.TrimPrefix(v.Path, "/") // shown from the workspace root
	if v.Path == "" {
		return nil
	}
	return &mcp.ResourceLink{URI: resourceURI(v.Path), Name: v.Path, MIMEType: mime.TypeByExtension(path.Ext(v.Path))}
}
