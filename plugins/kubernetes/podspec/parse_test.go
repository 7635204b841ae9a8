package podspec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"

	"github.com/wai-dev/wai/host/backend"
)

// The configuration example in docs/KUBERNETES.md is valid and means what
// it says: its [backends.kubernetes] table, decoded as wai decodes a
// backend's table, builds a pod with those settings.
func TestDocExampleParses(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "KUBERNETES.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```toml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/KUBERNETES.md has no ```toml block")
	}
	var file struct {
		Backends map[string]any `toml:"backends"`
	}
	if _, err := toml.Decode(block, &file); err != nil {
		t.Fatalf("the example is not TOML: %v", err)
	}
	raw, err := json.Marshal(file.Backends["kubernetes"])
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(raw)
	if err != nil {
		t.Fatalf("the example is refused: %v", err)
	}
	pod := mustPod(t, b, Session{Name: "doc"})
	assertHardened(t, pod, 65534, 65534)
	if rc := pod.Spec.RuntimeClassName; rc == nil || *rc != "gvisor" {
		t.Errorf("runtimeClassName %v, want gvisor as the example says", rc)
	}
	var agent bool
	for _, v := range pod.Spec.Volumes {
		agent = agent || v.Image != nil && v.Image.Reference == "registry.example/wai-agent:1"
	}
	if !agent || pod.Spec.Containers[0].Image != "registry.example/wai-python:bookworm" {
		t.Errorf("the example's images are not used: %+v", pod.Spec.Containers[0].Image)
	}
	if got := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.String() != "1Gi" {
		t.Errorf("memory limit %s, want 1Gi", got.String())
	}
}

func TestParseRejectsUnknownKeys(t *testing.T) {
	_, err := Parse(json.RawMessage(`{"namespace":"wai","privileged":true}`))
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "privileged") {
		t.Fatalf("Parse with an unknown key = %v, want ErrInvalid naming it", err)
	}
	if _, err := Parse(nil); err != nil {
		t.Fatalf("Parse of no table (all defaults): %v", err)
	}
}
