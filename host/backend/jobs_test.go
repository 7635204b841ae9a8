package backend

import (
	"errors"
	"testing"
	"time"
)

func TestReadJobOutput(t *testing.T) {
	head, tail := []byte("0123"), []byte("6789")
	cases := []struct {
		name                 string
		head, tail           []byte
		total, since         int64
		max                  int
		text                 string
		offset, skipped, nxt int64
		more                 bool
	}{
		{"contiguous", head, []byte("45"), 6, 0, 100, "012345", 0, 0, 6, false},
		{"contiguous from 3", head, []byte("45"), 6, 3, 100, "345", 3, 0, 6, false},
		{"gap: head first", head, tail, 10, 1, 100, "123", 1, 0, 4, true},
		{"gap: skipped", head, tail, 10, 4, 100, "6789", 6, 2, 10, false},
		{"tail part", head, tail, 10, 8, 100, "89", 8, 0, 10, false},
		{"at end", head, tail, 10, 10, 100, "", 10, 0, 10, false},
		{"past end", head, tail, 10, 99, 100, "", 10, 0, 10, false},
		{"capped", head, tail, 10, 6, 2, "67", 6, 0, 8, true},
	}
	for _, c := range cases {
		o := ReadJobOutput(c.head, c.tail, c.total, c.since, c.max)
		if o.Text != c.text || o.Offset != c.offset || o.Skipped != c.skipped || o.Next != c.nxt || o.More != c.more || o.Total != c.total {
			t.Errorf("%s: got %+v", c.name, o)
		}
	}
	// A cap inside a character backs off to its start.
	o := ReadJobOutput([]byte("aé"), nil, 3, 0, 2)
	if o.Text != "a" || o.Next != 1 {
		t.Errorf("cut inside é: %+v", o)
	}
}

// CheckJob refuses what no backend may start and gives a job without a
// runtime the default one.
func TestCheckJob(t *testing.T) {
	l := DefaultLimits()
	req, err := l.CheckJob("job.start", JobRequest{Argv: []string{"sleep", "1"}})
	if err != nil || req.MaxRuntime != DefaultJobRuntime {
		t.Fatalf("no runtime: %v, runtime %s; want the default %s", err, req.MaxRuntime, DefaultJobRuntime)
	}
	if req, err := l.CheckJob("job.start", JobRequest{Shell: "true", MaxRuntime: time.Minute}); err != nil || req.MaxRuntime != time.Minute {
		t.Errorf("a minute: %v, runtime %s", err, req.MaxRuntime)
	}
	for name, bad := range map[string]JobRequest{
		"negative runtime": {Argv: []string{"true"}, MaxRuntime: -time.Second},
		"empty command":    {},
		"argv and shell":   {Argv: []string{"true"}, Shell: "true"},
	} {
		if _, err := l.CheckJob("job.start", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
