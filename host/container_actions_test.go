package host

import (
	"slices"
	"testing"

	"github.com/wai-dev/wai/host/internal/wasm"
)

// Every containers operation is an action a Wasm policy may register for:
// the runtime refuses to load a policy naming an action it does not know,
// and the two lists are kept in two packages (wasm cannot import host).
// create_network was missing, so the Wasm container_safety could not gate
// a network with a route out.
func TestContainerActionsKnownToPlugins(t *testing.T) {
	var want []string
	for _, op := range ContainerOperations {
		want = append(want, ActionContainersPrefix+op)
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(wasm.ContainerActions))
	if !slices.Equal(got, want) {
		t.Errorf("the Wasm runtime knows the containers actions\n%v\nwant (ContainerOperations)\n%v", got, want)
	}
}
