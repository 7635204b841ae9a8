package wasm

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/wiremirror"
	"github.com/wai-dev/wai/pdk"
)

// The ABI error is spelled here and in pdk.Error (a guest cannot import
// the host): both must read what the other writes, code included.
func TestWireErrorMirrorsPDK(t *testing.T) {
	wiremirror.Check(t, "pdk error", reflect.TypeFor[pdk.Error](), reflect.TypeFor[wireError]())
	wiremirror.Check(t, "host error", reflect.TypeFor[wireError](), reflect.TypeFor[pdk.Error]())
	if string(pdk.CodePolicyFailed) != wireCodePolicyFailed {
		t.Errorf("pdk.CodePolicyFailed = %q, the host spells it %q", pdk.CodePolicyFailed, wireCodePolicyFailed)
	}
}

// A refusal by a broken policy goes to the guest with code policy_failed,
// and comes back from it (a tool passing it on) matching
// backend.ErrPolicyFailed: the marker survives the round trip. A plain
// deny has no code field at all, the error shape of plugins before it.
func TestPolicyFailedCrossesTheWire(t *testing.T) {
	failed := &backend.Error{Kind: backend.ErrPermission, Op: "shell.exec", Path: "ls", Msg: "denied by policy p",
		Err: errors.Join(backend.ErrPolicyFailed, errors.New("plugin p: check: trapped"))}
	out := errorJSON(failed)
	if !strings.Contains(string(out), `"code":"policy_failed"`) {
		t.Fatalf("a broken policy's refusal on the wire: %s, want code policy_failed", out)
	}
	err := guestError("shell", "call shell_execute", string(out))
	if !errors.Is(err, backend.ErrPolicyFailed) || !errors.Is(err, backend.ErrPermission) {
		t.Errorf("the refusal back from the guest: %v, want ErrPermission and ErrPolicyFailed", err)
	}
	if strings.Count(err.Error(), "policy failed") != 1 {
		t.Errorf("message %q: want the guest's text once, the code adding none", err)
	}
	deny := errorJSON(backend.Errorf(backend.ErrPermission, "shell.exec", "rm", "denied by policy p: no"))
	if strings.Contains(string(deny), "code") {
		t.Errorf("a plain deny on the wire: %s, want no code", deny)
	}
}

// What guests send: the code only means something with kind permission,
// unknown codes are ignored (a later ABI may add some), and an error
// without the field (every plugin built before it) decodes as before.
func TestWireErrorCode(t *testing.T) {
	for _, c := range []struct {
		wire   string
		kind   error
		failed bool
	}{
		{`{"error":{"kind":"permission","code":"policy_failed","message":"m"}}`, backend.ErrPermission, true},
		{`{"kind":"permission","code":"policy_failed","message":"m"}`, backend.ErrPermission, true},
		{`{"error":{"kind":"permission","message":"m"}}`, backend.ErrPermission, false},
		{`{"error":{"kind":"invalid","code":"policy_failed","message":"m"}}`, backend.ErrInvalid, false},
		{`{"error":{"kind":"permission","code":"from_the_future","message":"m"}}`, backend.ErrPermission, false},
	} {
		err := guestError("p", "call t", c.wire)
		if !errors.Is(err, c.kind) || errors.Is(err, backend.ErrPolicyFailed) != c.failed || !strings.HasSuffix(err.Error(), ": m") {
			t.Errorf("%s: %v, want kind %v, policy failed %v", c.wire, err, c.kind, c.failed)
		}
	}
	// A tool's answer is decoded strictly: the code must be a known field.
	var w wireResult
	if err := decodeStrict([]byte(`{"error":{"kind":"permission","code":"policy_failed","message":"m"}}`), &w); err != nil || w.Error.Code != wireCodePolicyFailed {
		t.Errorf("strict decode of an error with a code: %v, %+v", err, w.Error)
	}
	var old wireResult
	if err := decodeStrict([]byte(`{"error":{"kind":"permission","message":"m"}}`), &old); err != nil || old.Error.Code != "" {
		t.Errorf("an error without a code: %v, %+v", err, old.Error)
	}
}
