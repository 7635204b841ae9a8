package backend

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestDefaultLimitsValid(t *testing.T) {
	l := DefaultLimits()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	// The numbers docs/ARCHITECTURE.md promises.
	if l.DefaultTimeout != 30*time.Second || l.MinTimeout != 100*time.Millisecond || l.MaxTimeout != 600*time.Second ||
		l.MaxOutputBytes != 32<<10 || l.MaxCommandBytes != 4096 || l.MaxStdinBytes != 64<<10 || l.MaxEnvVars != 256 ||
		l.MaxWriteChars != 48000 || l.MaxResults != 2000 {
		t.Fatalf("defaults drifted from docs/ARCHITECTURE.md: %s", l)
	}
	if !strings.Contains(l.String(), "timeout 30s") {
		t.Fatalf("String() = %q", l.String())
	}
}

func TestLimitsValidate(t *testing.T) {
	for _, c := range []struct {
		change func(*Limits)
		msg    string
	}{
		{func(l *Limits) { l.MinTimeout = 0 }, "min_timeout must be positive"},
		{func(l *Limits) { l.MaxTimeout = l.MinTimeout - 1 }, "max_timeout"},
		{func(l *Limits) { l.DefaultTimeout = l.MaxTimeout + 1 }, "default_timeout"},
		{func(l *Limits) { l.DefaultTimeout = l.MinTimeout - 1 }, "default_timeout"},
		{func(l *Limits) { l.MaxOutputBytes = 0 }, "max_output_bytes must be positive"},
		{func(l *Limits) { l.MaxOutputBytes = 63 }, "at least 64"},
		{func(l *Limits) { l.MaxCommandBytes = -1 }, "max_command_bytes"},
		{func(l *Limits) { l.MaxStdinBytes = 0 }, "max_stdin_bytes"},
		{func(l *Limits) { l.MaxScriptBytes = 0 }, "max_script_bytes"},
		{func(l *Limits) { l.MaxEnvVars = 0 }, "max_env_vars"},
		{func(l *Limits) { l.MaxWriteChars = 0 }, "max_write_chars"},
		{func(l *Limits) { l.MaxResults = 0 }, "max_results"},
		{func(l *Limits) { l.MaxReadBytes = 0 }, "max_read_bytes"},
	} {
		l := DefaultLimits()
		c.change(&l)
		err := l.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("want %q, got %v", c.msg, err)
		}
	}
}

func TestTimeout(t *testing.T) {
	l := DefaultLimits()
	for req, want := range map[time.Duration]time.Duration{0: 30 * time.Second, l.MinTimeout: l.MinTimeout, l.MaxTimeout: l.MaxTimeout, time.Second: time.Second} {
		if got, err := l.Timeout(req); err != nil || got != want {
			t.Errorf("Timeout(%s) = %s, %v; want %s", req, got, err, want)
		}
	}
	for _, req := range []time.Duration{-1, 1, l.MinTimeout - 1, l.MaxTimeout + 1} {
		if _, err := l.Timeout(req); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "outside the allowed range") {
			t.Errorf("Timeout(%s): %v", req, err)
		}
	}
}

func TestCheckExec(t *testing.T) {
	l := DefaultLimits()
	l.MaxCommandBytes = 10
	l.MaxStdinBytes = 4
	l.MaxEnvVars = 2
	ok := []ExecRequest{
		{Argv: []string{"true"}},
		{Argv: []string{"echo", "12345"}}, // 10 bytes joined
		{Shell: "0123456789"},
		{Argv: []string{"cat"}, Stdin: "abcd"},
		{Argv: []string{"env"}, Env: map[string]string{"A": "~ !", "_b9": ""}, EnvMode: EnvReplace},
		{Argv: []string{"x"}, EnvMode: EnvExtend, Cwd: "/any/where", Timeout: time.Second},
	}
	for _, req := range ok {
		if d, err := l.CheckExec(req); err != nil || d <= 0 {
			t.Errorf("CheckExec(%+v) = %s, %v", req, d, err)
		}
	}
	bad := map[string]ExecRequest{
		"empty command":          {},
		"argv or a shell":        {Argv: []string{"a"}, Shell: "b"},
		"argv[0] is empty":       {Argv: []string{""}},
		"argv[1] contains a NUL": {Argv: []string{"a", "b\x00"}},
		"shell string contains":  {Shell: "a\x00"},
		"11 bytes":               {Argv: []string{"echo", "123456"}},
		"over the limit of 10":   {Shell: "01234567890"},
		"stdin is 5 bytes":       {Argv: []string{"cat"}, Stdin: "abcde"},
		"cwd contains a NUL":     {Argv: []string{"a"}, Cwd: "x\x00"},
		"env mode":               {Argv: []string{"a"}, EnvMode: "merge"},
		"3 environment":          {Argv: []string{"a"}, Env: map[string]string{"A": "", "B": "", "C": ""}},
		"[A-Za-z_]":              {Argv: []string{"a"}, Env: map[string]string{"9A": ""}},
		"must be ASCII":          {Argv: []string{"a"}, Env: map[string]string{"A": "é"}},
		"without NUL":            {Argv: []string{"a"}, Env: map[string]string{"A": "\x00"}},
		"outside the allowed":    {Argv: []string{"a"}, Timeout: time.Hour},
	}
	for msg, req := range bad {
		if _, err := l.CheckExec(req); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), msg) {
			t.Errorf("CheckExec(%+v): %v, want ErrInvalid saying %q", req, err, msg)
		}
	}
}

