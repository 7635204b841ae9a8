package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wai-dev/wai/host"
)

// TestRunEvent: every run leaves one event with its mode, the lengths of
// its streams, its write count and the start of its code.
func TestRunEvent(t *testing.T) {
	dir := t.TempDir()
	var n atomic.Int64
	adjust := func(cfg *host.Config) {
		cfg.AuditLog = filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", n.Add(1)))
	}
	runPythonWith(t, nil, adjust, func(t *testing.T, e pyEnv) {
		s := e.session()
		code := "print('abc')\nwrite_text('ev.txt', 'e')\n" + strings.Repeat("# padding\n", 30)
		e.fake(code, canned{printed: "abc\n", rec: &record{Globals: map[string]json.RawMessage{},
			Writes: []writeSpec{{Path: "ev.txt", Content: "e", Mode: "overwrite"}}}})
		if res, _ := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"}); !res.OK {
			t.Fatal(res.Message)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range files {
			if ev, ok := findEvent(t, f, s); ok {
				a := ev.Attrs
				if a.Mode != "statements" || a.StdoutChars != 4 || a.StderrChars != 0 || a.Writes != 1 || a.Code != code[:200] {
					t.Fatalf("event attrs %+v", a)
				}
				return
			}
		}
		t.Fatalf("no evaluate_python event for session %s in %v", s, files)
	})
}

type runEvent struct {
	Msg     string `json:"msg"`
	Session string `json:"session"`
	Attrs   struct {
		Mode        string `json:"mode"`
		StdoutChars int    `json:"stdout_chars"`
		StderrChars int    `json:"stderr_chars"`
		Writes      int    `json:"writes"`
		Code        string `json:"code"`
	} `json:"attrs"`
}

func findEvent(t *testing.T, file, session string) (runEvent, bool) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev runEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Msg == "plugin.log: evaluate_python run" && strings.HasSuffix(ev.Session, session) {
			return ev, true
		}
	}
	return runEvent{}, false
}
