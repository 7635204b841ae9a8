package backend

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDurationDecodes(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`"500ms"`: 500 * time.Millisecond,
		`"15m"`:   15 * time.Minute,
		`0.5`:     500 * time.Millisecond,
		`2`:       2 * time.Second,
	} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if time.Duration(d) != want {
			t.Errorf("%s decoded to %s, want %s", in, time.Duration(d), want)
		}
	}
	for _, in := range []string{`"soon"`, `true`, `"5 minutes"`} {
		var d Duration
		err := json.Unmarshal([]byte(in), &d)
		if err == nil || !strings.Contains(err.Error(), "duration") {
			t.Errorf("%s: want an error that says how to write a duration, got %v", in, err)
		}
	}
	out, _ := json.Marshal(Duration(90 * time.Second))
	if string(out) != `"1m30s"` {
		t.Errorf("marshal = %s", out)
	}
}
