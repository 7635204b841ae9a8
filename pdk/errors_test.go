package pdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// A refusal by a broken policy arrives with code policy_failed; a tool
// that returns it, or wraps it with %w, sends the code back, so the host
// can still tell the model to ask the operator rather than try another
// command. A plain deny, and an error that only mentions the text, carry
// no code.
func TestPolicyFailedCodeIsKept(t *testing.T) {
	var got struct {
		Error *Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(`{"error":{"kind":"permission","code":"policy_failed","message":"denied by policy p: policy failed, denying"}}`), &got); err != nil {
		t.Fatal(err)
	}
	refusal := error(got.Error)
	if !errors.Is(refusal, ErrPolicyFailed) || !errors.Is(refusal, ErrPermission) {
		t.Fatalf("the host's refusal: %v, want ErrPermission and ErrPolicyFailed", refusal)
	}
	for _, err := range []error{refusal, fmt.Errorf("listing: %w", refusal)} {
		if w := toWire(err); w.Kind != KindPermission || w.Code != CodePolicyFailed || w.Message != err.Error() {
			t.Errorf("toWire(%v) = %+v, want permission with code policy_failed", err, w)
		}
	}
	for _, err := range []error{
		Errorf(KindPermission, "denied by policy p: no"),
		fmt.Errorf("listing: %v", refusal), // flattened: the kind is gone too
		&Error{Kind: KindInvalid, Code: CodePolicyFailed, Message: "a code only means something with its kind"},
	} {
		if w := toWire(err); w.Code != "" || errors.Is(err, ErrPolicyFailed) {
			t.Errorf("toWire(%v) = %+v, want no code", err, w)
		}
	}
	// Without a code the wire is the shape of plugins built before it.
	b, _ := json.Marshal(toWire(Errorf(KindPermission, "no")))
	if string(b) != `{"kind":"permission","message":"no"}` {
		t.Errorf("a plain deny encodes as %s", b)
	}
}
