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
	for _, t := range tools {
		if t.Plugin == "vfs" {
			fileTools = append(fileTools, "`"+t.Name+"`")
		} else {
			commandTools = append(commandTools, "`"+t.Name+"`")
		}
	}
	var b strings.Builder
	if !info.Sandboxed {
		hostText(&b, info, fileTools)
	} else {
		sandboxText(&b, info, commandTools, fileTools)
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
