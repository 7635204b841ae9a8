package shellfmt

import (
	"strings"
	"testing"
	"time"
)

func TestBlockPlaceholdersAndFields(t *testing.T) {
	got := Block("Done.", []Field{{"Exit code", "0"}}, "hi\n", "")
	want := "Done.\nExit code: 0\nSTDOUT:\nhi\nSTDERR:\n<empty>"
	if got != want {
		t.Fatalf("Block =\n%s\nwant\n%s", got, want)
	}
}

func TestHeadline(t *testing.T) {
	for _, c := range []struct {
		code     int
		timedOut bool
		limit    time.Duration
		want     string
	}{
		{0, false, 0, "Command succeeded (exit code 0)."},
		{2, false, time.Minute, "Command failed (exit code 2)."},
		{124, true, 0, "Command timed out (exit code 124)."},
		{124, true, 30 * time.Second, "Command timed out after 30 s (exit code 124)."},
	} {
		if got := Headline(c.code, c.timedOut, c.limit); got != c.want {
			t.Errorf("Headline(%d, %v, %v) = %q, want %q", c.code, c.timedOut, c.limit, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	got := Quote([]string{"echo", "it's", "", "a b", "x=1"})
	want := `echo 'it'\''s' '' 'a b' x=1`
	if got != want {
		t.Fatalf("Quote = %s, want %s", got, want)
	}
}

// A clamped timeout says so, naming what was asked, what ran and, over
// the maximum, the background jobs; one in range says nothing.
func TestClampNote(t *testing.T) {
	for _, tc := range []struct {
		asked float64
		want  []string
	}{
		{200, []string{"timeout_seconds 200 is over the 120 s maximum", "ran with 120 s", "job_start"}},
		{0.5, []string{"timeout_seconds 0.5 is under the 1 s minimum", "ran with 1 s"}},
		{-5, []string{"timeout_seconds -5 is under the 1 s minimum"}},
	} {
		got := ClampNote(tc.asked, 1, 120)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("ClampNote(%v) = %q, want it to say %q", tc.asked, got, w)
			}
		}
	}
	for _, in := range []float64{1, 30, 120} {
		if got := ClampNote(in, 1, 120); got != "" {
			t.Errorf("ClampNote(%v) = %q for a value in range", in, got)
		}
	}
}
