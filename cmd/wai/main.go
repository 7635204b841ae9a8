// Command wai gives an agent a shell and a filesystem it cannot hurt anyone
// with: `wai exec` runs one command in a session's sandbox, through the
// kernel's limits and policies, on the backend the configuration names.
//
// Each subcommand lives in its own file and registers itself in init, so
// adding one touches nothing else; see commands.go.
package main

import (
	"context"
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first interrupt cancels the running command and lets wai clean
	// up (kill it, remove a throwaway workspace); a second one is not
	// caught, so it ends wai at once if cleanup hangs.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}
