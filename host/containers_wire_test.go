package host

import (
	"errors"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// A containers request is decoded strictly: an unknown parameter or
// anything after the object is a bad request naming where the parameters
// are listed, not a request run with part of what was asked.
func TestDecodeContainerRequestStrict(t *testing.T) {
	req, err := DecodeContainerRequest([]byte(`{"operation":"list"}`))
	if err != nil || req.Operation != "list" {
		t.Fatalf("a good request: %+v, %v", req, err)
	}
	for _, bad := range []string{
		`{"operation":"list","nmae":"x"}`,
		`{"operation":"list"} {"operation":"destroy"}`,
		`{"operation":"list"}]`,
	} {
		_, err := DecodeContainerRequest([]byte(bad))
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: %v, want an invalid-request error", bad, err)
		}
	}
}
