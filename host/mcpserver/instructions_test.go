package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

var bundled = []host.Tool{
	{Name: "shell_execute", Plugin: "shell"}, {Name: "read_file", Plugin: "vfs"}, {Name: "ls", Plugin: "vfs"},
}

// On podman the model reads the contract's "Podman Workspace" section with the
// real limit, and the host mounts as a table.
func TestInstructionsPodmanWorkspace(t *testing.T) {
	info := host.BackendInfo{Backend: "podman", Sandboxed: true, MaxCommandTimeout: 90 * time.Second,
		HostMounts: []host.HostMount{{HostPath: "/srv/data", WorkspacePath: "/workspace/data"}}}
	got := instructionsText(info, bundled)
	says(t, got, []string{
		"Podman Workspace\n----------------\n",
		"isolated Linux container powered by Podman",
		"The `read_file`, `ls` tools operate on `/workspace`",
		"The `shell_execute` tools run short commands (≤90 seconds)",
		"No network access or privileged operations are available.",
		"Only `/workspace` persists between commands and is writable",
		"| Host path | Workspace path | Access |",
		"| /srv/data | /workspace/data | copied |",
	})
	if strings.Contains(got, "NOT") {
		t.Errorf("sandboxed instructions warn:\n%s", got)
	}
	// evaluate_python's own timeout is shorter than a command's: it is
	// not listed under the commands' limit, which it was.
	got = instructionsText(info, append(bundled, host.Tool{Name: "evaluate_python", Plugin: "python"}))
	says(t, got, []string{"The `shell_execute` tools run short commands (≤90 seconds)",
		"The `evaluate_python` tools run code there too, under the shorter timeout their descriptions give."})
	if strings.Contains(got, "`shell_execute`, `evaluate_python`") {
		t.Errorf("evaluate_python is given the commands' limit:\n%s", got)
	}
	info.HostMounts, info.NetworkEnabled = nil, true
	got = instructionsText(info, bundled)
	if strings.Contains(got, "Host path") || !strings.Contains(got, "Commands can reach the network") {
		t.Errorf("without mounts, with network:\n%s", got)
	}
}

// On the host backend, and on a fallback to it, the model reads a plain
// warning and no promise of a sandbox.
func TestInstructionsHostWarn(t *testing.T) {
	for _, info := range []host.BackendInfo{
		{Backend: "host", Configured: "host", NetworkEnabled: true, MaxCommandTimeout: 120 * time.Second},
		{Backend: "host", Configured: "podman", Fallback: true, NetworkEnabled: true, MaxCommandTimeout: 120 * time.Second},
	} {
		got := instructionsText(info, bundled)
		for _, want := range []string{"NOT SANDBOXED", "WARNING: commands run directly on the host machine", "nothing confines commands to it"} {
			if !strings.Contains(got, want) {
				t.Errorf("instructions lack %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "isolated") || strings.Contains(got, "Podman Workspace") {
			t.Errorf("host instructions promise isolation:\n%s", got)
		}
		if info.Fallback && !strings.Contains(got, "the podman backend was unavailable") {
			t.Errorf("fallback instructions do not say why:\n%s", got)
		}
	}
}

// The containers tool is not a command tool of the workspace: the model
// reads what its containers are in a section of their own.
func TestInstructionsContainers(t *testing.T) {
	info := host.BackendInfo{Backend: "podman", Sandboxed: true, MaxCommandTimeout: 90 * time.Second}
	got := instructionsText(info, append(bundled, host.Tool{Name: "containers", Plugin: "containers"}))
	if strings.Contains(got, "`containers` tools run short commands") || strings.Contains(got, "`shell_execute`, `containers`") {
		t.Errorf("the containers tool is described as running commands in the workspace:\n%s", got)
	}
	for _, want := range []string{"Managed containers\n", "`preflight`", "`exec_background`", "`exec_interactive_hint`", "`create_network`", "persistent"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
	if got := instructionsText(info, bundled); strings.Contains(got, "Managed containers") {
		t.Errorf("containers described without the tool:\n%s", got)
	}
}

// What the model is told it can write, for how long, and what $HOME is,
// comes from the backend's own description; the job tools are described
// with the configured job limits, not a command's timeout.
func TestInstructionsWritableAndJobs(t *testing.T) {
	info := host.BackendInfo{Backend: "podman", Sandboxed: true, MaxCommandTimeout: 120 * time.Second,
		JobMaxRuntime: 90 * time.Minute, MaxJobs: 3,
		Environment: &backend.Environment{ScratchDir: "/tmp", ScratchBytes: 32 << 20, ScratchIdle: 7 * time.Minute, Home: "/nonexistent"}}
	jobs := append(bundled, host.Tool{Name: "job_start", Plugin: "jobs"}, host.Tool{Name: "job_status", Plugin: "jobs"})
	got := instructionsText(info, jobs)
	says(t, got, []string{
		"`/workspace` is writable and kept for the whole session.",
		"`/tmp` is writable too (32 MiB), but only while the session's container lives, and the container is removed after 7 min without a command or a running background job",
		"Nothing else is writable.",
		"`$HOME` (/nonexistent) is not writable, so `git config --global` fails",
		"`git config user.email EMAIL`",
		"The `shell_execute` tools run short commands (≤120 seconds)",
		"The `job_start`, `job_status` tools run longer commands (builds, test suites, servers) in the background, in the same environment: each for up to 90 min, at most 3 at once",
	})
	for _, wrong := range []string{"Only `/workspace` persists", "`job_start` tools run short", "`shell_execute`, `job_start`"} {
		if strings.Contains(got, wrong) {
			t.Errorf("instructions say %q:\n%s", wrong, got)
		}
	}
	// A HOME on the scratch is writable, and then nothing is said of git.
	info.Environment.Home, info.Environment.HomeWritable = "/tmp/home", true
	if got := instructionsText(info, bundled); strings.Contains(got, "HOME") || strings.Contains(got, "job_") {
		t.Errorf("a writable HOME, or job tools not offered, described:\n%s", got)
	}
	// On the host backend the job tools are described too.
	info = host.BackendInfo{Backend: "host", NetworkEnabled: true, MaxCommandTimeout: 120 * time.Second, JobMaxRuntime: time.Hour, MaxJobs: 4}
	if got := instructionsText(info, jobs); !strings.Contains(got, "each for up to 1 h, at most 4 at once") {
		t.Errorf("host instructions lack the job limits:\n%s", got)
	}
}

// says fails the test for each of wants the instructions got lack.
func says(t *testing.T, got string, wants []string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
}
