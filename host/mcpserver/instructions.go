package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
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
	var t toolKinds
	containers := false
	for _, tool := range tools {
		switch {
		case tool.Plugin == "vfs":
			t.files = append(t.files, "`"+tool.Name+"`")
		case tool.Plugin == "jobs":
			// They run for up to job_max_runtime, not a command's timeout.
			t.jobs = append(t.jobs, "`"+tool.Name+"`")
		case tool.Plugin == "python":
			// Its code runs under a timeout of its own, shorter than a
			// command's (its description gives it): listed with the
			// commands, the model read the commands' limit as its own.
			t.code = append(t.code, "`"+tool.Name+"`")
		case tool.Name == "containers":
			// It runs nothing in this workspace's environment: its
			// containers are others, described on their own.
			containers = true
		default:
			t.commands = append(t.commands, "`"+tool.Name+"`")
		}
	}
	var b strings.Builder
	switch {
	case info.Backend == mockBackend:
		mockText(&b, t.files)
	case !info.Sandboxed:
		hostText(&b, info, t.files)
	default:
		sandboxText(&b, info, t)
	}
	jobsText(&b, info, t.jobs)
	where := ""
	if containers {
		b.WriteString(containersText)
		// True since a container's commands pass the command policies too.
		where = ", in the session or in a container you manage,"
	}
	b.WriteString("\nThe workspace lasts for this session. Every command" + where + " and every file change passes wai's limits and policies; a refused call says why.")
	return b.String()
}

// toolKinds are the offered tools' names, quoted, by what they do.
type toolKinds struct{ commands, code, files, jobs []string }

func sandboxText(b *strings.Builder, info host.BackendInfo, t toolKinds) {
	if info.Backend == "podman" {
		b.WriteString("Podman Workspace\n----------------\n")
		b.WriteString("You have access to an isolated Linux container powered by Podman.")
	} else {
		title := "Sandboxed Workspace (" + info.Backend + " backend)"
		b.WriteString(title + "\n" + strings.Repeat("-", len(title)) + "\n")
		b.WriteString("You have access to an isolated workspace.")
	}
	if len(t.files) > 0 {
		fmt.Fprintf(b, " The %s tools operate on `/workspace` inside it; their paths are relative to `/workspace`.", strings.Join(t.files, ", "))
	}
	if len(t.commands) > 0 {
		fmt.Fprintf(b, " The %s tools run short commands (≤%d seconds) in the same environment, in `/workspace`.",
			strings.Join(t.commands, ", "), int(info.MaxCommandTimeout/time.Second))
	}
	if len(t.code) > 0 {
		fmt.Fprintf(b, " The %s tools run code there too, under the shorter timeout their descriptions give.", strings.Join(t.code, ", "))
	}
	if info.NetworkEnabled {
		b.WriteString(" Commands can reach the network; no privileged operations are available.")
	} else {
		b.WriteString(" No network access or privileged operations are available.")
	}
	writableText(b, info.Environment)
	if len(info.HostMounts) > 0 {
		b.WriteString("\nHost mounts: copied into `/workspace` when it was created (read-write copies: changes stay in the workspace and never reach the host).\n\n")
		b.WriteString("| Host path | Workspace path | Access |\n| --- | --- | --- |\n")
		for _, m := range info.HostMounts {
			fmt.Fprintf(b, "| %s | %s | copied |\n", m.HostPath, m.WorkspacePath)
		}
	}
}

