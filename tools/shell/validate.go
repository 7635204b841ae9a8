package main

import (
	"strings"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/cmdlimits"
)

// validate turns params into a request, or says which rule they break. The
// messages are stable: models learn them.
func validate(p params, lim cmdlimits.Limits) (pdk.ExecRequest, string, error) {
	var req pdk.ExecRequest
	if err := checkCommand(p.Command); err != nil {
		return req, "", err
	}
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return req, "", err
	}
	env, err := checkEnv(p.Env)
	if err != nil {
		return req, "", err
	}
	timeout, note, err := lim.Timeout(p.TimeoutSeconds)
	if err != nil {
		return req, "", err
	}
	req = pdk.ExecRequest{Argv: p.Command, Cwd: cwd, Env: env, Timeout: timeout}
	if p.Stdin != nil {
		if n := len([]rune(*p.Stdin)); n > maxStdinChars {
			return req, "", invalid("stdin is %d characters, over the limit of 48,000: pass less, or write it to a file and read it from there", n)
		}
		req.Stdin = *p.Stdin
	}
	req.DiscardOutput = p.CaptureOutput != nil && !*p.CaptureOutput
	return req, note, nil
}

func invalid(format string, args ...any) error {
	return pdk.Errorf(pdk.KindInvalid, format, args...)
}

func checkCommand(argv []string) error {
	if len(argv) == 0 {
		return invalid("command is empty: give the program and its arguments, e.g. [\"ls\", \"-la\"]")
	}
	total := len(argv) - 1 // the spaces joining the entries
	for i, a := range argv {
		if a == "" {
			return invalid("command[%d] is empty: every entry of command must be non-empty", i)
		}
		if !ascii(a) {
			return invalid("command[%d] is not ASCII: commands must be ASCII", i)
		}
		total += len(a)
	}
	if total > maxCommandChars {
		return invalid("command is %d characters, over the limit of 4,096: write a script to a file and run it instead", total)
	}
	return nil
}

// checkCwd accepts a relative path of plain segments ("", "src/pkg"); a
// leading "/workspace" is the same directory as the model sees it in the
// container, so it is accepted and stripped.
func checkCwd(cwd string) (string, error) {
	c := cwd
	if c == "/workspace" || strings.HasPrefix(c, "/workspace/") {
		c = strings.TrimPrefix(strings.TrimPrefix(c, "/workspace"), "/")
	}
	c = strings.TrimSuffix(c, "/")
	if c == "" {
		return "", nil
	}
	if !ascii(c) {
		return "", invalid("cwd %q is not ASCII: paths must be ASCII", cwd)
	}
	if strings.HasPrefix(c, "/") {
		return "", invalid("cwd %q is absolute: give a path relative to the workspace root", cwd)
	}
	segs := strings.Split(c, "/")
	if len(segs) > maxCwdDepth {
		return "", invalid("cwd %q is %d segments deep, over the limit of 16", cwd, len(segs))
	}
	for _, s := range segs {
		switch {
		case s == "":
			return "", invalid("cwd %q has an empty segment: remove the doubled /", cwd)
		case s == "." || s == "..":
			return "", invalid("cwd %q contains %q: give a plain path inside the workspace", cwd, s)
		case len(s) > maxSegmentChars:
			return "", invalid("cwd %q has a segment of %d characters, over the limit of 80", cwd, len(s))
		}
	}
	return c, nil
}

// checkEnv upper-cases names (docs/ARCHITECTURE.md) and checks both halves are ASCII
// and short; names must also be what a shell can export.
func checkEnv(env map[string]string) (map[string]string, error) {
	if len(env) == 0 {
		return nil, nil
	}
	if len(env) > maxEnvVars {
		return nil, invalid("env has %d entries, over the limit of 64", len(env))
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		name := strings.ToUpper(k)
		switch {
		case name == "":
			return nil, invalid("env has an empty name: every variable needs a name")
		case !ascii(name):
			return nil, invalid("env name %q is not ASCII: names must be ASCII", k)
		case len(name) > maxEnvKeyChars:
			return nil, invalid("env name %q is %d characters, over the limit of 80", k, len(name))
		case !envName(name):
			return nil, invalid("env name %q is not a valid variable name: use letters, digits and _, not starting with a digit", k)
		case !ascii(v):
			return nil, invalid("env value of %s is not ASCII: values must be ASCII", name)
		case len(v) > maxEnvValChars:
			return nil, invalid("env value of %s is %d characters, over the limit of 512", name, len(v))
		case strings.ContainsRune(v, 0):
			return nil, invalid("env value of %s contains a NUL byte", name)
		}
		if _, dup := out[name]; dup {
			return nil, invalid("env names %q twice once upper-cased: give each variable once", name)
		}
		out[name] = v
	}
	return out, nil
}

func envName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
