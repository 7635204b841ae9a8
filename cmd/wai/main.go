// Command wai gives an agent a shell and a filesystem it cannot hurt anyone
// with: `wai exec` runs one command in a session's sandbox, through the
// kernel's limits and policies, on the backend the configuration names.
//
// Each subcommand lives in its own file and registers itself in init, so
// adding one touches nothing else; see commands.go.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	// The backends wai can run on. Each registers itself by name; the
	// podman package is a stub that says how to build it in unless the
	// Podman build tags are set (the Makefile sets them). kubernetes is
	// registered only to say that it is not yet available (it links no
	// Kubernetes code).
	_ "github.com/wai-dev/wai/plugins/host"
	_ "github.com/wai-dev/wai/plugins/kubernetes"
	_ "github.com/wai-dev/wai/plugins/mock"
	_ "github.com/wai-dev/wai/plugins/podman"
)

// main is the only code that touches the process as a whole (its
// arguments, streams, environment, signals and exit); run does the rest,
// so tests run wai in process.
func main() {
	ctx, cancel := context.WithCancel(context.Background())
	stop := handleSignals(cancel)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	cancel()
	os.Exit(code)
}

// run is wai: main calls it with the process's arguments (without the
// program name) and standard streams, and exits with the status it
// returns. It never exits the process itself, so tests call it in process.
// The environment is the process's; runStdio takes another.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runStdio(ctx, args, stdio{in: stdin, out: stdout, err: stderr, getenv: os.Getenv})
}

// handleSignals makes the first SIGINT or SIGTERM call cancel, which stops
// the running command cleanly (kills it, removes a throwaway workspace,
// closes wai serve's sessions), and a second one end wai at once, since a
// person must be able to cut a hung cleanup short. Catching the second
// signal here, rather than letting its default action come back, also
// works when wai started with SIGINT ignored (a background job) or a
// library catches the signals too.
//
// SIGPIPE is caught too, and dropped: without that the Go runtime kills
// wai when a write to standard output or error meets a reader that is
// gone (a `wai serve` whose MCP client died during a call, writing it a
// progress notification), skipping every cleanup. Caught, the write fails
// with EPIPE and the caller ends as it does on any write error. Catching
// rather than ignoring it (signal.Ignore) matters: an ignored signal stays
// ignored in the commands the host backend starts, and `yes | head` would
// then run on instead of dying of it.
func handleSignals(cancel context.CancelFunc) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		for seen := 0; ; {
			select {
			case <-ch:
				seen++
				if seen == 1 {
					cancel()
					continue
				}
				fmt.Fprintf(os.Stderr, "wai: second signal: exiting at once; workspaces may be left behind (`wai gc` removes them)\n")
				os.Exit(exitInterrupted)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		signal.Stop(pipe)
		close(done)
	}
}
