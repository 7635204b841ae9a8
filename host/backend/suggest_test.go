package backend

import "testing"

func TestNearest(t *testing.T) {
	tools := []string{"edit_file", "ls", "read_file", "shell_execute", "write_file"}
	for in, want := range map[string]string{
		"shel_execute":  "shell_execute", // a dropped letter
		"shell_exceute": "shell_execute", // a swap
		"Read_File":     "read_file",     // case
		"read-file":     "read_file",     // separator
		"execute":       "shell_execute", // a part of exactly one
		"file":          "",              // a part of several: no guess
		"deploy":        "",              // nothing close
		"ls":            "",              // itself is not a suggestion
	} {
		if got := Nearest(in, tools); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
