package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/tooltest"
)

type jobValue struct {
	ID       string   `json:"id"`
	Command  []string `json:"command"`
	State    string   `json:"state"`
	ExitCode int      `json:"exit_code"`
	Stdout   struct {
		Text string `json:"text"`
		Next int64  `json:"next"`
	} `json:"stdout"`
	Stderr struct {
		Text string `json:"text"`
	} `json:"stderr"`
}

func call(t *testing.T, e *tooltest.Env, tool, params string) jobValue {
	t.Helper()
	res, err := e.CallIn(t, "jobs", tool, params)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, params, err)
	}
	var v jobValue
	tooltest.Value(t, res, &v)
	return v
}

func TestJobTools(t *testing.T) {
	tooltest.Run(t, []string{"tools/jobs"}, func(cfg *host.Config) { cfg.MaxJobs, cfg.JobMaxRuntime = 2, 90*time.Second }, func(t *testing.T, e *tooltest.Env) {
		t.Run("validation", func(t *testing.T) {
			for params, want := range map[string]string{
				`{"command":[]}`: "command is empty",
				`{"command":["true"],"max_runtime_seconds":-1}`: "max_runtime_seconds must be a positive",
				`{"command":["true"],"cwd":"no/such/dir"}`:      "cwd",
			} {
				if _, err := e.Call(t, "job_start", params); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("job_start %s: %v, want %q", params, err, want)
				}
			}
			if _, err := e.Call(t, "job_status", `{"id":"j000000000000"}`); !errors.Is(err, backend.ErrNotFound) {
				t.Errorf("unknown job: %v, want not found", err)
			}
		})
		t.Run("max runtime cut to the host's", func(t *testing.T) { runtimeCut(t, e) })
		if !e.Backend.Real {
			mockCases(t, e)
			return
		}
		t.Run("start, poll, cancel, cap", func(t *testing.T) { realCases(t, e) })
	})
}

func realCases(t *testing.T, e *tooltest.Env) {
	j := call(t, e, "job_start", `{"command":["sh","-c","echo hi; echo err >&2; sleep 600"]}`)
	if j.ID == "" || j.State != "running" {
		t.Fatalf("job_start: %+v", j)
	}
	var out string
	var next int64
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out, "hi\n") {
		st := call(t, e, "job_status", `{"id":"`+j.ID+`","stdout_offset":`+itoa(next)+`}`)
		out += st.Stdout.Text
		next = st.Stdout.Next
		if st.State != "running" || time.Now().After(deadline) {
			t.Fatalf("job_status: %+v (output so far %q)", st, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := call(t, e, "job_status", `{"id":"`+j.ID+`","stdout_offset":`+itoa(next)+`}`); st.Stdout.Text != "" || st.Stderr.Text != "err\n" {
		t.Errorf("poll from the last offset: stdout %q stderr %q, want nothing new and the whole stderr", st.Stdout.Text, st.Stderr.Text)
	}
	// The session runs at most 2 (cfg.MaxJobs): a second fits, a third not.
	two := call(t, e, "job_start", `{"command":["sleep","600"]}`)
	if _, err := e.CallIn(t, "jobs", "job_start", `{"command":["sleep","600"]}`); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "limits.max_jobs") {
		t.Errorf("a third job: %v, want refused as ErrInvalid by limits.max_jobs", err)
	}
	res, err := e.CallIn(t, "jobs", "job_list", `{}`)
	if err != nil || !strings.Contains(res.Message, j.ID) || !strings.Contains(res.Message, two.ID) {
		t.Errorf("job_list: %q %v", res.Message, err)
	}
	for _, id := range []string{j.ID, two.ID} {
		if c := call(t, e, "job_cancel", `{"id":"`+id+`"}`); c.State != "cancelled" {
			t.Errorf("job_cancel %s: %+v", id, c)
		}
	}
	if c := call(t, e, "job_start", `{"command":["true"],"max_runtime_seconds":5}`); c.ID == "" {
		t.Errorf("a job after cancelling: %+v", c)
	}
}

func mockCases(t *testing.T, e *tooltest.Env) {
	e.Mock.AddResponse("make", backend.ExecResult{ExitCode: 2, Stdout: "building\n", Stderr: "failed\n"})
	j := call(t, e, "job_start", `{"command":["make","all"]}`)
	if j.State != "exited" || j.ExitCode != 2 {
		t.Fatalf("mock job_start: %+v", j)
	}
	st := call(t, e, "job_status", `{"id":"`+j.ID+`"}`)
	if st.Stdout.Text != "building\n" || st.Stderr.Text != "failed\n" {
		t.Errorf("mock job_status: %+v", st)
	}
	if c := call(t, e, "job_cancel", `{"id":"`+j.ID+`"}`); c.State != "exited" {
		t.Errorf("cancelling an ended job: %+v, want it left as it was", c)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A max_runtime_seconds over the host's job_max_runtime is cut to it, and
// the answer says so: it said only "Started job", and the job was killed
// early with no word why.
func runtimeCut(t *testing.T, e *tooltest.Env) {
	for asked, want := range map[string]string{
		"600": "max_runtime_seconds 600 is over the host's maximum (job_max_runtime), so the job is killed after 90 s",
		"90":  "", // at the maximum: nothing to say
	} {
		res, err := e.CallIn(t, "jobs", "job_start", `{"command":["sleep","30"],"max_runtime_seconds":`+asked+`}`)
		if err != nil {
			t.Fatalf("job_start asking %s s: %v", asked, err)
		}
		var j jobValue
		tooltest.Value(t, res, &j)
		// Cancelled at once: the session's two job slots stay free.
		call(t, e, "job_cancel", `{"id":"`+j.ID+`"}`)
		if want != "" && !strings.Contains(res.Message, want) || want == "" && strings.Contains(res.Message, "max_runtime_seconds") {
			t.Errorf("job_start asking %s s: %q, want %q", asked, res.Message, want)
		}
	}
}
