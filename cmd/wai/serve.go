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
	"strings"
	"syscall"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/host/mcpserver"
)

func init() {
	register(&command{
		name:    "serve",
		noArgs:  true,
		args:    "[flags]",
		summary: "serve the kernel's tools over MCP (stdio, or streamable HTTP with --http)",
		text: `
Serves every tool of the kernel as an MCP tool. By default it speaks MCP
over standard input and output, for an agent that starts wai as a
subprocess (mcpServers: {"wai": {"command": "wai", "args": ["serve"]}}).
A malformed line gets the JSON-RPC error for it (-32700, -32600) and the
next line is served; a line over 4 MiB is refused unread.

With --http ADDR it serves streamable HTTP at http://ADDR/mcp instead
(the path clients look for; any path is served the same)
(--http= with an empty value uses the config's [mcp] http_addr). HTTP is
always authenticated, loopback included: every request must carry
"Authorization: Bearer <token>". The tokens are [[mcp.tokens]] in the
config (each mapped to a user) and the value of the environment variable
named by --token-env (default: [mcp] token_env, WAI_MCP_TOKEN), at least
16 bytes each. With none, wai creates a token in
<state_dir>/mcp/token (mode 0600), reuses it on later starts, and prints
the file's path (--show-token prints the token itself). An address other
than loopback needs a token you configured. A token file is read again
when it changes: rewrite it to rotate the token; a file removed or made
readable by others refuses its token until fixed.

Each MCP session is its own wai session, with its own workspace (and
container), removed when the client disconnects. An HTTP client that
holds no request open (no stream, no call) for 30 minutes is taken to
have left, and its session is removed; a connected client never is. At most
[mcp] max_sessions (64) sessions are held at once.

SIGINT or SIGTERM stops the server: running commands are killed and
every session is closed, however its client left. A second signal exits
at once, without cleanup.`,
		flags: serveFlags,
	})
}

// serveOptions are wai serve's flags.
type serveOptions struct {
	kf        kernelFlags
	httpAddr  string
	tokenEnv  string
	showToken bool
}

func (o *serveOptions) register(fs *flag.FlagSet) {
	o.kf.register(fs)
	fs.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP on `addr` (host:port) instead of stdio; empty means the config's [mcp] http_addr")
	fs.StringVar(&o.tokenEnv, "token-env", "", "environment variable `name` holding an HTTP bearer token (default: the config's [mcp] token_env)")
	fs.BoolVar(&o.showToken, "show-token", false, "with --http, print the bearer token itself on stderr, not only where it is")
}

// config loads the configuration wai serve runs with. The token
// --token-env names opens this server: it joins wai's own secrets
// (host.Config.SecretEnv), so no container the agent creates is given it.
func (o *serveOptions) config(std stdio) (config.File, error) {
	cfg, err := o.kf.load(std)
	if err != nil {
		return config.File{}, err
	}
	if o.tokenEnv != "" {
		cfg.SecretEnv = append(cfg.SecretEnv, o.tokenEnv)
	}
	return cfg, nil
}