// writableText says where commands can write, what is kept and what $HOME
// is, from what the backend says of itself; a backend that says nothing is
// promised the workspace alone.
func writableText(b *strings.Builder, e *backend.Environment) {
	if e == nil || e.ScratchDir == "" {
		b.WriteString(" Only `/workspace` persists between commands and is writable; do not assume files outside `/workspace` exist.\n")
		return
	}
	fmt.Fprintf(b, " `/workspace` is writable and kept for the whole session. `%s` is writable too (%s), but only while the session's container lives",
		e.ScratchDir, size(e.ScratchBytes))
	if e.ScratchIdle > 0 {
		fmt.Fprintf(b, ", and the container is removed after %s without a command or a running background job (the next command starts a fresh one)", span(e.ScratchIdle))
	}
	fmt.Fprintf(b, ": keep what matters in `/workspace`. Nothing else is writable.")
	if !e.HomeWritable {
		home := "`$HOME`"
		if e.Home != "" {
			home = "`$HOME` (" + e.Home + ")"
		}
		b.WriteString(" " + home + " is not writable, so `git config --global` fails: give git an identity in the repository " +
			"(`git config user.name NAME` and `git config user.email EMAIL` inside it) or per command (`git -c user.name=NAME -c user.email=EMAIL commit ...`).")
	}
	b.WriteString("\n")
}

// jobsText describes the background job tools with their real limits.
func jobsText(b *strings.Builder, info host.BackendInfo, jobs []string) {
	if len(jobs) == 0 {
		return
	}
	fmt.Fprintf(b, "\nThe %s tools run longer commands (builds, test suites, servers) in the background, in the same environment: "+
		"each for up to %s, at most %d at once; they are stopped when the session ends.\n",
		strings.Join(jobs, ", "), span(info.JobMaxRuntime), info.MaxJobs)
}

// span renders a configured duration in words a model reads: "15 min".
func span(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return d.String()
}

// size renders a byte count as the config gives it: "64 MiB".
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
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

// mockBackend is the name the test-double backend (plugins/mock)
// registers under: nothing it is given runs.
const mockBackend = "mock"

// mockText tells the model the truth of the mock backend: it was told of
// a sandbox without network, and every command "succeeded" with empty
// output, even one that should have timed out.
func mockText(b *strings.Builder, fileTools []string) {
	b.WriteString("Simulated Workspace: COMMANDS ARE NOT RUN\n-----------------------------------------\n")
	b.WriteString("This server runs on wai's mock backend, which is made for testing wai: no command is run. " +
		"Every command, job and piece of code gets a canned result configured in advance (by default success with empty output), " +
		"whatever it asks, so a result says nothing about what the command would do")
	if len(fileTools) > 0 {
		fmt.Fprintf(b, "; the %s tools work on files kept in memory for this session", strings.Join(fileTools, ", "))
	}
	b.WriteString(". Do not rely on them.\n")
}

// containersText is the short version of docs/containers.md for the
// model: what the containers tool's containers are, how to use them, and
// how a person takes part.
const containersText = "\nManaged containers\n------------------\n" +
	"The `containers` tool runs containers beside this workspace, each separate from it and from each other: " +
	"start with `preflight`, then `create` with a `purpose` (python, node, rust, go, general, clean; or try-repo with `repo_url`, which picks one from the repository). " +
	"Explicit parameters win over the purpose's defaults. The session's `/workspace` is mounted in them unless `mount_cwd` is false, " +
	"or they are `persistent` (they outlive the workspace: move files with `copy_in` and `copy_out`). " +
	"Use `exec` for short commands and `exec_background` with `exec_poll` for long ones (builds, test suites, servers). " +
	"`snapshot` saves a container's files (not its secrets) and `restore` makes a new container from it; " +
	"`create_network` makes a network whose containers reach each other by name and, unless allowed, nothing outside; `compose_up` runs a compose file's services on one. " +
	"To hand a container to the person, call `exec_interactive_hint` and give them the command it returns: they can work in it while you keep using `exec`. " +
	"Containers get no network and none of the host's credentials unless configured or approved, and go away with the session unless `persistent`: `list` shows your persistent ones in later sessions too, `stop` and `start` keep their files, `destroy` removes them; some requests (GPUs, ~/.ssh, host credentials, sensitive mounts, the bridge network or egress) need the person's approval, and a refused one says which setting allows it.\n"
