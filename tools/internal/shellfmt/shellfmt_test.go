package shellfmt

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestBytesKeepsHeadAndTailWithinMax(t *testing.T) {
	if got := Bytes("short", 10); got != "short" {
		t.Fatalf("under the limit must be untouched, got %q", got)
	}
	s := strings.Repeat("a", 100) + strings.Repeat("z", 100)
	got := Bytes(s, 64)
	if len(got) > 64 || !strings.HasPrefix(got, "aaaa") || !strings.HasSuffix(got, "zzzz") || !strings.Contains(got, "[truncated]") {
		t.Fatalf("Bytes(200 bytes, 64) = %q (%d bytes)", got, len(got))
	}
	// Multi-byte runes straddling the cuts are dropped whole, never split.
	u := strings.Repeat("é", 100)
	got = Bytes(u, 41)
	if len(got) > 41 || !utf8.ValidString(got) || !strings.Contains(got, "[truncated]") {
		t.Fatalf("Bytes of runes = %q (%d bytes, valid %v)", got, len(got), utf8.ValidString(got))
	}
}

func TestCharsCountsRunes(t *testing.T) {
	u := strings.Repeat("é", 50)
	if got := Chars(u, 50); got != u {
		t.Fatalf("50 runes fit in 50 characters")
	}
	got := Chars(strings.Repeat("é", 51), 50)
	if n := utf8.RuneCountInString(got); n != 50 || !strings.Contains(got, "[truncated]") {
		t.Fatalf("Chars(51 runes, 50) = %q (%d runes)", got, n)
	}
}

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
