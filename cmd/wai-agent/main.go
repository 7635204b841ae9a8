//go:build linux

// Command wai-agent runs inside a wai session container and executes the
// host's commands there, speaking the protocol of docs/AGENT.md on its
// standard input and output. The podman backend bind-mounts it read-only
// into every container and starts it once per container; it is not meant
// to be run by hand.
//
// It is built static (CGO_ENABLED=0), so it runs in any image, including
// ones without a libc.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/wai-dev/wai/internal/agent"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "job" {
		os.Exit(job(os.Args[2:]))
	}
	if len(os.Args) > 1 {
		fmt.Fprintf(os.Stderr, "%s: takes no arguments but `job ...`; it speaks the protocol of docs/AGENT.md on stdin and stdout\n", agent.Name)
		os.Exit(2)
	}
	s := agent.NewServer(os.Stdin, os.Stdout, os.Stderr)
	// Alone in the container's PID namespace (under its init), where
	// every process is the sandbox's.
	s.KillOrphans = true
	if err := s.Serve(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", agent.Name, err)
		os.Exit(1)
	}
}

// job serves the background-job modes (docs/AGENT.md, "Background jobs"):
// `job run SPEC` supervises a job; status, cancel and list print JSON.
func job(args []string) int {
	var err error
	if args[0] == "run" && len(args) == 2 {
		err = agent.RunJob(args[1], os.Stdout)
	} else {
		err = agent.JobCommand(args, os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: job: %v\n", agent.Name, err)
		if errors.Is(err, agent.ErrNoJob) {
			return 3
		}
		return 1
	}
	return 0
}
