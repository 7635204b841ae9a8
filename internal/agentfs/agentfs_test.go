package agentfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/agentproto"
)

// roundTrip sends err through JSON, as it crosses the wire.
func roundTrip(t *testing.T, err error) error {
	t.Helper()
	b, jerr := json.Marshal(EncodeError(err))
	if jerr != nil {
		t.Fatal(jerr)
	}
	var e agentproto.FSError
	if jerr := json.Unmarshal(b, &e); jerr != nil {
		t.Fatal(jerr)
	}
	return DecodeError(&e)
}

func TestErrorsKeepTheirKind(t *testing.T) {
	for _, kind := range []error{backend.ErrInvalid, backend.ErrPermission, backend.ErrUnavailable, backend.ErrNotFound, backend.ErrExist} {
		in := backend.Errorf(kind, "fs.read", "a/b", "what to do")
		out := roundTrip(t, in)
		if !errors.Is(out, kind) || out.Error() != in.Error() {
			t.Errorf("%v: got %q (kind %v), want %q", kind, out, backend.KindOf(out), in)
		}
	}
	stopped := &backend.Error{Kind: backend.ErrUnavailable, Op: "fs.grep", Msg: "stopped", Err: context.DeadlineExceeded}
	if out := roundTrip(t, stopped); !errors.Is(out, context.DeadlineExceeded) || !errors.Is(out, backend.ErrUnavailable) {
		t.Errorf("a deadline error came back as %v", out)
	}
	if out := roundTrip(t, fmt.Errorf("wrapped: %w", context.Canceled)); !errors.Is(out, context.Canceled) || backend.KindOf(out) != nil {
		t.Errorf("a cancelled internal error came back as %v (kind %v)", out, backend.KindOf(out))
	}
	if out := DecodeError(&agentproto.FSError{Kind: "nonsense", Msg: strings.Repeat("x", 1<<20)}); backend.KindOf(out) != nil || len(out.Error()) > 2*maxErrorMsg {
		t.Errorf("an unknown kind came back with kind %v, %d bytes", backend.KindOf(out), len(out.Error()))
	}
}

// TestDecodeRefusesBadAnswers: an answer past the contract is
// ErrUnavailable, whatever the agent claims.
func TestDecodeRefusesBadAnswers(t *testing.T) {
	l := backend.DefaultLimits()
	l.MaxResults, l.MaxReadBytes = 2, 10
	info := func(p string) agentproto.FSInfo {
		return agentproto.FSInfo{Path: agentproto.Text(p), Name: "n", Kind: "file"}
	}
	checks := map[string]func() error{
		"escaping path": func() error {
			_, err := DecodeStat(&agentproto.FSResponse{Info: ptr(info("../etc/passwd"))})
			return err
		},
		"absolute path": func() error { _, err := DecodeStat(&agentproto.FSResponse{Info: ptr(info("/etc"))}); return err },
		"unclean path":  func() error { _, err := DecodeStat(&agentproto.FSResponse{Info: ptr(info("a//b"))}); return err },
		"unknown kind": func() error {
			_, err := DecodeStat(&agentproto.FSResponse{Info: &agentproto.FSInfo{Path: "a", Name: "a", Kind: "door"}})
			return err
		},
		"no info": func() error { _, err := DecodeStat(&agentproto.FSResponse{}); return err },
		"too many entries": func() error {
			_, err := DecodeList(&agentproto.FSResponse{Entries: []agentproto.FSInfo{info("a"), info("b"), info("c")}}, l)
			return err
		},
		"too many lines": func() error {
			_, err := DecodeRead(&agentproto.FSResponse{Path: "a", Lines: []agentproto.Text{"1", "2", "3"}}, backend.ReadRequest{}, l)
			return err
		},
		"too many bytes": func() error {
			_, err := DecodeRead(&agentproto.FSResponse{Path: "a", Lines: []agentproto.Text{agentproto.Text(strings.Repeat("x", 31))}}, backend.ReadRequest{}, l)
			return err
		},
		"other offset": func() error {
			_, err := DecodeRead(&agentproto.FSResponse{Path: "a", Offset: 5}, backend.ReadRequest{Offset: 1}, l)
			return err
		},
		"grep line 0": func() error {
			_, err := DecodeGrep(&agentproto.FSResponse{Matches: []agentproto.FSMatch{{Path: "a", Line: 0}}}, l)
			return err
		},
		"glob escape": func() error {
			_, err := DecodeGlob(&agentproto.FSResponse{Paths: []agentproto.Text{"a", ".."}}, l)
			return err
		},
		"more bytes than asked": func() error {
			_, _, err := DecodeReadBytes(&agentproto.FSResponse{Data: []byte("12345"), Size: 5}, 4)
			return err
		},
		"resolve escape": func() error { _, err := DecodeResolve(&agentproto.FSResponse{Path: "../x"}); return err },
	}
	for name, check := range checks {
		if err := check(); !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
		}
	}
	if res, err := DecodeList(&agentproto.FSResponse{Entries: []agentproto.FSInfo{info("a"), info("b")}, Truncated: true}, l); err != nil || len(res.Entries) != 2 || !res.Truncated {
		t.Errorf("a list at the limit: %+v %v", res, err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestAnswerCapGrowsWithTheLimits(t *testing.T) {
	small := NewRequest(agentproto.FSRead, backend.Limits{MaxResults: 1, MaxReadBytes: 1})
	big := NewRequest(agentproto.FSRead, backend.DefaultLimits())
	if AnswerCap(small) >= AnswerCap(big) || AnswerCap(big) < 6*backend.DefaultLimits().MaxReadBytes {
		t.Errorf("caps %d and %d", AnswerCap(small), AnswerCap(big))
	}
	rb := NewRequest(agentproto.FSReadBytes, backend.DefaultLimits())
	rb.Max = 2 << 20
	if int64(AnswerCap(rb)) < int64(AnswerCap(big))+rb.Max*4/3 {
		t.Errorf("read_bytes cap %d does not hold %d bytes in base64", AnswerCap(rb), rb.Max)
	}
}
