package agentproto

import (
	"encoding/json"
	"testing"
)

func TestTextCrossesByteForByte(t *testing.T) {
	for _, s := range []string{"", "plain", "caf\xe9", "\x00\xff\xfe", "日本\u2028", `{"b64":"x"}`} {
		b, err := json.Marshal(Text(s))
		if err != nil {
			t.Fatalf("Marshal(%q): %v", s, err)
		}
		var back Text
		if err := json.Unmarshal(b, &back); err != nil || string(back) != s {
			t.Errorf("%q → %s → %q, %v", s, b, back, err)
		}
	}
	var x Text
	for _, bad := range []string{`{}`, `{"b64":"!!"}`, `{"b64":1}`, `12`} {
		if json.Unmarshal([]byte(bad), &x) == nil {
			t.Errorf("Unmarshal(%s) accepted it", bad)
		}
	}
}

// FuzzFSResponse: whatever an agent answers, decoding fails cleanly or
// gives a response whose texts encode and decode back to themselves.
func FuzzFSResponse(f *testing.F) {
	seed, _ := json.Marshal(FSResponse{Lines: []Text{"a", "caf\xe9"}, Entries: []FSInfo{{Path: "x\xff", Kind: "file"}},
		Matches: []FSMatch{{Path: "p", Line: 1, Text: "t"}}, Error: &FSError{Kind: "invalid", Msg: "m"}})
	f.Add(seed)
	f.Add([]byte(`{"lines":[{"b64":"/w=="}],"path":{"b64":""}}`))
	f.Add([]byte(`{"data":"AAEC","size":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r FSResponse
		if Decode(data, &r) != nil {
			return
		}
		for _, l := range r.Lines {
			b, err := json.Marshal(l)
			var back Text
			if err != nil || json.Unmarshal(b, &back) != nil || back != l {
				t.Fatalf("line %q does not round-trip: %s %v", l, b, err)
			}
		}
	})
}
