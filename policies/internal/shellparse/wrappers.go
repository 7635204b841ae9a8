package shellparse

// grammar is a wrapper's real command line: which options take a value,
// and what comes before the command it runs. Wrappers stop reading
// options at the first operand (GNU getopt's "+" mode), so the command is
// the first word after the options and positional operands.
type grammar struct {
	noArg  string // short options without a value
	arg    string // short options with a value, attached or the next word
	optArg string // short options with an optional value, attached only (xargs -i, -e, -l)
	// shellArg is a short option whose value is a shell command line
	// (flock -c); splitArg one whose value env splits into a command
	// line (env -S), which is refused.
	shellArg, splitArg byte
	longNoArg          []string
	longArg            []string
	longOptArg         []string // --name or --name=value, never the next word
	longSplit          []string
	positional         int  // operands before the command (timeout DURATION)
	assigns            bool // NAME=value words before the command (env)
	legacyNumeric      bool // nice -5
}

var help = []string{"--help", "--version"}

func longs(names ...string) []string { return append(names, help...) }

var wrappers = map[string]grammar{
	"sudo": {noArg: "AbEeHiKklnPSsVv", arg: "CDghpRrTtUu", assigns: true,
		longNoArg:  longs("--askpass", "--background", "--edit", "--set-home", "--login", "--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups", "--stdin", "--shell", "--validate"),
		longArg:    []string{"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"},
		longOptArg: []string{"--preserve-env"}},
	"doas": {noArg: "nsL", arg: "uC"},
	"env": {noArg: "i0v", arg: "uC", splitArg: 'S', assigns: true,
		longNoArg:  longs("--ignore-environment", "--null", "--debug", "--list-signal-handling"),
		longArg:    []string{"--unset", "--chdir"},
		longOptArg: []string{"--block-signal", "--default-signal", "--ignore-signal"},
		longSplit:  []string{"--split-string"}},
	"nice":    {arg: "n", longArg: []string{"--adjustment"}, longNoArg: longs(), legacyNumeric: true},
	"nohup":   {longNoArg: longs()},
	"timeout": {noArg: "fpv", arg: "ks", longNoArg: longs("--foreground", "--preserve-status", "--verbose"), longArg: []string{"--kill-after", "--signal"}, positional: 1},
	"stdbuf":  {arg: "ioe", longArg: []string{"--input", "--output", "--error"}, longNoArg: longs()},
	"setsid":  {noArg: "cfw", longNoArg: longs("--ctty", "--fork", "--wait")},
	"ionice":  {noArg: "t", arg: "cnpPu", longNoArg: longs("--ignore"), longArg: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"taskset": {noArg: "acp", longNoArg: longs("--all-tasks", "--pid", "--cpu-list"), positional: 1},
	"chrt":    {noArg: "abdfiorpRvem", arg: "TPD", longNoArg: longs("--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--pid", "--reset-on-fork", "--verbose", "--max", "--ext"), longArg: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}, positional: 1},
	"time":    {noArg: "apqvV", arg: "fo", longNoArg: longs("--append", "--portability", "--quiet", "--verbose"), longArg: []string{"--format", "--output"}},
	"chroot":  {longNoArg: longs("--skip-chdir"), longArg: []string{"--userspec", "--groups"}, positional: 1},
	"exec":    {noArg: "cl", arg: "a"},
	"builtin": {},
	"command": {noArg: "pvV"},
	"busybox": {},
	"xargs": {noArg: "0oprtx", arg: "aEILnPsd", optArg: "eil",
		longNoArg:  longs("--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--show-limits"),
		longArg:    []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
		longOptArg: []string{"--eof", "--replace", "--max-lines"}},
	"flock": {noArg: "sexunoFhV", arg: "wE", shellArg: 'c',
		longNoArg: longs("--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close", "--no-fork", "--verbose"),
		longArg:   []string{"--wait", "--timeout", "--conflict-exit-code"}, positional: 1},
	"watch": {noArg: "bcCeghprtwx", arg: "nq", optArg: "d",
		longNoArg:  longs("--beep", "--color", "--no-color", "--errexit", "--chgexit", "--precise", "--no-rerun", "--no-title", "--no-wrap", "--exec"),
		longArg:    []string{"--interval", "--equexit"},
		longOptArg: []string{"--differences"}},
}

// IsWrapper reports whether a command name runs another command given in
// its arguments.
func IsWrapper(name string) bool {
	_, ok := wrappers[name]
	return ok || name == "find" || Shells[name] || name == "eval" || name == "trap"
}