func serveFlags(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
	var o serveOptions
	o.register(fs)

	return func(ctx context.Context, std stdio, _ []string) int {
		useHTTP := false
		fs.Visit(func(f *flag.Flag) { useHTTP = useHTTP || f.Name == "http" })
		cfg, err := o.config(std)
		if err != nil {
			return fail(ctx, std.err, err)
		}
		// The HTTP settings are checked before the kernel loads every
		// plugin: a refused address or token is told at once.
		var tokens *mcpserver.TokenSet
		httpAddr := o.httpAddr
		if useHTTP {
			if httpAddr == "" {
				httpAddr = cfg.MCP.HTTPAddr
			}
			if tokens, err = configuredTokens(std, cfg.MCP, httpAddr, o.tokenEnv); err != nil {
				return fail(ctx, std.err, err)
			}
		}
		if useHTTP {
			// The first start compiles every plugin (tens of seconds on a
			// busy machine) before anything listens: say so, rather than
			// stay silent until the address line.
			fmt.Fprintf(std.err, "wai serve: loading plugins (the first start compiles them)…\n")
		}
		k, err := o.kf.build(ctx, cfg, std.err, true)
		if err != nil {
			return fail(ctx, std.err, err)
		}
		defer closeKernel(k, std.err)
		if len(k.Tools()) == 0 {
			fmt.Fprintf(std.err, "wai serve: warning: the kernel has no tools: build the bundled plugins (`make plugins`) or set plugin_dir / WAI_PLUGIN_DIR\n")
		}

		var logger *slog.Logger
		if o.kf.verbose {
			logger = slog.New(slog.NewTextHandler(std.err, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		mcp := cfg.MCP
		srv, err := mcpserver.New(k, mcpserver.Options{Name: "wai", Version: versionString(), Logger: logger, MaxSessions: mcp.MaxSessions,
			MaxSessionsPerUser: mcp.SessionsPerUser(), ClientRoots: mcp.ClientRoots})
		if err != nil {
			return fail(ctx, std.err, err)
		}

		if !useHTTP {
			return serveStdio(ctx, std, srv)
		}
		if tokens.Len() == 0 {
			if err := stateToken(tokens, k.Config(), std.err, o.showToken); err != nil {
				srv.Close()
				return fail(ctx, std.err, err)
			}
		}
		tokens.Log = std.err
		return serveHTTP(ctx, std, srv, httpAddr, tokens)
	}
}

// configuredTokens are the bearer tokens of the config and of the
// variable tokenEnv (default: the config's) names, once addr is known to
// be allowed with them: an address other than loopback needs one. None
// means wai keeps its own token (stateToken).
func configuredTokens(std stdio, mcp config.MCP, addr, tokenEnv string) (*mcpserver.TokenSet, error) {
	if tokenEnv == "" {
		tokenEnv = mcp.TokenEnv
	}
	if tokenEnv != "" && !backend.ValidEnvName(tokenEnv) {
		return nil, backend.Errorf(backend.ErrInvalid, "serve", "", "--token-env %q is not an environment variable name", tokenEnv)
	}
	tokens, err := mcpserver.LoadTokens(mcp, tokenEnv, std.getenv)
	if err != nil {
		return nil, err
	}
	n := tokens.Len()
	if err := mcpserver.CheckListen(addr, n > 0); err != nil {
		return nil, err
	}
	if n > 0 {
		fmt.Fprintf(std.err, "wai serve: %d bearer token(s) configured (%s); clients send \"Authorization: Bearer <token>\"\n", n, tokenSources(len(mcp.Tokens), n, tokenEnv))
	}
	return tokens, nil
}

// tokenSources names where the tokens came from: each [[mcp.tokens]]
// entry gives one, and $tokenEnv the rest, when it was set. The banner
// named $WAI_MCP_TOKEN though it was unset, sending the operator to look
// for a token that was not there.
func tokenSources(fromConfig, total int, tokenEnv string) string {
	var src []string
	if fromConfig > 0 {
		src = append(src, fmt.Sprintf("%d in [[mcp.tokens]]", fromConfig))
	}
	if total > fromConfig {
		src = append(src, "$"+tokenEnv)
	}
	return strings.Join(src, ", ")
}

// stateToken adds to tokens the token wai keeps in the state directory
// when none is configured; like a configured token file, it is read again
// when it changes. Only its path is printed unless asked: stderr often
// ends in a log others read.
func stateToken(tokens *mcpserver.TokenSet, cfg host.Config, stderr io.Writer, show bool) error {
	dir, err := cfg.ResolvedStateDir()
	if err != nil {
		return err
	}
	path := mcpserver.TokenPath(dir)
	tok, created, err := mcpserver.LoadOrCreateTokenFile(path)
	if err == nil {
		err = tokens.AddFile("wai's own token", path, "", true)
	}
	if err != nil {
		return err
	}
	how := "reusing the bearer token in"
	if created {
		how = "created a bearer token in"
	}
	fmt.Fprintf(stderr, "wai serve: %s %s (mode 0600); clients send \"Authorization: Bearer <its contents>\"\n", how, path)
	if show {
		fmt.Fprintf(stderr, "wai serve: bearer token: %s\n", tok)
	}
	return nil
}

// serveStdio serves one client on standard input and output. A client
// that dies closes both: its session ends on the read's EOF or, when wai
// was writing to it (a call's progress), on the write's EPIPE. Both are
// the client leaving, not a failure of wai: the session is closed either
// way and wai exits 0.
func serveStdio(ctx context.Context, std stdio, srv *mcpserver.Server) int {
	err := srv.Run(ctx, &mcpserver.StdioTransport{Reader: std.in, Writer: std.out})
	switch {
	case errors.Is(err, syscall.EPIPE):
		fmt.Fprintf(std.err, "wai serve: the client closed its end of the connection during a call; its session is closed\n")
	case err != nil:
		return fail(ctx, std.err, err)
	}
	return exitOK
}

func serveHTTP(ctx context.Context, std stdio, srv *mcpserver.Server, addr string, tokens *mcpserver.TokenSet) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return fail(ctx, std.err, backend.Errorf(backend.ErrUnavailable, "serve", addr, "cannot listen on %s: %v (is another server using the port? pick another with --http)", addr, err))
	}
	hs := &http.Server{Handler: srv.HTTPHandlerFor(tokens), ReadHeaderTimeout: 10 * time.Second}
	// The address line is how a script that passed port 0 finds the port.
	fmt.Fprintf(std.err, "wai serve: MCP streamable HTTP on http://%s/ (bearer token required)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		srv.Close()
		return fail(ctx, std.err, err)
	case <-ctx.Done():
	}
	// Stop accepting at once; then close every session, which cancels the
	// running calls and ends the streams clients hold open (Shutdown alone
	// would wait on those); then drop whatever connection is left.
	go func() { _ = hs.Shutdown(context.Background()) }()
	srv.Close()
	_ = hs.Close()
	return exitOK
}
