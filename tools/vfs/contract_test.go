package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/tooltest"
)

type P = map[string]any

// TestContract runs every tool's contract, case by case, through the
// kernel on each backend of tooltest.Backends (podman joins there, behind
// its build tags).
func TestContract(t *testing.T) {
	tooltest.Run(t, []string{"tools/vfs"}, nil, func(t *testing.T, e *tooltest.Env) {
		runContract(t, e.Kernel, e.Backend.Real)
	})
}

func runContract(t *testing.T, k *host.Kernel, realCommands bool) {
	t.Run("tools", func(t *testing.T) {
		got := map[string]bool{}
		for _, tool := range k.Tools() {
			if tool.Plugin == "vfs" {
				got[tool.Name] = true
			}
		}
		for _, want := range []string{"ls", "read_file", "write_file", "edit_file", "glob", "grep", "rm"} {
			if !got[want] {
				t.Errorf("the vfs plugin does not offer %s (has %v)", want, got)
			}
		}
		for _, tool := range k.Tools() {
			switch tool.Name {
			case "ls", "read_file", "glob", "grep":
				if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
					t.Errorf("%s is not annotated read-only", tool.Name)
				}
			case "rm", "edit_file":
				if tool.Annotations == nil || tool.Annotations.ReadOnlyHint || tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint {
					t.Errorf("%s is not annotated destructive", tool.Name)
				}
			}
		}
	})

	t.Run("paths", func(t *testing.T) {
		c := session(t, k)
		c.ok("write_file", P{"file_path": "/workspace/src/a.txt", "content": "x\n"})
		c.is("ls src after writing /workspace/src/a.txt", "ls", P{"path": "src"}, "a.txt")
		for _, bad := range []struct{ path, want string }{
			{"../etc/passwd", "Path segments may not include '.' or '..'."},
			{"a/./b", "Path segments may not include '.' or '..'."},
			{"caf\u00e9", "must contain only printable ASCII characters: \"caf\u00e9\"."},
			{strings.Repeat("x", 81), "Path segment exceeds the allowed length (80 characters)"},
			{strings.Repeat("d/", 16) + "f", "Path depth exceeds the allowed limit (16 segments)."},
		} {
			c.fails("ls", P{"path": bad.path}, bad.want)
			c.fails("read_file", P{"file_path": bad.path}, bad.want)
			c.fails("write_file", P{"file_path": bad.path, "content": ""}, bad.want)
			c.fails("edit_file", P{"file_path": bad.path, "old_string": "a", "new_string": "b"}, bad.want)
			c.fails("glob", P{"pattern": "*", "path": bad.path}, bad.want)
			c.fails("grep", P{"pattern": "x", "path": bad.path}, bad.want)
			c.fails("rm", P{"path": bad.path}, bad.want)
		}
		c.fails("ls", P{"path": "caf\u00e9"}, "path must contain only")
		c.fails("read_file", P{"file_path": "caf\u00e9"}, "file_path must contain only")
		deepest := strings.Repeat("d/", 15) + strings.Repeat("f", 80)
		c.ok("write_file", P{"file_path": deepest, "content": "deep"})
		c.is("read at the depth and segment limits", "read_file", P{"file_path": deepest}, "   1 | deep")
		c.fails("read_file", P{"file_path": "/workspace"}, "file_path must reference a file, not the workspace root.")
	})

	t.Run("ls", func(t *testing.T) {
		c := session(t, k)
		c.is("ls of an empty workspace", "ls", P{}, "Directory the workspace root is empty.")
		c.ok("write_file", P{"file_path": "b.txt", "content": "b"})
		c.ok("write_file", P{"file_path": "a/inner.txt", "content": "i"})
		c.ok("write_file", P{"file_path": "c.txt", "content": "c"})
		for _, root := range []string{"", "/", "/workspace"} {
			if got := c.ok("ls", P{"path": root}); got != "a/\nb.txt\nc.txt" {
				t.Errorf("ls %q: shallow and sorted, dirs marked; got %q", root, got)
			}
		}
		res := c.call("ls", P{"path": "a"})
		var v struct {
			Path    string `json:"path"`
			Entries []struct {
				Path, Kind string
				Size       int64
			} `json:"entries"`
		}
		if err := json.Unmarshal(res.Value, &v); err != nil || v.Path != "a" || len(v.Entries) != 1 ||
			v.Entries[0].Path != "a/inner.txt" || v.Entries[0].Kind != "file" || v.Entries[0].Size != 1 {
			t.Errorf("ls value %s: %v", res.Value, err)
		}
		c.fails("ls", P{"path": "missing"}, "Directory does not exist in the filesystem: missing")
		c.fails("ls", P{"path": "b.txt"}, "Cannot list a file path; provide a directory: b.txt")
	})

	t.Run("read_file", func(t *testing.T) {
		c := session(t, k)
		var lines []string
		for i := 1; i <= 2500; i++ {
			lines = append(lines, fmt.Sprintf("line %d", i))
		}
		c.ok("write_file", P{"file_path": "big.txt", "content": strings.Join(lines, "\n") + "\n"})
		got := c.ok("read_file", P{"file_path": "big.txt"})
		out := strings.Split(got, "\n")
		if len(out) != 2001 || out[0] != "   1 | line 1" || out[1999] != "2000 | line 2000" ||
			out[2000] != "[showing lines 1-2000 of 2500; read on with offset=2000]" {
			t.Errorf("default read: %d lines, first %q, last %q", len(out), out[0], out[len(out)-1])
		}
		c.is("read from offset 2498", "read_file", P{"file_path": "big.txt", "offset": 2498}, "2499 | line 2499\n2500 | line 2500")
		c.is("read offset 9 limit 2", "read_file", P{"file_path": "big.txt", "offset": 9, "limit": 2}, "  10 | line 10\n  11 | line 11\n[showing lines 10-11 of 2500; read on with offset=11]")
		res := c.call("read_file", P{"file_path": "big.txt", "offset": 1, "limit": 1})
		var v struct {
			Lines      []string `json:"lines"`
			TotalLines int      `json:"total_lines"`
			Offset     int      `json:"offset"`
		}
		if err := json.Unmarshal(res.Value, &v); err != nil || len(v.Lines) != 1 || v.Lines[0] != "line 2" || v.TotalLines != 2500 || v.Offset != 1 {
			t.Errorf("read value %s: %v", res.Value, err)
		}
		if got := c.ok("read_file", P{"file_path": "big.txt", "limit": 5000}); len(strings.Split(got, "\n")) != 2001 {
			t.Errorf("a limit over 2000 is clamped to 2000 lines (and the trailer), got %d lines", len(strings.Split(got, "\n")))
		}
		c.fails("read_file", P{"file_path": "big.txt", "limit": 0}, "limit must be a positive integer.")
		c.fails("read_file", P{"file_path": "big.txt", "offset": -1}, "offset must be non-negative.")
		c.fails("read_file", P{"file_path": "big.txt", "offset": 2500}, "offset 2500 is past the end of big.txt, which has 2500 lines")
		c.fails("read_file", P{"file_path": "nope.txt"}, "File does not exist in the filesystem: nope.txt")
		c.ok("write_file", P{"file_path": "blob.bin", "content": "ab\x00cd\n"})
		c.fails("read_file", P{"file_path": "blob.bin"}, `Cannot read blob.bin: it is a binary file (it contains NUL bytes); inspect it with shell_execute instead, e.g. ["od", "-c", "blob.bin"]`)
		c.ok("write_file", P{"file_path": "dir/x", "content": ""})
		c.fails("read_file", P{"file_path": "dir"}, "Cannot read dir")
		c.is("empty file", "read_file", P{"file_path": "dir/x"}, "File dir/x is empty.")
	})

	t.Run("write_file", func(t *testing.T) {
		c := session(t, k)
		c.is("write", "write_file", P{"file_path": "new/deep/f.py", "content": "print(1)\n"}, "Wrote 9 bytes to new/deep/f.py.")
		c.is("write outside", "write_file", P{"file_path": "/tmp/x.txt", "content": "x"},
			"Wrote 1 bytes to tmp/x.txt. The file tools took /tmp/x.txt as a path inside the workspace: a command finds this file at /workspace/tmp/x.txt, not at /tmp/x.txt.")
		c.is("write /workspace", "write_file", P{"file_path": "/workspace/w.txt", "content": "x"}, "Wrote 1 bytes to w.txt.")
		c.fails("write_file", P{"file_path": "new/deep/f.py", "content": "again"}, "File already exists; use edit_file to modify existing content: new/deep/f.py")
		c.fails("write_file", P{"file_path": "new", "content": "x"}, "new is a directory: name a file inside it")
		c.fails("write_file", P{"file_path": "/", "content": "x"}, "file_path must reference a file, not the workspace root.")
		c.ok("write_file", P{"file_path": "max.txt", "content": strings.Repeat("\u00e9", 48000)})
		c.fails("write_file", P{"file_path": "over.txt", "content": strings.Repeat("a", 48001)}, "Content exceeds maximum length of 48,000 characters (got 48001).")
		c.fails("ls", P{"path": "over.txt"}, "Directory does not exist in the filesystem")
	})

	t.Run("edit_file", func(t *testing.T) {
		c := session(t, k)
		c.ok("write_file", P{"file_path": "m.py", "content": "a = 1\nb = 1\nc = 2\n"})
		c.fails("edit_file", P{"file_path": "m.py", "old_string": "1", "new_string": "3"}, "old_string must match exactly once unless replace_all is true: it occurs 2 times")
		c.fails("edit_file", P{"file_path": "m.py", "old_string": "zzz", "new_string": "3"}, "old_string not found in the target file: m.py")
		c.fails("edit_file", P{"file_path": "m.py", "old_string": "", "new_string": "3"}, "old_string must not be empty.")
		c.fails("edit_file", P{"file_path": "m.py", "old_string": "c = 2", "new_string": "c = 2"}, "old_string and new_string are identical: the edit would change nothing")
		c.fails("edit_file", P{"file_path": "m.py", "old_string": "c", "new_string": strings.Repeat("c", 48001)}, "Replacement strings must be 48,000 characters or fewer.")
		c.fails("edit_file", P{"file_path": "gone.py", "old_string": "a", "new_string": "b"}, "File does not exist in the filesystem: gone.py")
		c.is("unique edit", "edit_file", P{"file_path": "m.py", "old_string": "c = 2", "new_string": "c = 3"}, "Edited m.py: 1 replacement.")
		c.is("replace_all", "edit_file", P{"file_path": "m.py", "old_string": " = 1", "new_string": " = 0", "replace_all": true}, "Edited m.py: 2 replacements.")
		c.is("after edits", "read_file", P{"file_path": "m.py"}, "   1 | a = 0\n   2 | b = 0\n   3 | c = 3")
	})

	t.Run("outside", func(t *testing.T) { outsideContract(session(t, k)) })
	t.Run("dot", func(t *testing.T) { dotContract(session(t, k)) })
	if realCommands {
		t.Run("links", func(t *testing.T) { linksContract(t, k) })
	}

	// A file that a command made was never read by this session: the
	// kernel refuses to edit it blind, and the refusal reaches the model.
	// The mock's commands change no files, so this runs where commands do.
	if realCommands {
		t.Run("read_before_write", func(t *testing.T) {
			c := session(t, k)
			c.sh("echo 'x = 1' > made.py")
			c.fails("edit_file", P{"file_path": "made.py", "old_string": "1", "new_string": "2"}, "has not been read in this session")
			c.ok("read_file", P{"file_path": "made.py"})
			c.ok("edit_file", P{"file_path": "made.py", "old_string": "1", "new_string": "2"})
		})
	}

	// Lists and matches stop at 2,000 entries and say so. A command makes
	// the 2,001 files: the mock's commands make none.
	if realCommands {
		t.Run("caps", func(t *testing.T) {
			c := session(t, k)
			c.sh("mkdir many && cd many && i=0; while [ $i -lt 2001 ]; do echo hit > f$i.txt; i=$((i+1)); done")
			for _, call := range []struct {
				tool   string
				params P
			}{
				{"ls", P{"path": "many"}},
				{"glob", P{"pattern": "**/*.txt"}},
				{"grep", P{"pattern": "hit"}},
			} {
				// One call for the message and the value: each walks the
				// 2,001 files through the plugin, seconds under -race.
				res := c.call(call.tool, call.params)
				if !res.OK {
					t.Fatalf("%s over 2,001 files failed: %s", call.tool, res.Message)
				}
				lines := strings.Split(res.Message, "\n")
				if len(lines) != 2001 || !strings.HasPrefix(lines[2000], "[truncated: only the first 2000 ") {
					t.Errorf("%s over 2,001 files: %d lines, last %q", call.tool, len(lines), lines[len(lines)-1])
				}
				var v struct {
					Truncated bool `json:"truncated"`
				}
				if err := json.Unmarshal(res.Value, &v); err != nil || !v.Truncated {
					t.Errorf("%s value does not say truncated: %v", call.tool, err)
				}
			}
		})
	}

	t.Run("glob", func(t *testing.T) {
		c := session(t, k)
		for _, f := range []string{"src/b.py", "src/a.py", "src/pkg/c.py", "README.md", "src/pkg/d.txt"} {
			c.ok("write_file", P{"file_path": f, "content": "x\n"})
		}
		c.is("glob **/*.py", "glob", P{"pattern": "**/*.py"}, "src/a.py\nsrc/b.py\nsrc/pkg/c.py")
		c.is("glob *.py under src", "glob", P{"pattern": "*.py", "path": "/workspace/src"}, "src/a.py\nsrc/b.py")
		c.is("a glob matching only a directory lists nothing", "glob", P{"pattern": "src"}, `No files match "src" under the workspace root.`)
		c.fails("glob", P{"pattern": " "}, "Pattern must not be empty.")
		c.fails("glob", P{"pattern": "*", "path": "absent"}, "Directory does not exist in the filesystem: absent")
		c.fails("glob", P{"pattern": "[", "path": "src"}, "Cannot glob")
	})

	t.Run("grep", func(t *testing.T) {
		c := session(t, k)
		c.seed(map[string]string{"b.py": "def f():\n    return 1\n", "a/x.py": "x = 1\ndef g():\n    pass\n",
			"a/notes.txt": "def in text\n", "bin.dat": "def \x00binary\n"})
		c.is("grep ^def: sorted by path and line, binary skipped", "grep", P{"pattern": "^def "}, "a/notes.txt:1: def in text\na/x.py:2: def g():\nb.py:1: def f():")
		c.is("grep with glob", "grep", P{"pattern": "def", "glob": "*.py"}, "a/x.py:2: def g():\nb.py:1: def f():")
		c.is("grep under a", "grep", P{"pattern": "def", "path": "/workspace/a"}, "a/notes.txt:1: def in text\na/x.py:2: def g():")
		c.is("no matches", "grep", P{"pattern": "nothing here"}, `No matches for "nothing here" under the workspace root.`)
		c.fails("grep", P{"pattern": "(unclosed"}, "Invalid regular expression: error parsing regexp: missing closing ): `(unclosed`")
		c.fails("grep", P{"pattern": ""}, "Pattern must not be empty.")
		c.fails("grep", P{"pattern": "x", "path": "gone"}, "Path does not exist in the filesystem: gone")
	})

	t.Run("rm", func(t *testing.T) {
		c := session(t, k)
		c.seed(map[string]string{"tree/a/b.txt": "b", "tree/c.txt": "c", "keep.txt": "k"})
		for _, root := range []string{"", "/", "/workspace"} {
			c.fails("rm", P{"path": root}, "Cannot delete root directory.")
		}
		if got := c.ok("rm", P{"path": "tree"}); !strings.HasPrefix(got, "Removed tree (") {
			t.Errorf("rm tree: %q", got)
		}
		c.fails("rm", P{"path": "tree"}, "No files matched the provided path: tree")
		c.is("rm file", "rm", P{"path": "keep.txt"}, "Removed keep.txt (1 entry).")
		c.is("after rm", "ls", P{}, "Directory the workspace root is empty.")
	})
}
