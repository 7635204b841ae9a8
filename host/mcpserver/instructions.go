package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wai-dev/wai/host"
)

// infoTimeout bounds choosing the kernel's backend when the server is
// built (a Podman service that does not answer); the CLI has chosen it
// already by then.
const infoTimeout = 30 * time.Second

// instructionsFor builds the server's instructions from the kernel's live
// backend: the model is told the sandbox it has, or plainly that it has
// none. It chooses the backend if nobody has yet.
func instructionsFor(k *host.Kernel) string {
	ctx, cancel := context.WithTimeout(context.Background(), infoTimeout)
	defer cancel()
	info, err := k.Info(ctx)
	if err != nil {
		// Nothing can run until the backend opens, and nothing about it
		// is known: promise no sandbox.
		return "wai could not open its execution backend (" + err.Error() + "). Tool calls fail until it is available; " +
			"do not assume the commands you run are sandboxed."
	}
	return instructionsText(info, k.Tools())
}

// instructionsText is the instructions for a backend and the tools offered.
func instructionsText(info host.BackendInfo, tools []host.Tool) string {
	var commandTools, fileTools []string
	containers := false
	for _, t := range tools {
		switch {
		case t.Plugin == "vfs":
			fileTools = append(fileTools, "`"+t.Name+"`")
		case t.Name == "containers":
			// It runs nothing in this workspace's environment: its
			// containers are others, described on their own.
			containers = true
		default:
			commandTools = append(commandTools, "`"+t.Name+"`")
		}
	}
	var b strings.Builder
	if !info.Sandboxed {
		hostText(&b, info, fileTools)
	} else {
		sandboxText(&b, info, commandTools, fileTools)
	}
	if containers {
		b.WriteString(containersText)
	}
	b.WriteString("\nThe workspace lasts for this session. Every command and file change passes wai's limits and policies; a refused call says why.")
	return b.String()
}

func sandboxText(b *strings.Builder, info host.BackendInfo, commandTools, fileTools []string) {
	if info.Backend == "podman" {
		b.WriteString("Podman Workspace\n----------------\n")
		b.WriteString("You have access to an isolated Linux container powered by Podman.")
	} else {
		title := "Sandboxed Workspace (" + info.Backend + " backend)"
		b.WriteString(title + "\n" + strings.Repeat("-", len(title)) + "\n")
		b.WriteString("You have access to an isolated workspace.")
	}
	if len(fileTools) > 0 {
		fmt.Fprintf(b, " The %s tools operate on `/workspace` inside it; their paths are relative to `/workspace`.", strings.Join(fileTools, ", "))
	}
	if len(commandTools) > 0 {
		fmt.Fprintf(b, " The %s tools run short commands (≤%d seconds) in the same environment, in `/workspace`.",
			strings.Join(commandTools, ", "), int(info.MaxCommandTimeout/time.Second))
	}
	if info.NetworkEnabled {
		b.WriteString(" Commands can reach the network; no privileged operations are available.")
	} else {
		b.WriteString(" No network access or privileged operations are available.")
	}
	b.WriteString(" Only `/workspace` persists between commands and is writable; do not assume files outside `/workspace` exist.\n")
	if len(info.HostMounts) > 0 {
		b.WriteString("\nHost mounts: copied into `/workspace` when it was created (read-write copies: changes stay in the workspace and never reach the host).\n\n")
		b.WriteString("| Host path | Workspace path | Access |\n| --- | --- | --- |\n")
		for _, m := range info.HostMounts {
			fmt.Fprintf(b, "| %s | %s | copied |\n", m.HostPath, m.WorkspacePath)
		}
	}
}

func hostText(b *strings.Builder, info host.BackendInfo, fileTools []string) {
	b.WriteString("Host Workspace: NOT SANDBOXED\n-----------------------------\n")
	fmt.Fprintf(b, "WARNING: commands run directly on the host machine (the %s backend), not in a sandbox", info.Backend)
	if info.Fallback {
		fmt.Fprintf(b, " (the %s backend was unavailable and wai fell back to it)", info.Configured)
	}
	b.WriteString(". They run with the rights of wai's user, can read and change anything that user can, and can reach the network. " +
		"The workspace directory is the working directory of every command")
	if len(fileTools) > 0 {
		fmt.Fprintf(b, " and the root of the paths of the %s tools", strings.Join(fileTools, ", "))
	}
	fmt.Fprintf(b, ", but nothing confines commands to it. Commands are limited to %d seconds. Act as you would on a machine that matters.\n",
		int(info.MaxCommandTimeout/time.Second))
}

// containersText is the short version of docs/containers.md for the
// model: what the containers tool's containers are, how to use them, and
// how a person takes part.
const containersText = "\nManaged containers\n------------------\n" +
	"The `containers` tool runs containers beside this workspace, each separate from it and from each other: " +
	"start with `preflight`, then `create` with a `purpose` (python, node, rust, go, general, clean; or try-repo with `repo_url`, which picks one from the repository). " +
	"Explicit parameters win over the purpose's defaults. The session's `/workspace` is mounted in them unless `mount_cwd` is false. " +
	"Use `exec` for short commands and `exec_background` with `exec_poll` for long ones (builds, test suites, servers). " +
	"`snapshot` saves a container's files (not its secrets) and `restore` makes a new container from it; " +
	"`create_network` makes a network whose containers reach each other by name and, unless allowed, nothing outside; `compose_up` runs a compose file's services on one. " +
	"To hand a container to the person, call `exec_interactive_hint` and give them the command it returns: they can work in it while you keep using `exec`. " +
	"Containers go away with the session unless `persistent`; some requests (GPUs, ~/.ssh, sensitive mounts, egress) need the person's approval, and a refused one says which setting allows it.\n"
