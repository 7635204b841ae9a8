// Package shellparse tells a policy every command a command line would
// run, as the shell that runs it would read it.
//
// Parsing is mvdan.cc/sh/v3/syntax: its POSIX variant for /bin/sh (dash
// on Debian) and its bash variant for bash. On top of the syntax tree this
// package finds every simple command the shell could run — in pipelines,
// lists, subshells, brace groups, control flow, function bodies, command
// and process substitutions (wherever they sit: arguments, assignments,
// redirection targets, here-documents, parameter defaults, arithmetic,
// case patterns) — and follows the commands that run other commands with
// their real option grammars: sudo, env, nice, timeout, xargs, find
// -exec, sh -c, eval, trap, watch, flock and others. wrappers.go holds
// the grammars, options.go reads a wrapper's options by them, follow.go
// follows each wrapper to what it runs, shelltext.go the shell code that
// sh -c, eval, trap and watch run, findxargs.go find -exec and xargs.
//
// AnalyzeRequest reads a shell.exec request as a policy receives it (an
// argv, or a shell string and the shell that runs it) and
// AnalyzeInterpreter a shell.script request's interpreter line: the
// allowlist, the blocklist and the public policies/shellcmd all start
// there, so none of them reads a request its own way.
//
// What it cannot judge it reports as a Problem rather than guessing:
// control characters, text the shell would not parse, command names and
// wrapper options that are only known when the command runs, alias
// definitions, and shells whose syntax it does not read. A policy decides
// which problems it refuses; the allowlist refuses them all.
//
// Two more things a policy that judges names must refuse, and the
// blocklist (a seatbelt) does not: a Run marked Opaque runs code no
// command line shows (a shell reading a file, git -c or clone
// --upload-pack (git.go), bash's enable -f), and Retargeted says when the
// request or its commands change what names run (PATH, LD_PRELOAD,
// BASH_FUNC_*, EDITOR, GIT_CONFIG_*, … in runvars.go).
package shellparse
