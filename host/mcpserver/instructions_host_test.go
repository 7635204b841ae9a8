package mcpserver_test

import (
	"strings"
	"testing"
)

// Through the server, as a client reads it: the instructions of a host
// kernel warn, and the command tools say where commands run.
func TestServerInstructionsFollowTheBackend(t *testing.T) {
	cs := stdioClient(t, newServer(t), nil)
	got := cs.InitializeResult().Instructions
	if !strings.Contains(got, "NOT SANDBOXED") || strings.Contains(got, "sandboxed workspace") {
		t.Fatalf("a host server's instructions:\n%s", got)
	}
}
