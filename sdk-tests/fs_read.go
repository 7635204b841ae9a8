package sdktests

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

func checkReadLines(t *T, w *ws) {
	w.write("r.txt", "one\ntwo\nthree\n")
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "/r.txt"})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !slices.Equal(res.Lines, []string{"one", "two", "three"}) || res.TotalLines != 3 || res.Offset != 0 || res.Path != "r.txt" || res.Truncated {
		t.Errorf("Read(/r.txt) = %+v, want lines one two three, total 3, path r.txt", res)
	}
	w.write("noeol.txt", "one\ntwo")
	wantLines(t, w, "noeol.txt", "one", "two")
	w.write("crlf.txt", "a\r\nb\r\n")
	wantLines(t, w, "crlf.txt", "a", "b")
	w.write("blank.txt", "\n\nx\n")
	wantLines(t, w, "blank.txt", "", "", "x")
	w.write("empty.txt", "")
	res, err = w.FS().Read(t.Context(), backend.ReadRequest{Path: "empty.txt"})
	if err != nil || len(res.Lines) != 0 || res.TotalLines != 0 {
		t.Errorf("Read of an empty file = %+v, %v; want no lines", res, err)
	}
}

func checkReadOffsetLimit(t *T, w *ws) {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line%d\n", i)
	}
	w.write("ten.txt", b.String())
	for _, c := range []struct {
		off, lim int
		want     []string
	}{
		{3, 4, []string{"line4", "line5", "line6", "line7"}},
		{8, 5, []string{"line9", "line10"}},
		{0, 1, []string{"line1"}},
		{10, 0, nil},
		{50, 3, nil},
	} {
		res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "ten.txt", Offset: c.off, Limit: c.lim})
		if err != nil {
			t.Errorf("Read offset %d limit %d: %v", c.off, c.lim, err)
			continue
		}
		if !slices.Equal(res.Lines, c.want) || res.TotalLines != 10 || res.Offset != c.off {
			t.Errorf("Read offset %d limit %d = lines %q total %d offset %d; want %q, total 10", c.off, c.lim, res.Lines, res.TotalLines, res.Offset, c.want)
		}
	}
}

func checkReadLimitBounds(t *T, w *ws) {
	w.write("seven.txt", "1\n2\n3\n4\n5\n6\n7\n")
	for _, req := range []backend.ReadRequest{
		{Path: "seven.txt", Limit: w.limits.MaxResults + 1},
		{Path: "seven.txt", Limit: -1},
		{Path: "seven.txt", Offset: -1},
	} {
		_, err := w.FS().Read(t.Context(), req)
		wantKind(t, fmt.Sprintf("Read offset %d limit %d", req.Offset, req.Limit), err, backend.ErrInvalid)
	}
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "seven.txt"})
	if err != nil || !slices.Equal(res.Lines, []string{"1", "2", "3", "4", "5"}) || res.TotalLines != 7 {
		t.Errorf("Read with limit 0 at MaxResults 5 = %+v, %v; want the first 5 lines of 7", res, err)
	}
}

func checkReadByteCap(t *T, w *ws) {
	w.write("long.txt", strings.Repeat("x", 40)+"\n"+strings.Repeat("y", 1000)+"\nshort\n")
	res, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "long.txt"})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	n := 0
	for _, l := range res.Lines {
		n += len(l)
	}
	if !res.Truncated || n > w.limits.MaxReadBytes {
		t.Errorf("Read of a 1000-byte line at MaxReadBytes %d: %d bytes returned, truncated %v", w.limits.MaxReadBytes, n, res.Truncated)
	}
	if len(res.Lines) == 0 || res.Lines[0] != strings.Repeat("x", 40) {
		t.Errorf("Read under the byte cap lost the first line: %q", res.Lines)
	}
}

func checkReadErrors(t *T, w *ws) {
	w.write("d/f.txt", "x")
	_, err := w.FS().Read(t.Context(), backend.ReadRequest{Path: "d"})
	wantKind(t, "Read of a directory", err, backend.ErrInvalid)
	_, err = w.FS().Read(t.Context(), backend.ReadRequest{Path: "missing.txt"})
	wantKind(t, "Read of a missing file", err, backend.ErrNotFound)
}
