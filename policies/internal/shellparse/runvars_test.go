package shellparse

import (
	"strings"
	"testing"
)

// A request or a command that sets a variable deciding what names run is
// retargeted, however the variable is set; other variables are not.
func TestRetargeted(t *testing.T) {
	for _, tc := range []struct {
		command []string // the argv, or the shell that reads shell
		shell   string
		env     []string
		want    string
	}{
		{[]string{"ls"}, "", []string{"PATH"}, "the request sets PATH"},
		{[]string{"ls"}, "", []string{"HOME", "BASH_FUNC_ls%%"}, "the request sets BASH_FUNC_ls%%"},
		{nil, "PATH=/workspace/bin:$PATH ls", nil, "the command sets PATH"},
		{nil, "env PATH=/x ls", nil, "the command sets PATH"},
		{nil, "export PATH; PATH=/x; ls", nil, "the command sets PATH"},
		{nil, "for PATH in /x; do ls; done", nil, "the command sets PATH"},
		{nil, "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=!id git x", nil, "GIT_CONFIG_COUNT"},
		{nil, "GIT_SSH_COMMAND=id git fetch", nil, "GIT_SSH_COMMAND, which names a program git runs"},
		{nil, "LD_PRELOAD=/workspace/x.so ls", nil, "loads code into every program"},
		{nil, "ls", []string{"EDITOR"}, "the request sets EDITOR"},
		// sh reads export as a command: its word is not literal, yet it
		// names PATH.
		{nil, `export PATH="$PWD/bin:$PATH"; ls`, nil, "the command sets PATH"},
		{nil, `n=PATH; export "$n=/x"; ls`, nil, "name is known only when it runs"},
		{nil, `n=PATH; read $n; ls`, nil, "could be PATH"},
		{nil, `printf -v PATH /x; ls`, nil, "the command sets PATH"},
		{nil, `printf -vPATH /x; ls`, nil, "the command sets PATH"},
		{[]string{"bash", "-c"}, `printf $o PATH /x; ls`, nil, "could be -v PATH"},
		{nil, `printf "$fmt" x`, nil, ""}, // dash's printf has no -v
		{[]string{"bash", "-c"}, `declare -n r=PATH; r=/x; ls`, nil, "the command sets PATH"},
		{[]string{"bash", "-c"}, `local -n r=$1; r=/x; ls`, nil, "refer to a variable named when it runs"},
		{[]string{"bash", "-c"}, `export PATH+=:/x; ls`, nil, "the command sets PATH"},
		{nil, `env 'BASH_FUNC_ls%%=() { id; }' bash -c ls`, nil, "BASH_FUNC_ls%%, which defines a shell function"},
		{nil, `sudo 'BASH_FUNC_ls%%=() { id; }' ls`, nil, "BASH_FUNC_ls%%"},
		{nil, "HOME=/x TERM=dumb ls", []string{"LANG"}, ""},
		{nil, `printf '%s\n' PATH EDITOR`, nil, ""},
		{nil, `read -p "$prompt" -r answer`, nil, ""},
		{nil, `getopts "$spec" opt`, nil, ""},
		{[]string{"bash", "-c"}, `local arr[0]=x; declare -a a=(1 2); unset -v x`, nil, ""},
		{nil, `export CC="$x"`, nil, ""},
		{[]string{"ls"}, "", []string{"GIT_TERMINAL_PROMPT"}, ""},
	} {
		command := tc.command // with a shell string: the shell and its -c
		if tc.shell != "" {
			if command == nil {
				command = []string{"/bin/sh", "-c"}
			}
			command = append(command, tc.shell)
		}
		got := AnalyzeRequest(command, tc.shell, tc.env...).Retargeted()
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q %q env %v: %q, want it to say %q", tc.command, tc.shell, tc.env, got, tc.want)
		}
	}
}

// bash's enable -f loads code from a shared object and gives it a command
// name: the run is opaque. Other uses of enable are plain.
func TestEnableLoadsCode(t *testing.T) {
	for in, opaque := range map[string]bool{
		"enable -f ./x.so ls; ls": true,
		"enable -nf x.so ls":      true,
		"enable $o ls":            true,
		"enable -n echo; echo":    false,
		"enable":                  false,
	} {
		an := AnalyzeShell(in, Bash)
		if got := an.Runs[0].Opaque != ""; got != opaque {
			t.Errorf("%s: opaque %v (%q), want %v", in, got, an.Runs[0].Opaque, opaque)
		}
	}
}
