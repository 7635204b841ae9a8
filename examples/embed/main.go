// Command embed shows wai embedded in a Go program: a kernel from a config,
// a session, a command through the session's guarded Shell (limits and the
// default blocklist apply), and the same kernel served to MCP clients over
// streamable HTTP when -http is given.
//
//	go run ./examples/embed                     # run two commands and exit
//	make plugins && go run ./examples/embed -http 127.0.0.1:8765 # then serve MCP until ^C
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver"
	_ "github.com/wai-dev/wai/plugins/host" // registers the host backend
)

func main() {
	addr := flag.String("http", "", "after the commands, serve MCP on this `addr`ess")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := host.DefaultConfig()
	// The host backend is no sandbox; link plugins/podman and pick
	// "podman" for one container per session.
	cfg.Backend = "host"
	cfg.BundledTools = nil // the two commands need only the capabilities
	if *addr != "" {
		// An MCP client sees the kernel's tools, which are plugins: without
		// them it would be served nothing to call. `make plugins` builds
		// them into build/plugins, where this program tells the kernel to
		// look.
		cfg.BundledTools = []string{"shell", "vfs"}
		cfg.PluginDirs = []string{filepath.Join("build", "plugins")}
	}
	if err := run(ctx, os.Stdout, cfg, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, cfg host.Config, addr string) error {
	k, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer k.Close(context.Background())

	s, err := k.Session(ctx, "", host.SessionOptions{})
	if err != nil {
		return err
	}
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"echo", "hello from the workspace"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "exit %d: %s", res.ExitCode, res.Stdout)

	// A policy's refusal is an error of kind ErrPermission, with its reason.
	_, err = s.Shell().Execute(ctx, backend.ExecRequest{Shell: "rm -rf /"})
	if !errors.Is(err, backend.ErrPermission) {
		return fmt.Errorf("rm -rf / was not refused: %v", err)
	}
	fmt.Fprintf(w, "refused: %v\n", err)

	if addr == "" {
		return nil
	}
	srv, err := mcpserver.New(k, mcpserver.Options{Name: "embedded-wai"})
	if err != nil {
		return err
	}
	defer srv.Close()
	// HTTP is always authenticated: a fresh token for this run, which the
	// client sends as `Authorization: Bearer <token>`.
	token := mcpserver.NewToken()
	if err := mcpserver.CheckListen(addr, true); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.HTTPHandler(mcpserver.Token{Secret: token})}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	// The bound address, so that port 0 prints the port it got.
	fmt.Fprintf(w, "bearer token: %s\n", token)
	fmt.Fprintf(w, "serving MCP on http://%s/\n", ln.Addr())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
