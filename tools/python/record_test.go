package main

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func encodeRecord(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write(data)
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(z.Bytes())
}

// TestParseRecord: the record is the only thing the tool takes from the
// sandbox, and code shares the process that prints it; everything in it
// is checked, and anything odd means no writes.
func TestParseRecord(t *testing.T) {
	in := driverInput{Marker: "\x1ewai-eval-0123:", Reads: map[string]string{"in.txt": "x"},
		Writes: []writeSpec{{Path: "out.txt", Content: "{a}", Mode: "create"}}}
	good := map[string]any{"value_repr": "1", "globals": map[string]any{"a": 1}, "status": 0,
		"writes": []any{map[string]any{"path": "out.txt", "content": "1", "mode": "create"}}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		m[k] = v
		return m
	}
	printed, rec, err := parseRecord("hello\n"+in.Marker+encodeRecord(t, good)+"\n", in.Marker, in)
	if err != nil || printed != "hello\n" || *rec.ValueRepr != "1" || rec.Writes[0].Content != "1" {
		t.Fatalf("%q %+v %v", printed, rec, err)
	}
	// A forged record printed by the code before the driver's is ignored.
	forged := encodeRecord(t, with("writes", []any{}))
	if _, rec, err := parseRecord(in.Marker+forged+"\n"+in.Marker+encodeRecord(t, good)+"\n", in.Marker, in); err != nil || len(rec.Writes) != 1 {
		t.Fatalf("the last record must win: %+v %v", rec, err)
	}
	for _, c := range []struct{ name, stdout string }{
		{"no record", "just output\n"},
		{"another marker", "\x1ewai-eval-9999:" + encodeRecord(t, good) + "\n"},
		{"cut by the output cap", in.Marker + encodeRecord(t, good)[:20] + "\n...[truncated 100 bytes]...\n"},
		{"not base64", in.Marker + "!!!!\n"},
		{"not zlib", in.Marker + base64.StdEncoding.EncodeToString([]byte("plain")) + "\n"},
		{"unknown field", in.Marker + encodeRecord(t, with("extra", 1)) + "\n"},
		{"a write not asked for", in.Marker + encodeRecord(t, with("writes", []any{map[string]any{"path": "other.txt", "content": "1", "mode": "create"}})) + "\n"},
		{"a declared write missing", in.Marker + encodeRecord(t, with("writes", []any{})) + "\n"},
		{"a write to a read file", in.Marker + encodeRecord(t, with("writes", append(good["writes"].([]any), map[string]any{"path": "in.txt", "content": "1", "mode": "overwrite"}))) + "\n"},
		{"a write path outside the rules", in.Marker + encodeRecord(t, with("writes", append(good["writes"].([]any), map[string]any{"path": "../x", "content": "1", "mode": "overwrite"}))) + "\n"},
		{"a duplicate write", in.Marker + encodeRecord(t, with("writes", append(good["writes"].([]any), map[string]any{"path": "out.txt", "content": "1", "mode": "append"}))) + "\n"},
		{"a bad mode", in.Marker + encodeRecord(t, with("writes", append(good["writes"].([]any), map[string]any{"path": "b.txt", "content": "1", "mode": "truncate"}))) + "\n"},
		{"content over 48,000", in.Marker + encodeRecord(t, with("writes", append(good["writes"].([]any), map[string]any{"path": "b.txt", "content": strings.Repeat("a", maxWriteChars+1), "mode": "overwrite"}))) + "\n"},
		{"too many globals", in.Marker + encodeRecord(t, with("globals", manyGlobals(maxGlobalsOut+1))) + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := parseRecord(c.stdout, in.Marker, in); !errors.Is(err, errNoRecord) {
				t.Fatalf("accepted: %v", err)
			}
		})
	}
	t.Run("a decompression bomb", func(t *testing.T) {
		huge := map[string]any{"value_repr": strings.Repeat("a", maxRecordBytes+1), "globals": map[string]any{}, "writes": []any{}, "status": 0}
		if _, _, err := parseRecord(in.Marker+encodeRecord(t, huge)+"\n", in.Marker, in); !errors.Is(err, errNoRecord) {
			t.Fatalf("accepted: %v", err)
		}
	})
}

func manyGlobals(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m["g"+strings.Repeat("x", i%50)+string(rune('a'+i%26))+string(rune('a'+i/26%26))] = i
	}
	return m
}
