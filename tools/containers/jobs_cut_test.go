package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A poll's output says what was lost the way the other command tools do:
// the bytes the job's buffer dropped, the bytes the message cut, and for
// both how to keep everything (finding 10c of the s24 trial).
func TestJobPollSaysWhatWasCut(t *testing.T) {
	text := strings.Repeat("a", 20000) + strings.Repeat("z", 20000)
	r := response{Operation: "exec_poll", Job: &job{ID: "j1", Container: "box", State: "exited",
		Stdout: &jobStream{Text: text, Offset: 0, Skipped: 5000, Next: 45000, Total: 45000}}}
	msg := jobAnswer(params{Operation: "exec_poll"}, r).Message
	if !strings.Contains(msg, "[truncated 5000 bytes before this") || !strings.Contains(msg, "> out.txt") {
		t.Errorf("the job's dropped bytes are not said with a way out:\n%.400s", msg)
	}
	// The message keeps outputBytes of the 40,000 the poll returned.
	m := regexp.MustCompile(`\[truncated (\d+) bytes: to see it all`).FindStringSubmatch(msg)
	if len(m) != 2 {
		t.Fatalf("the message's own cut is not marked with its count and hint:\n%.400s", msg)
	}
	if n, _ := strconv.Atoi(m[1]); n < 40000-outputBytes || n > 40000-outputBytes+200 {
		t.Errorf("the message's cut counts %d bytes, want about %d", n, 40000-outputBytes)
	}
}
