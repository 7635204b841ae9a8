package mock_test

import (
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/plugins/mock"
)

type chunk struct {
	stream backend.Stream
	text   string
}

// The mock hands its canned output to a live-output sink, a line per
// chunk, before Execute returns; the result keeps the capped output.
func TestLiveOutputReplaysCannedOutput(t *testing.T) {
	ws := open(t, mock.New(mock.Options{}), "s")
	sh := ws.MockShell()
	sh.AddResponse("build", backend.ExecResult{Stdout: "one\ntwo\nthree", Stderr: "warn\n"})
	var got []chunk
	res := execute(t, sh, backend.ExecRequest{Shell: "make build", Output: func(s backend.Stream, p []byte) {
		got = append(got, chunk{s, string(p)})
	}})
	want := []chunk{{backend.Stdout, "one\n"}, {backend.Stdout, "two\n"}, {backend.Stdout, "three"}, {backend.Stderr, "warn\n"}}
	if len(got) != len(want) {
		t.Fatalf("live chunks %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("chunk %d: %v, want %v", i, got[i], want[i])
		}
	}
	if res.Stdout != "one\ntwo\nthree" {
		t.Errorf("result stdout %q", res.Stdout)
	}

	got = nil
	execute(t, sh, backend.ExecRequest{Shell: "make build", DiscardOutput: true, Output: func(s backend.Stream, p []byte) {
		got = append(got, chunk{s, string(p)})
	}})
	if len(got) != 0 {
		t.Errorf("DiscardOutput: live chunks %v, want none", got)
	}
	got = nil
	if _, err := sh.ExecuteScript(t.Context(), backend.ScriptRequest{Script: "make build", Output: func(s backend.Stream, p []byte) {
		got = append(got, chunk{s, string(p)})
	}}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("script: live chunks %v, want %v", got, want)
	}
}