func TestCheckScript(t *testing.T) {
	l := DefaultLimits()
	l.MaxScriptBytes = 8
	if _, err := l.CheckScript(ScriptRequest{Script: "echo hi", Interpreter: "python3 -u"}); err != nil {
		t.Fatal(err)
	}
	for msg, req := range map[string]ScriptRequest{
		"empty script":            {},
		"over the limit of 8":     {Script: "echo hello"},
		"contains a NUL":          {Script: "a\x00"},
		"invalid interpreter":     {Script: "x", Interpreter: "sh\n"},
		"env mode":                {Script: "x", EnvMode: "x"},
		"cwd contains":            {Script: "x", Cwd: "\x00"},
		"outside the allowed":     {Script: "x", Timeout: time.Nanosecond},
		"environment variable na": {Script: "x", Env: map[string]string{"A B": ""}},
	} {
		if _, err := l.CheckScript(req); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), msg) {
			t.Errorf("CheckScript(%+v): %v, want %q", req, err, msg)
		}
	}
	l.MaxCommandBytes = 3
	if _, err := l.CheckScript(ScriptRequest{Script: "x", Interpreter: "bash"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("an interpreter over the command limit: %v", err)
	}
}

func TestValidEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"A": true, "_": true, "a_1": true, "PATH": true, "": false, "1A": false, "A-B": false, "A=B": false, "É": false, "A B": false,
	} {
		if ValidEnvName(name) != want {
			t.Errorf("ValidEnvName(%q) = %v", name, !want)
		}
	}
}

func TestCheckWriteAndReadLimit(t *testing.T) {
	l := DefaultLimits()
	l.MaxWriteChars = 3
	if err := l.CheckWrite("fs.write", "p", "ééé"); err != nil {
		t.Fatalf("3 characters in 6 bytes: %v", err)
	}
	if err := l.CheckWrite("fs.write", "p", "abcd"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "4 characters") {
		t.Fatalf("4 characters: %v", err)
	}
	l.MaxResults = 10
	for req, want := range map[ReadRequest]int{{}: 10, {Limit: 3}: 3, {Offset: 5, Limit: 10}: 10} {
		if got, err := l.ReadLimit(req); err != nil || got != want {
			t.Errorf("ReadLimit(%+v) = %d, %v", req, got, err)
		}
	}
	for _, req := range []ReadRequest{{Offset: -1}, {Limit: -1}, {Limit: 11}} {
		if _, err := l.ReadLimit(req); !errors.Is(err, ErrInvalid) {
			t.Errorf("ReadLimit(%+v): %v", req, err)
		}
	}
}

// FuzzCheckExec builds requests from arbitrary input and checks that
// CheckExec never panics, refuses only with ErrInvalid, and never lets
// through a request that breaks a limit.
func FuzzCheckExec(f *testing.F) {
	f.Add("echo\x1fhello", "", "", "A", "b", "", int64(0), uint8(0))
	f.Add("", "ls -l | wc", "sub", "PATH", "/bin", "in", int64(time.Second), uint8(1))
	f.Add("\x1f", "", "\x00", "1X", "é", "", int64(-5), uint8(2))
	f.Add(strings.Repeat("a\x1f", 100), "x", "", "", "", strings.Repeat("s", 70), int64(time.Hour), uint8(3))
	l := DefaultLimits()
	l.MaxCommandBytes = 64
	l.MaxStdinBytes = 32
	l.MaxEnvVars = 4
	f.Fuzz(func(t *testing.T, argv, shell, cwd, key, value, stdin string, timeout int64, mode uint8) {
		req := ExecRequest{Shell: shell, Cwd: cwd, Stdin: stdin, Timeout: time.Duration(timeout)}
		if argv != "" {
			req.Argv = strings.Split(argv, "\x1f")
		}
		if key != "" || value != "" {
			req.Env = map[string]string{key: value, key + "_2": value}
		}
		req.EnvMode = []EnvMode{"", EnvExtend, EnvReplace, "other"}[mode%4]
		d, err := l.CheckExec(req)
		if err != nil {
			if KindOf(err) != ErrInvalid {
				t.Fatalf("refused with kind %v: %v", KindOf(err), err)
			}
			return
		}
		n := len(strings.Join(req.Argv, " ")) + len(req.Shell)
		switch {
		case (len(req.Argv) == 0) == (req.Shell == ""):
			t.Fatalf("accepted argv %q with shell %q", req.Argv, req.Shell)
		case len(req.Argv) > 0 && req.Argv[0] == "":
			t.Fatal("accepted an empty program name")
		case n > l.MaxCommandBytes:
			t.Fatalf("accepted a %d-byte command", n)
		case len(req.Stdin) > l.MaxStdinBytes:
			t.Fatalf("accepted %d bytes of stdin", len(req.Stdin))
		case strings.ContainsRune(strings.Join(req.Argv, "")+req.Shell+req.Cwd, 0):
			t.Fatal("accepted a NUL byte")
		case len(req.Env) > l.MaxEnvVars:
			t.Fatal("accepted too many env vars")
		case req.EnvMode != "" && req.EnvMode != EnvExtend && req.EnvMode != EnvReplace:
			t.Fatalf("accepted env mode %q", req.EnvMode)
		case d < l.MinTimeout || d > l.MaxTimeout || req.Timeout != 0 && d != req.Timeout:
			t.Fatalf("timeout %s for requested %s", d, req.Timeout)
		}
		for k, v := range req.Env {
			if !ValidEnvName(k) || strings.ContainsRune(v, 0) || !isASCII(v) {
				t.Fatalf("accepted env %q=%q", k, v)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
