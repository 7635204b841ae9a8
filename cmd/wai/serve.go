package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/mcpserver"
)

func init() {
	register(&command{
		name:    "serve",
		args:    "[flags]",
		summary: "serve the kernel's tools over MCP (stdio, or streamable HTTP with --http)",
		text: `
Serves every tool of the kernel as an MCP tool. By default it speaks MCP
over standard input and output, for an agent that starts wai as a
subprocess (mcpServers: {"wai": {"command": "wai", "args": ["serve"]}}).

With --http ADDR it serves streamable HTTP at http://ADDR/ instead
(--http= with an empty value uses the config's [mcp] http_addr). If the
environment variable named by --token-env (default: the config's
[mcp] token_env, WAI_MCP_TOKEN) is set, every request must carry
"Authorization: Bearer <its value>"; an address other than loopback is
refused without one.

Each MCP session is its own wai session, with its own workspace (and
container), removed when the client disconnects.`,
		flags: serveFlags,
	})
}

func serveFlags(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
	var (
		kf       kernelFlags
		httpAddr string
		tokenEnv string
	)
	kf.register(fs)
	fs.StringVar(&httpAddr, "http", "", "serve streamable HTTP on `addr` (host:port) instead of stdio; empty means the config's [mcp] http_addr")
	fs.StringVar(&tokenEnv, "token-env", "", "environment variable `name` holding the HTTP bearer token (default: the config's [mcp] token_env)")

	return func(ctx context.Context, std stdio, args []string) int {
		if len(args) > 0 {
			fmt.Fprintf(std.err, "wai serve: takes no arguments, got %q\n", args[0])
			fs.Usage()
			return exitError
		}
		useHTTP := false
		fs.Visit(func(f *flag.Flag) { useHTTP = useHTTP || f.Name == "http" })

		k, err := kf.open(ctx, std.err, true)
		if err != nil {
			return fail(ctx, std.err, err)
		}
		defer closeKernel(k, std.err)
		if len(k.Tools()) == 0 {
			fmt.Fprintf(std.err, "wai serve: warning: the kernel has no tools: build the bundled plugins (`make plugins`) or set plugin_dir / WAI_PLUGIN_DIR\n")
		}

		var logger *slog.Logger
		if kf.verbose {
			logger = slog.New(slog.NewTextHandler(std.err, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		srv, err := mcpserver.New(k, mcpserver.Options{Name: "wai", Version: versionString(), Logger: logger})
		if err != nil {
			return fail(ctx, std.err, err)
		}

		if !useHTTP {
			t := &mcp.IOTransport{Reader: io.NopCloser(std.in), Writer: nopWriteCloser{std.out}}
			if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) {
				return fail(ctx, std.err, err)
			}
			return exitOK
		}

		cfg := k.Config()
		if httpAddr == "" {
			httpAddr = cfg.MCP.HTTPAddr
		}
		if tokenEnv == "" {
			tokenEnv = cfg.MCP.TokenEnv
		}
		if tokenEnv != "" && !backend.ValidEnvName(tokenEnv) {
			return fail(ctx, std.err, backend.Errorf(backend.ErrInvalid, "serve", "", "--token-env %q is not an environment variable name", tokenEnv))
		}
		token := ""
		if tokenEnv != "" {
			token = os.Getenv(tokenEnv)
		}
		if err := mcpserver.CheckListen(httpAddr, token); err != nil {
			return fail(ctx, std.err, err)
		}
		return serveHTTP(ctx, std, srv, httpAddr, token)
	}
}

func serveHTTP(ctx context.Context, std stdio, srv *mcpserver.Server, addr, token string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fail(ctx, std.err, backend.Errorf(backend.ErrUnavailable, "serve", addr, "cannot listen on %s: %v (is another server using the port? pick another with --http)", addr, err))
	}
	hs := &http.Server{Handler: srv.HTTPHandler(token), ReadHeaderTimeout: 10 * time.Second}
	auth := "no token"
	if token != "" {
		auth = "bearer token required"
	}
	// The address line is how a script that passed port 0 finds the port.
	fmt.Fprintf(std.err, "wai serve: MCP streamable HTTP on http://%s/ (%s)\n", ln.Addr(), auth)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		srv.Close()
		return fail(ctx, std.err, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Streams held open by clients would keep Shutdown waiting; the
	// sessions are closed below either way.
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	srv.Close()
	return exitOK
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Interface guards
var _ io.WriteCloser = nopWriteCloser{}
