package shellfmt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// hostMarker is how the host's output buffers (backend.OutputBuffer) mark
// the bytes they dropped: "\n...[truncated N bytes]...\n".
const (
	hostMarkerStart = "\n...[truncated "
	hostMarkerEnd   = " bytes]...\n"
)

// What to do about a cut stream, said in the marker: a model that sees
// only "[truncated]" retries the same command and loses the same bytes.
const (
	shellHint = "to see it all, redirect the output to a file (command > out.txt 2>&1) and read the file in parts"
	charsHint = "to see it all, write the output to a file and read the file in parts"
)

// marker is what replaces the dropped part of a stream bounded to max. It
// starts like the host's marker ("\n...[truncated N bytes"), so one search
// finds both, and says what to do when that leaves most of max to the
// output: a small budget (podman_shell's may be 64 bytes) keeps the count.
func marker(count, hint string, max int) string {
	full := "\n...[truncated " + count + ": " + hint + "]...\n"
	if 4*len(full) <= max {
		return full
	}
	return "\n...[truncated " + count + "]...\n"
}

// splitHostMarker finds the host's marker in s and returns s without it,
// the byte offset where it stood and the bytes it counts; at is -1 when
// s has none. A stream the host cut and a tool cuts again gets one marker
// counting both, not two.
func splitHostMarker(s string) (rest string, at int, dropped int64) {
	i := strings.Index(s, hostMarkerStart)
	if i < 0 {
		return s, -1, 0
	}
	j := strings.Index(s[i+len(hostMarkerStart):], hostMarkerEnd)
	if j < 0 {
		return s, -1, 0
	}
	n, err := strconv.ParseInt(s[i+len(hostMarkerStart):i+len(hostMarkerStart)+j], 10, 64)
	if err != nil {
		return s, -1, 0
	}
	return s[:i] + s[i+len(hostMarkerStart)+j+len(hostMarkerEnd):], i, n
}

// Bytes bounds s to max bytes, keeping its head and tail around a marker
// that says how many bytes were dropped and what to do (the end of an
// output is where errors usually are). A marker the host's buffer left is
// folded into it. Cuts fall on UTF-8 boundaries, so the result may be a
// few bytes shorter than max.
func Bytes(s string, max int) string {
	rest, at, hostDropped := splitHostMarker(s)
	mark := func(n int64) string { return marker(fmt.Sprintf("%d bytes", n), shellHint, max) }
	if at >= 0 && len(rest)+len(mark(hostDropped)) <= max {
		return rest[:at] + mark(hostDropped) + rest[at:]
	}
	if at < 0 && len(s) <= max {
		return s
	}
	// The marker's length depends on the count, which has at most the
	// digits of the whole: size the room with that.
	room := max - len(mark(int64(len(rest))+hostDropped))
	if room < 2 {
		return strings.TrimSpace(mark(int64(len(rest)) + hostDropped))
	}
	head, tail := room/2, room-room/2
	if at >= 0 { // the host's gap must fall inside the cut
		head, tail = min(head, at), min(tail, len(rest)-at)
	}
	h := validPrefix(rest[:head])
	t := rest[len(rest)-tail:]
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return h + mark(int64(len(rest)-len(h)-len(t))+hostDropped) + t
}

// validPrefix drops a trailing partial UTF-8 sequence.
func validPrefix(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

// Chars bounds s to max characters (runes), head and tail kept around a
// marker saying how many characters were dropped (and the bytes the host
// dropped before, folded in), for limits stated in characters
// (evaluate_python's 4,096).
func Chars(s string, max int) string {
	rest, at, hostDropped := splitHostMarker(s)
	r := []rune(rest)
	mark := func(chars int) string {
		var c []string
		if chars > 0 {
			c = append(c, fmt.Sprintf("%d characters", chars))
		}
		if hostDropped > 0 {
			c = append(c, fmt.Sprintf("%d bytes", hostDropped))
		}
		return marker(strings.Join(c, " and "), charsHint, max)
	}
	runes := utf8.RuneCountInString
	if at >= 0 {
		at = runes(rest[:at])
		if len(r)+runes(mark(0)) <= max {
			return string(r[:at]) + mark(0) + string(r[at:])
		}
	} else if len(r) <= max {
		return s
	}
	room := max - runes(mark(len(r)))
	if room < 2 {
		return strings.TrimSpace(mark(len(r)))
	}
	head, tail := room/2, room-room/2
	if at >= 0 {
		head, tail = min(head, at), min(tail, len(r)-at)
	}
	return string(r[:head]) + mark(len(r)-head-tail) + string(r[len(r)-tail:])
}

// Dropped says that a background job's stream lost n bytes between the
// head and tail it keeps, in the words of the cut marker: the count, and
// how to keep everything next time.
func Dropped(n int64) string {
	return fmt.Sprintf("[truncated %d bytes before this: the job keeps only the head and tail of its output; "+
		"to keep it all, redirect it to a file (command > out.txt 2>&1) and read the file]", n)
}
