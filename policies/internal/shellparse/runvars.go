package shellparse

import (
	"fmt"
	"strings"
)

// runVars are the environment and shell variables that decide which
// program a command runs, or make a program run code of their choosing:
// a command that sets one is not the command its name says. The value
// finishes "…, which …" in a reason.
var runVars = map[string]string{
	"PATH":     "decides which program a command name runs",
	"BASH_ENV": "names a file of commands the shell runs first",
	"ENV":      "names a file of commands the shell runs first",
	// Shell options such as xtrace make the shell expand PS4, and
	// PROMPT_COMMAND runs as commands.
	"SHELLOPTS": "turns on shell options that run code", "BASHOPTS": "turns on shell options that run code",
	"PS4": "the shell expands as code", "PROMPT_COMMAND": "the shell runs as commands",
	// The dynamic loader and glibc load code named here into every
	// program, whatever its name.
	"LD_PRELOAD": "loads code into every program", "LD_LIBRARY_PATH": "loads code into every program",
	"LD_AUDIT": "loads code into every program", "GCONV_PATH": "loads code into every program",
	// Programs run the command these name (git commit runs $EDITOR, git
	// log $PAGER, git fetch $GIT_SSH_COMMAND, less $LESSOPEN).
	"EDITOR": "names a program other programs run", "VISUAL": "names a program other programs run",
	"PAGER": "names a program other programs run", "MANPAGER": "names a program other programs run",
	"BROWSER": "names a program other programs run", "SSH_ASKPASS": "names a program other programs run",
	"LESSOPEN": "names a program other programs run", "LESSCLOSE": "names a program other programs run",
	"GIT_PAGER": "names a program git runs", "GIT_EDITOR": "names a program git runs",
	"GIT_SEQUENCE_EDITOR": "names a program git runs", "GIT_SSH": "names a program git runs",
	"GIT_SSH_COMMAND": "names a program git runs", "GIT_EXTERNAL_DIFF": "names a program git runs",
	"GIT_ASKPASS": "names a program git runs", "GIT_PROXY_COMMAND": "names a program git runs",
	"GIT_EXEC_PATH": "decides which programs git runs", "GIT_TEMPLATE_DIR": "gives new repositories hooks that git runs",
}

// runVarPrefixes name families of such variables: bash imports
// BASH_FUNC_name%% as a function that replaces the command name, and
// GIT_CONFIG_* (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT/KEY_n/VALUE_n,
// GIT_CONFIG_GLOBAL, …) give git configuration, which can run programs
// (aliases "!cmd", core.fsmonitor, core.pager).
var runVarPrefixes = map[string]string{
	"BASH_FUNC_": "defines a shell function that replaces a command",
	"GIT_CONFIG": "gives git configuration, which can run any program",
}

// RunVar reports whether setting the variable can change what a command
// runs, and how (what finishes "NAME, which …").
func RunVar(name string) (how string, ok bool) {
	if how, ok := runVars[name]; ok {
		return how, true
	}
	for p, how := range runVarPrefixes {
		if strings.HasPrefix(name, p) {
			return how, true
		}
	}
	return "", false
}

// EnvRunVar says why a request whose environment sets these variables
// cannot be judged by its command names, or "" when none is a RunVar.
func EnvRunVar(keys []string) string {
	for _, k := range keys {
		if how, ok := RunVar(k); ok {
			return fmt.Sprintf("the request sets %s, which %s", k, how)
		}
	}
	return ""
}

// Retargeted says why the commands of the analysis may not run the
// programs their names say: the request's environment (Env) or the
// commands themselves (export, assignments, env NAME=…, for NAME in …)
// set a RunVar. It is "" when nothing does.
func (an *Analysis) Retargeted() string {
	if why := EnvRunVar(an.Env); why != "" {
		return why
	}
	for _, v := range an.SetVars {
		if how, ok := RunVar(v); ok {
			return fmt.Sprintf("the command sets %s, which %s", v, how)
		}
	}
	return ""
}
