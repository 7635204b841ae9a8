package shellparse

import (
	"strings"
	"testing"
)

// A request or a command that sets a variable deciding what names run is
// retargeted, however the variable is set; other variables are not.
func TestRetargeted(t *testing.T) {
	for _, tc := range []struct {
		command []string
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
		{nil, "HOME=/x TERM=dumb ls", []string{"LANG"}, ""},
		{[]string{"ls"}, "", []string{"GIT_TERMINAL_PROMPT"}, ""},
	} {
		command := tc.command
		if tc.shell != "" {
			command = []string{"/bin/sh", "-c", tc.shell}
		}
		got := AnalyzeRequest(command, tc.shell, tc.env...).Retargeted()
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q %q env %v: %q, want it to say %q", tc.command, tc.shell, tc.env, got, tc.want)
		}
	}
}
