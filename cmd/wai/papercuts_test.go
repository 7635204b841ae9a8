package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// papercut is one call of wai and what it must answer.
type papercut struct {
	name     string
	args     []string
	code     int
	stream   string // "out" or "err"
	want     []string
	dontWant []string
}

// The CLI's small promises: --version, did-you-mean for subcommands and
// flags, durations that need a unit, help for every subcommand, and user
// input echoed back without terminal control characters.
func TestCLIPapercuts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	cases := []papercut{
		{"--version", []string{"--version"}, 0, "out", []string{"wai " + testVersion, "backends:"}, nil},
		{"-V", []string{"-V"}, 0, "out", []string{"wai " + testVersion}, nil},
		{"subcommand typo", []string{"exce"}, exitError, "err", []string{`unknown subcommand "exce"`, `did you mean "exec"?`}, nil},
		{"help of a typo", []string{"help", "sever"}, exitError, "err", []string{`did you mean "serve"?`}, nil},
		{"flag typo", []string{"exec", "--tiemout", "5s", "--", "true"}, exitExecFailed, "err", []string{"did you mean --timeout?"}, nil},
		{"duration without unit", []string{"exec", "--timeout", "5", "--", "true"}, exitExecFailed, "err", []string{"did you mean 5s?"}, nil},
		{"duration nonsense", []string{"exec", "--timeout", "soon", "--", "true"}, exitExecFailed, "err", []string{"takes a duration such as 30s"}, nil},
		{"help version", []string{"help", "version"}, 0, "out", []string{"usage: wai version", "--version"}, nil},
		{"plugin inspect -h", []string{"plugin", "inspect", "-h"}, 0, "out", []string{"usage: wai plugin", "-json"}, nil},
		{"plugin inspect flag typo", []string{"plugin", "inspect", "--jsn", "x.wasm"}, exitError, "err", []string{"did you mean --json?"}, nil},
		// A session name with an escape sequence is refused, and the
		// refusal does not send the escape to the terminal.
		{"control characters escaped", []string{"exec", "--session", "a\x1b[2Jb", "--", "true"}, exitExecFailed, "err", []string{`\x1b`}, []string{"\x1b"}},
	}
	// Every subcommand that takes no arguments refuses one in the same
	// words, before it opens anything.
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		if commands[name].noArgs {
			cases = append(cases, papercut{name + " with an argument", []string{name, "extra"}, exitError, "err", []string{"wai " + name + `: takes no arguments, got ["extra"]`, "usage: wai " + name}, nil})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(c.args...)
			got := r.stdout
			if c.stream == "err" {
				got = r.stderr
			}
			if r.code != c.code {
				t.Errorf("want exit %d; got %v", c.code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("std%s lacks %q; got %v", c.stream, w, r)
				}
			}
			for _, w := range c.dontWant {
				if strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("output contains %q; got %v", w, r)
				}
			}
		})
	}
}
