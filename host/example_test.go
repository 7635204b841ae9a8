package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
	_ "github.com/wai-dev/wai/plugins/host" // registers the host backend
)

// The README's "Embedding wai in a Go program" shows this body as it is
// (TestReadmeEmbeddingIsExample keeps them equal). The configuration is
// built in code; wai.toml is the CLI's business.
func Example() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "wai-example-") // workspaces and session records live here
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(state)
	cfg := host.DefaultConfig()
	cfg.Backend = "host" // NOT a sandbox: link plugins/podman and say "podman" for one container per session
	cfg.StateDir = state
	cfg.BundledTools = nil // no tool plugins: this program uses the session's Shell itself
	k, err := host.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(ctx)

	s, err := k.Session(ctx, "", host.SessionOptions{}) // a throwaway session
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"echo", "hi"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d: %s", res.ExitCode, res.Stdout)

	// Limits and policies apply: the default blocklist refuses this.
	_, err = s.Shell().Execute(ctx, backend.ExecRequest{Shell: "rm -rf /"})
	fmt.Println("refused:", errors.Is(err, backend.ErrPermission))
	// Output:
	// exit 0: hi
	// refused: true
}

// A session's Shell runs commands in its workspace, which a named session
// keeps between commands; its FS reads and writes the same files.
func ExampleSession_Shell() {
	ctx := context.Background()
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.StateDir = tempDir()
	cfg.BundledTools = nil
	k, err := host.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(ctx)

	s, err := k.Session(ctx, "notes", host.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	sh := s.Shell()
	if _, err := s.FS().Write(ctx, backend.WriteRequest{Path: "todo.txt", Content: "buy milk\n"}); err != nil {
		log.Fatal(err)
	}
	res, err := sh.Execute(ctx, backend.ExecRequest{
		Shell: `tr a-z A-Z < todo.txt; echo "$GREETING" >&2; exit 3`,
		Env:   map[string]string{"GREETING": "hello"},
	})
	if err != nil {
		log.Fatal(err) // wai could not run it; a failing command is not an error
	}
	fmt.Printf("stdout %q, stderr %q, exit %d\n", res.Stdout, res.Stderr, res.ExitCode)
	// Output:
	// stdout "BUY MILK\n", stderr "hello\n", exit 3
}

// noNetwork is a policy written in Go: it refuses commands that name a
// network client, and allows everything else.
type noNetwork struct{}

func (noNetwork) Name() string { return "no-network" }

func (noNetwork) Check(_ context.Context, req host.CheckRequest) (host.Decision, error) {
	if req.Action == "shell.exec" && len(req.Command) > 0 && slices.Contains([]string{"curl", "wget"}, filepath.Base(req.Command[0])) {
		return host.Decision{Reason: req.Command[0] + " reaches the network"}, nil
	}
	return host.Decision{Allow: true}, nil
}

// WithPolicy adds a policy written in Go to the chain every command and
// file change passes; the first that denies wins, and its reason reaches
// the caller in an ErrPermission error.
func ExampleWithPolicy() {
	ctx := context.Background()
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.StateDir = tempDir()
	cfg.BundledTools = nil
	k, err := host.New(ctx, cfg, host.WithPolicy(noNetwork{}))
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(ctx)

	s, err := k.Session(ctx, "", host.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"curl", "https://example.com"}})
	fmt.Println(errors.Is(err, backend.ErrPermission), strings.Contains(err.Error(), "no-network"), strings.Contains(err.Error(), "curl reaches the network"))
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"echo", "offline"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Stdout)
	// Output:
	// true true true
	// offline
}

// Call runs a tool of a plugin the kernel loaded (here the bundled vfs
// plugin, which `make plugins` builds into build/plugins) in a session,
// as an MCP client's tools/call does.
func ExampleKernel_Call() {
	ctx := context.Background()
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.StateDir = tempDir()
	cfg.PluginDirs = []string{pluginDir()} // where vfs.wasm is
	cfg.BundledTools = []string{"vfs"}
	k, err := host.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(ctx)

	s, err := k.Session(ctx, "", host.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	wrote, err := k.Call(ctx, s.Name(), "write_file", json.RawMessage(`{"file_path":"notes.txt","content":"first line\n"}`))
	if err != nil {
		log.Fatal(err) // the call could not be made (no such tool, invalid params, refused)
	}
	read, err := k.Call(ctx, s.Name(), "read_file", json.RawMessage(`{"file_path":"notes.txt"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(wrote.OK, read.OK, strings.Contains(read.Message, "first line"))
	// Output:
	// true true true
}

var examplePlugins struct {
	once sync.Once
	dir  string
}

// tempDir is a state directory of its own for one example, under
// host.TestTempRoot, which TestMain removes. Its wasm directory is the
// tests' shared compilation cache, so a plugin is compiled once per machine.
func tempDir() string {
	dir, err := os.MkdirTemp(host.TestTempRoot, "example-")
	if err != nil {
		log.Fatal(err)
	}
	cache := filepath.Join(host.SharedStateDir, "wasm")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		log.Fatal(err)
	}
	if err := os.Symlink(cache, filepath.Join(dir, "wasm")); err != nil {
		log.Fatal(err)
	}
	return dir
}

// pluginDir builds the vfs tool plugin, as `make plugins` does, into a
// directory of its own.
func pluginDir() string {
	examplePlugins.once.Do(func() {
		src, err := plugbuild.Path(context.Background(), "tools/vfs")
		if err != nil {
			log.Fatal(err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			log.Fatal(err)
		}
		dir, err := os.MkdirTemp(host.TestTempRoot, "plugins-")
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "vfs.wasm"), data, 0o644); err != nil {
			log.Fatal(err)
		}
		examplePlugins.dir = dir
	})
	return examplePlugins.dir
}

// The README's embedding snippet is Example's body, word for word, so the
// README shows code that compiles and runs.
func TestReadmeEmbeddingIsExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Embedding wai in a Go program\n")
	_, block, ok2 := strings.Cut(after, "```go\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no ```go block under \"## Embedding wai in a Go program\"")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	body, _, ok2 = strings.Cut(body, "\t// Output:\n")
	if !ok || !ok2 {
		t.Fatal("example_test.go has no func Example with an // Output: comment")
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		want.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if block != want.String() {
		t.Errorf("README.md's embedding snippet differs from Example in host/example_test.go; copy the body over.\nREADME:\n%s\nExample:\n%s", block, want.String())
	}
}
