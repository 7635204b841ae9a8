package main

import (
	"strings"
	"testing"

	"github.com/wai-dev/wai/pdk"
)

// A job's dropped bytes are said with their count and how to keep them
// all, in the words the other command tools use (finding 10c of the s24
// trial).
func TestDescribeSaysWhatWasDropped(t *testing.T) {
	st := pdk.JobStatus{JobInfo: pdk.JobInfo{ID: "j1", State: "exited"},
		Stdout: pdk.JobOutput{Text: "tail\n", Offset: 9000, Skipped: 7000, Next: 9005, Total: 9005}}
	msg := describe(st)
	if !strings.Contains(msg, "[truncated 7000 bytes before this") || !strings.Contains(msg, "redirect it to a file") {
		t.Errorf("describe:\n%s", msg)
	}
}
