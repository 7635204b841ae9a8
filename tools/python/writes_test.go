package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func TestReadsAndWrites(t *testing.T) {
	// The cases run one after another: two of them spin python against
	// its 5 s timeout, and the driver's own budget, just under it, must
	// win that race; a busier core made the host's kill win it instead.
	runPython(t, map[string]string{"unread.txt": "old\n"}, func(t *testing.T, e pyEnv) {
		t.Run("reads are bound by path and through the helpers", func(t *testing.T) {
			s := e.session()
			e.write(t, s, "data/a.csv", "x,y\n1,2\n")
			code := "(globals()['data/a.csv'] == vfs_reads['data/a.csv'] == read_text('/workspace/data/a.csv'), vfs_reads['data/a.csv'])"
			e.fake(code, canned{rec: &record{ValueRepr: ptr(`(True, 'x,y\n1,2\n')`), Globals: map[string]json.RawMessage{}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "reads": []any{map[string]any{"path": "/workspace/data/a.csv"}}})
			if !res.OK || *r.ValueRepr != `(True, 'x,y\n1,2\n')` || len(r.Reads) != 1 || r.Reads[0].Path != "data/a.csv" {
				t.Fatalf("%q %+v", res.Message, r)
			}
			if _, bound := r.Globals["data/a.csv"]; bound {
				t.Fatalf("a read's text came back among the globals: %+v", r.Globals)
			}
			if e.Mock != nil {
				if got := e.py.lastRun(code).Reads["data/a.csv"]; got != "x,y\n1,2\n" {
					t.Fatalf("the driver was given %q", got)
				}
			}
		})
		t.Run("a template write and write_text after success", func(t *testing.T) {
			s := e.session()
			code := "total = sum(range(10))\nwrite_text('notes/extra.txt', 'extra')\ntotal"
			e.fake(code, canned{rec: &record{ValueRepr: ptr("45"), Globals: map[string]json.RawMessage{"total": json.RawMessage("45")},
				Writes: []writeSpec{{Path: "out/report.txt", Content: "total=45 {literal}", Mode: "create"},
					{Path: "notes/extra.txt", Content: "extra", Mode: "overwrite"}}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements",
				"writes": []any{map[string]any{"path": "out/report.txt", "content": "total={total} {{literal}}"}}})
			if !res.OK || len(r.Writes) != 2 || r.Writes[0].Content != "total=45 {literal}" || !strings.Contains(res.Message, "Wrote: /out/report.txt (create), /notes/extra.txt (overwrite)") {
				t.Fatalf("%q %+v", res.Message, r)
			}
			for path, want := range map[string]string{"out/report.txt": "total=45 {literal}", "notes/extra.txt": "extra"} {
				if got, ok := e.file(t, s, path); !ok || got != want {
					t.Fatalf("%s holds %q (exists %v), want %q", path, got, ok, want)
				}
			}
		})
		t.Run("a 48,000-character write fits the output cap", func(t *testing.T) {
			s := e.session()
			code := "write_text('big.txt', ''.join(chr(97 + i % 26) for i in range(48000)))"
			big := make([]byte, maxWriteChars)
			for i := range big {
				big[i] = byte('a' + i%26)
			}
			e.fake(code, canned{rec: &record{Globals: map[string]json.RawMessage{}, Writes: []writeSpec{{Path: "big.txt", Content: string(big), Mode: "overwrite"}}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"})
			if got, _ := e.file(t, s, "big.txt"); !res.OK || len(r.Writes) != 1 || got != string(big) {
				t.Fatalf("%q: wrote %d characters", res.Message, len(got))
			}
		})
		t.Run("results over the output cap write nothing", func(t *testing.T) {
			s := e.session()
			code := "import random\nrandom.seed(1)\nfor i in range(3): write_text('r%d.txt' % i, ''.join(chr(random.randrange(33, 127)) for _ in range(40000)))"
			e.fake(code, canned{rec: &record{Globals: map[string]json.RawMessage{}},
				tamper: func(stdout, marker string) string { return stdout[:len(stdout)/2] + "\n...[truncated 9999 bytes]...\n" }})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"})
			if res.OK || len(r.Writes) != 0 || !strings.Contains(r.Stderr, "without its result record") || !strings.Contains(r.Stderr, "nothing was written") {
				t.Fatalf("%q %+v", res.Message, r)
			}
			if e.Backend.Real && !strings.Contains(r.Stderr, "over the sandbox's output limit") {
				t.Fatalf("the message does not say why: %q", r.Stderr)
			}
			noFiles(t, e, s, "r0.txt", "r1.txt", "r2.txt")
		})
		t.Run("reads over the sandbox's stdin limit are refused", func(t *testing.T) {
			s := e.session()
			e.write(t, s, "huge.txt", strings.Repeat("y", maxWriteChars))
			e.write(t, s, "huge2.txt", strings.Repeat("z", maxWriteChars))
			_, _, err := e.call(t, s, map[string]any{"code": "1", "reads": []any{map[string]any{"path": "huge.txt"}, map[string]any{"path": "huge2.txt"}}})
			if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "open them with read_text in the code") {
				t.Fatalf("want ErrInvalid saying to use read_text, got %v", err)
			}
		})
		t.Run("append after reading", func(t *testing.T) {
			s := e.session()
			e.write(t, s, "log.txt", "one\n")
			e.fake("0", canned{rec: &record{ValueRepr: ptr("0"), Globals: map[string]json.RawMessage{},
				Writes: []writeSpec{{Path: "log.txt", Content: "two\n", Mode: "append"}}}})
			res, _ := e.mustCall(t, s, map[string]any{"code": "0", "writes": []any{map[string]any{"path": "log.txt", "content": "two\n", "mode": "append"}}})
			if got, _ := e.file(t, s, "log.txt"); !res.OK || got != "one\ntwo" {
				t.Fatalf("%q; log.txt holds %q", res.Message, got)
			}
		})
		t.Run("an unknown template name writes nothing", func(t *testing.T) {
			s := e.session()
			code := "write_text('first.txt', 'a')\nx = 1"
			e.fake(code, canned{exit: 1, stderr: "LookupError: writes[0] (second.txt): the template names 'missing', which is not a global after the run\n",
				rec: &record{Status: 1, Globals: map[string]json.RawMessage{"x": json.RawMessage("1")}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements",
				"writes": []any{map[string]any{"path": "second.txt", "content": "{x} {missing}"}}})
			if res.OK || len(r.Writes) != 0 || !strings.Contains(r.Stderr, "'missing'") || !strings.Contains(res.Message, "Writes: nothing was written") {
				t.Fatalf("%q %+v", res.Message, r)
			}
			noFiles(t, e, s, "first.txt", "second.txt")
		})
		t.Run("a failing run writes nothing", func(t *testing.T) {
			s := e.session()
			code := "write_text('queued.txt', 'q')\n1/0"
			e.fake(code, canned{exit: 1, stderr: "ZeroDivisionError: division by zero\n", rec: &record{Status: 1, Globals: map[string]json.RawMessage{}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements",
				"writes": []any{map[string]any{"path": "declared.txt", "content": "d"}}})
			if res.OK || r.ExitCode != 1 || len(r.Writes) != 0 {
				t.Fatalf("%q %+v", res.Message, r)
			}
			noFiles(t, e, s, "queued.txt", "declared.txt")
		})
		// The driver stops the code at its budget and still reports; code
		// that dodges that is killed by the host at 5 s. Neither writes.
		for _, c := range []struct {
			name, code string
			fake       canned
		}{
			{"an infinite loop times out without side effects",
				"write_text('loop.txt', 'x')\nn = 7\nprint('before', flush=True)\nwhile True: pass",
				canned{printed: "before\n", exit: 124, rec: &record{Status: 124, TimedOut: true, Globals: map[string]json.RawMessage{"n": json.RawMessage("7")}}}},
			{"a loop that dodges the budget is killed without side effects",
				"import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwrite_text('loop.txt', 'x')\nprint('before', flush=True)\nwhile True: pass",
				canned{printed: "before\n", timedOut: true}},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := e.session()
				e.fake(c.code, c.fake)
				start := time.Now()
				res, r := e.mustCall(t, s, map[string]any{"code": c.code, "mode": "statements",
					"writes": []any{map[string]any{"path": "after.txt", "content": "a"}}})
				took := time.Since(start)
				if res.OK || !r.TimedOut || r.ExitCode != 124 || !strings.HasPrefix(res.Message, "Evaluation timed out.") ||
					!strings.HasSuffix(r.Stderr, "Execution timed out.") || r.Stdout != "before\n" || len(r.Writes) != 0 || r.ValueRepr != nil {
					t.Fatalf("%q %+v", res.Message, r)
				}
				if c.fake.rec != nil && string(r.Globals["n"]) != "7" {
					t.Fatalf("a run the driver stopped reports its globals: %+v", r.Globals)
				}
				if c.fake.rec == nil && len(r.Globals) != 0 {
					t.Fatalf("a run the host killed has no record, yet globals %+v", r.Globals)
				}
				if e.Backend.Real && (took < 4*time.Second || took > 60*time.Second) {
					t.Fatalf("the 5 s timeout took %s", took)
				}
				noFiles(t, e, s, "loop.txt", "after.txt")
			})
		}
		// Under load the host's kill can land just after the driver
		// reported, or while it printed: the fake stages both, which a
		// real run cannot be made to hit on purpose.
		for _, c := range []struct {
			name    string
			tamper  func(stdout, marker string) string
			globals bool
		}{
			{"a kill after the driver reported keeps its globals and hides its record", nil, true},
			{"a kill while the driver reported shows no piece of its record",
				func(stdout, marker string) string { return stdout[:strings.Index(stdout, marker)+len(marker)+6] }, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				if e.Mock == nil {
					t.Skip("staged with the mock's fake python")
				}
				s := e.session()
				code := "write_text('late.txt', 'x')\nn = 7\nprint('before', flush=True)\nwhile True: pass"
				e.fake(code, canned{printed: "before\n", timedOut: true, tamper: c.tamper,
					rec: &record{Status: 124, TimedOut: true, Globals: map[string]json.RawMessage{"n": json.RawMessage("7")}}})
				res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements",
					"writes": []any{map[string]any{"path": "after.txt", "content": "a"}}})
				if res.OK || !r.TimedOut || r.ExitCode != 124 || r.Stdout != "before\n" || len(r.Writes) != 0 ||
					strings.Contains(res.Message, "wai-eval") || strings.Contains(res.Message, "\x1e") {
					t.Fatalf("%q %+v", res.Message, r)
				}
				if got := string(r.Globals["n"]); c.globals && got != "7" || !c.globals && len(r.Globals) != 0 {
					t.Fatalf("globals %+v (want them only from a whole record)", r.Globals)
				}
				noFiles(t, e, s, "late.txt", "after.txt")
			})
		}
		t.Run("overwriting an unread file is refused by read-before-write", func(t *testing.T) {
			s := e.session()
			if e.Backend.Real { // made by a command, so the session has not read it
				if res, _ := e.mustCall(t, s, map[string]any{"code": "open('unread.txt', 'w').write('old\\n')"}); !res.OK {
					t.Fatal(res.Message)
				}
			}
			e.fake("1", canned{rec: &record{ValueRepr: ptr("1"), Globals: map[string]json.RawMessage{},
				Writes: []writeSpec{{Path: "unread.txt", Content: "new", Mode: "overwrite"}}}})
			res, r := e.mustCall(t, s, map[string]any{"code": "1", "writes": []any{map[string]any{"path": "unread.txt", "content": "new", "mode": "overwrite"}}})
			if res.OK || len(r.Writes) != 0 || !strings.Contains(res.Message, "read_before_write") || !strings.Contains(res.Message, "nothing was written") {
				t.Fatalf("%q %+v", res.Message, r)
			}
			if got, _ := e.file(t, s, "unread.txt"); got != "old" {
				t.Fatalf("unread.txt holds %q", got)
			}
		})
		t.Run("write_text to an existing file in create mode writes nothing", func(t *testing.T) {
			s := e.session()
			e.write(t, s, "taken.txt", "mine")
			code := "write_text('fresh.txt', 'f')\nwrite_text('taken.txt', 't', mode='create')"
			e.fake(code, canned{rec: &record{Globals: map[string]json.RawMessage{},
				Writes: []writeSpec{{Path: "fresh.txt", Content: "f", Mode: "overwrite"}, {Path: "taken.txt", Content: "t", Mode: "create"}}}})
			res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"})
			if res.OK || len(r.Writes) != 0 || !strings.Contains(res.Message, "never overwrites") {
				t.Fatalf("%q %+v", res.Message, r)
			}
			noFiles(t, e, s, "fresh.txt")
		})
	})
}

func noFiles(t *testing.T, e pyEnv, session string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if got, ok := e.file(t, session, p); ok {
			t.Errorf("%s was written (%q) by a call that must write nothing", p, got)
		}
	}
}

// A host whose max_timeout is under the tool's 5 s gets runs that fit it,
// stopped by the driver at its budget, not calls refused for a timeout
// the model never gave.
func TestTimeoutFitsTheHostsLimits(t *testing.T) {
	tight := func(cfg *host.Config) { cfg.Limits.MaxTimeout, cfg.Limits.DefaultTimeout = 2*time.Second, time.Second }
	runPythonWith(t, nil, tight, func(t *testing.T, e pyEnv) {
		s := e.session()
		code := "n = 3\nwhile True: pass"
		e.fake(code, canned{exit: 124, rec: &record{Status: 124, TimedOut: true, Globals: map[string]json.RawMessage{"n": json.RawMessage("3")}}})
		res, r := e.mustCall(t, s, map[string]any{"code": code, "mode": "statements"})
		if res.OK || !r.TimedOut || r.ExitCode != 124 {
			t.Fatalf("%q %+v", res.Message, r)
		}
		if e.Mock != nil {
			if got := e.py.lastRun(code).BudgetMS; got != budget(2*time.Second).Milliseconds() {
				t.Fatalf("the driver's budget is %d ms for a 2 s host maximum", got)
			}
		}
	})
}
