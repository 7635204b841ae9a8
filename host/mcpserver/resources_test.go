package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/mcpserver"
)

var filesK sharedKernel

// filesServer serves the vfs tools and the noop plugin's "run", on the
// host backend.
func filesServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	k := filesK.get(t, func() host.Config {
		return hostConfig(t, noopPlugin, testPlugin{"tools/vfs", []string{"fs.read", "fs.write"}})
	})
	return serve(t, k, mcpserver.Options{})
}

// The PNG signature and the start of an IHDR chunk: what a command that
// draws a chart writes first.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// A client lists the workspace's files as resources and reads them back:
// a PNG a command wrote as a base64 blob with its MIME type, a text file
// as text. write_file's result links the file it wrote. Nothing is listed
// (and no sandbox made) before the first call.
func TestWorkspaceResources(t *testing.T) {
	ctx := context.Background()
	s := filesServer(t)
	cs := stdioClient(t, s, nil)
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("resources not advertised with subscriptions: %+v", caps.Resources)
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 0 {
		t.Fatalf("before any call: %v %+v", err, lr)
	}
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != "wai://workspace/{+path}" {
		t.Fatalf("templates: %v %+v", err, lt)
	}

	var octal strings.Builder
	for _, b := range pngBytes {
		fmt.Fprintf(&octal, "\\%03o", b)
	}
	res := call(t, cs, "run", map[string]any{"shell": "mkdir -p out && printf '" + octal.String() + "' > out/chart.png && echo hello > 'out/a note.txt'"})
	if res.IsError {
		t.Fatalf("writing the files: %q", fullText(res))
	}
	lr, err = cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]*mcp.Resource{}
	for _, r := range lr.Resources {
		uris[r.URI] = r
	}
	png, note := uris["wai://workspace/out/chart.png"], uris["wai://workspace/out/a%20note.txt"]
	if png == nil || note == nil || png.MIMEType != "image/png" {
		t.Fatalf("resources/list: %+v", lr.Resources)
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: png.URI})
	if err != nil {
		t.Fatal(err)
	}
	if c := rr.Contents[0]; !bytes.Equal(c.Blob, pngBytes) || c.MIMEType != "image/png" || c.Text != "" {
		t.Errorf("the PNG: want its bytes as a blob, image/png; got mime %q, %d bytes %q, text %q", c.MIMEType, len(c.Blob), c.Blob, c.Text)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: note.URI})
	if err != nil {
		t.Fatal(err)
	}
	if c := rr.Contents[0]; c.Text != "hello\n" || !strings.HasPrefix(c.MIMEType, "text/plain") || c.Blob != nil {
		t.Errorf("the note: want text; got %+v", c)
	}
	for _, bad := range []string{"wai://workspace/missing.txt", "wai://workspace/../../etc/passwd", "wai://workspace/out"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("reading %s succeeded", bad)
		}
	}
	call(t, cs, "run", map[string]any{"shell": "head -c 3000000 /dev/zero > big.bin"})
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "wai://workspace/big.bin"}); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("a 3 MB file: want a refusal naming the cap; got %v", err)
	}

	res = call(t, cs, "write_file", map[string]any{"file_path": "docs/new.md", "content": "# hi\n"})
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if res.IsError || link == nil || link.URI != "wai://workspace/docs/new.md" {
		t.Errorf("write_file: want a resource_link to the file; got %q %+v", fullText(res), res.Content)
	}
}

// A client subscribed to a file hears when its tool calls change it; a
// client of another session watching the same URI hears nothing.
func TestResourceUpdatedOnlyToItsClient(t *testing.T) {
	ctx := context.Background()
	s := filesServer(t)
	var mine, theirs atomic.Int32
	cs := stdioClient(t, s, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		if r.Params.URI == "wai://workspace/log.txt" {
			mine.Add(1)
		}
	}})
	other := stdioClient(t, s, &mcp.ClientOptions{ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { theirs.Add(1) }})
	call(t, cs, "run", map[string]any{"shell": "echo one > log.txt"})
	call(t, other, "run", map[string]any{"shell": "echo theirs > log.txt"})
	for _, c := range []*mcp.ClientSession{cs, other} {
		if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: "wai://workspace/log.txt"}); err != nil {
			t.Fatal(err)
		}
	}
	call(t, cs, "run", map[string]any{"shell": "true"})
	call(t, cs, "run", map[string]any{"shell": "echo two >> log.txt"})
	deadline := time.Now().Add(30 * time.Second)
	for mine.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if mine.Load() != 1 || theirs.Load() != 0 {
		t.Errorf("updates: the changing client heard %d (want 1), the other %d (want 0)", mine.Load(), theirs.Load())
	}
}
