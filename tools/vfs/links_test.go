package main_test

import (
	"testing"

	"github.com/wai-dev/wai/host"
)

// linksContract: what the file tools say about names the shell sees but
// they cannot reach, symlinks out of the workspace and absolute paths
// outside /workspace, is true and final: never "try again", never a bare
// "does not exist" about a name `ls` shows. The links are made by a
// command, as a model's would be; the mock's commands make none.
func linksContract(t *testing.T, k *host.Kernel) {
	c := session(t, k)
	c.sh("ln -s /etc dlink && ln -s /etc/hostname hn")
	for range 2 { // the same answer again: nothing to retry
		c.fails("write_file", P{"file_path": "dlink/evil", "content": "x"},
			"dlink is a symbolic link that leads outside the workspace (to /etc)")
	}
	c.fails("read_file", P{"file_path": "hn"},
		"File does not exist in the filesystem: hn (hn is a symbolic link that leads outside the workspace (to /etc/hostname)")
	c.fails("ls", P{"path": "dlink"}, "use the shell")
}

// outsideContract: an absolute path outside /workspace is read as a path
// inside it, and a miss says so and where the rest is reached.
func outsideContract(c client) {
	c.fails("read_file", P{"file_path": "/etc/passwd"},
		"The file tools see only the workspace and read /etc/passwd as a path inside it; to reach /etc/passwd outside the workspace, run a command")
	c.fails("ls", P{"path": "/usr/lib"}, "to reach /usr/lib outside the workspace")
	// A workspace path that is missing gets no such hint: it is not wrong.
	c.call("write_file", P{"file_path": "here.txt", "content": "x"})
	res := c.call("read_file", P{"file_path": "/workspace/absent.txt"})
	if res.OK || res.Message != "File does not exist in the filesystem: absent.txt" {
		c.t.Errorf("read of a missing workspace file: ok=%v %q", res.OK, res.Message)
	}
}

// dotContract: "." names the root, as in the shell, for the tools that
// take a directory; a file tool still wants a file.
func dotContract(c client) {
	c.ok("write_file", P{"file_path": "d/hit.txt", "content": "needle\n"})
	c.is("grep under .", "grep", P{"pattern": "needle", "path": "."}, "d/hit.txt:1: needle")
	c.is("ls .", "ls", P{"path": "."}, "d/")
	c.fails("read_file", P{"file_path": "."}, "must reference a file")
}
