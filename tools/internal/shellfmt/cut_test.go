package shellfmt

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var markerRE = regexp.MustCompile(`\n\.\.\.\[truncated (\d+) (bytes|characters)(: [^\]]*)?\]\.\.\.\n`)

// cutCount returns the one marker's count and whether it carries the hint,
// failing t unless got has exactly one marker.
func cutCount(t *testing.T, got string) (int, bool) {
	t.Helper()
	m := markerRE.FindAllStringSubmatch(got, -1)
	if len(m) != 1 || strings.Count(got, "[truncated") != 1 {
		t.Fatalf("want exactly one marker in %q", got)
	}
	n, _ := strconv.Atoi(m[0][1])
	return n, strings.Contains(m[0][3], "to a file")
}

func TestBytesKeepsHeadAndTailWithinMax(t *testing.T) {
	if got := Bytes("short", 10); got != "short" {
		t.Fatalf("under the limit must be untouched, got %q", got)
	}
	s := strings.Repeat("a", 100) + strings.Repeat("z", 100)
	got := Bytes(s, 64)
	if len(got) > 64 || !strings.HasPrefix(got, "aaaa") || !strings.HasSuffix(got, "zzzz") {
		t.Fatalf("Bytes(200 bytes, 64) = %q (%d bytes)", got, len(got))
	}
	// A small budget keeps the count, not the hint: the output matters more.
	n, hint := cutCount(t, got)
	if kept := len(markerRE.ReplaceAllString(got, "")); n != 200-kept || hint {
		t.Errorf("Bytes(200 bytes, 64) = %q: count %d, want %d dropped and no hint", got, n, 200-kept)
	}
	// Multi-byte runes straddling the cuts are dropped whole, never split.
	u := strings.Repeat("é", 100)
	got = Bytes(u, 41)
	if len(got) > 41 || !utf8.ValidString(got) {
		t.Fatalf("Bytes of runes = %q (%d bytes, valid %v)", got, len(got), utf8.ValidString(got))
	}
	if n, _ := cutCount(t, got); n != 200-len(markerRE.ReplaceAllString(got, "")) {
		t.Errorf("Bytes of runes = %q: count %d is not the bytes dropped", got, n)
	}
}

// The trial's shell_execute showed a bare "[truncated]": the marker says
// how much was dropped and what to do, the way the host's own does.
func TestBytesSaysHowMuchAndWhatToDo(t *testing.T) {
	s := strings.Repeat("x", 5000)
	got := Bytes(s, 1000)
	n, hint := cutCount(t, got)
	if len(got) > 1000 || n != 5000-len(markerRE.ReplaceAllString(got, "")) || !hint || !strings.Contains(got, "> out.txt") {
		t.Errorf("Bytes(5000, 1000) = %q: count %d, hint %v", got, n, hint)
	}
}

// A stream the host's buffer already cut gets one marker counting both
// cuts, not the host's and a second one.
func TestBytesFoldsTheHostMarker(t *testing.T) {
	host := func(head, dropped, tail int) string {
		return strings.Repeat("a", head) + "\n...[truncated " + strconv.Itoa(dropped) + " bytes]...\n" + strings.Repeat("z", tail)
	}
	// It fits once the host's marker is ours: nothing more is cut.
	got := Bytes(host(300, 7000, 300), 1200)
	if n, hint := cutCount(t, got); n != 7000 || !hint || !strings.HasPrefix(got, strings.Repeat("a", 300)+"\n") || !strings.HasSuffix(got, "\n"+strings.Repeat("z", 300)) {
		t.Errorf("host-cut stream that fits = %q", got)
	}
	// It does not: the gap grows around the host's.
	got = Bytes(host(300, 7000, 300), 500)
	kept := len(markerRE.ReplaceAllString(got, ""))
	if n, _ := cutCount(t, got); len(got) > 500 || n != 7000+600-kept || !strings.HasPrefix(got, "a") || !strings.HasSuffix(got, "z") {
		t.Errorf("host-cut stream over the budget = %q: count %d, want %d", got, n, 7000+600-kept)
	}
}

func TestCharsCountsRunes(t *testing.T) {
	u := strings.Repeat("é", 50)
	if got := Chars(u, 50); got != u {
		t.Fatalf("50 runes fit in 50 characters")
	}
	got := Chars(strings.Repeat("é", 51), 50)
	if n := utf8.RuneCountInString(got); n > 50 {
		t.Fatalf("Chars(51 runes, 50) = %q (%d runes)", got, n)
	}
	if n, _ := cutCount(t, got); n != 51-utf8.RuneCountInString(markerRE.ReplaceAllString(got, "")) {
		t.Errorf("Chars(51 runes, 50) = %q: count %d is not the characters dropped", got, n)
	}
	got = Chars(strings.Repeat("é", 9000), 4096)
	if n, hint := cutCount(t, got); utf8.RuneCountInString(got) > 4096 || !hint || n != 9000-utf8.RuneCountInString(markerRE.ReplaceAllString(got, "")) {
		t.Errorf("Chars(9000, 4096): count %d, hint %v, %d runes", n, hint, utf8.RuneCountInString(got))
	}
	// The host's bytes are said apart from the characters.
	got = Chars(strings.Repeat("a", 3000)+"\n...[truncated 800 bytes]...\n"+strings.Repeat("z", 3000), 4096)
	if !strings.Contains(got, " characters and 800 bytes: ") || strings.Count(got, "[truncated") != 1 {
		t.Errorf("Chars of a host-cut stream: %q", got)
	}
}
