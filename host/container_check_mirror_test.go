package host_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/pdk"
)

// What the kernel tells policies about a containers operation and what a
// Wasm policy can read of it are one JSON object: a field the kernel adds
// and pdk lacks is invisible to every plugin policy.
func TestContainerCheckMirrorsPDK(t *testing.T) {
	tags := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	if h, p := tags(host.ContainerCheck{}), tags(pdk.ContainerCheck{}); !slices.Equal(h, p) {
		t.Errorf("host.ContainerCheck fields %v\npdk.ContainerCheck fields  %v", h, p)
	}
}
