package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/internal/wiremirror"
)

// The tool spells the kernel's JSON itself: it is a Wasm guest, and
// importing host would link the kernel into it (RATIONALE.md, "Deliberate
// repetition"). These tests, run natively, keep the two spellings one:
// every field the tool reads is one the kernel writes, and every
// parameter it offers is one the kernel decodes (strictly, so a stray one
// would fail every call).

func TestOperationsAreTheKernels(t *testing.T) {
	if !slices.Equal(operations, host.ContainerOperations) {
		t.Errorf("operations:\n%v\nthe kernel's:\n%v", operations, host.ContainerOperations)
	}
	f, _ := reflect.TypeFor[params]().FieldByName("Operation")
	if got, want := f.Tag.Get("enum"), strings.Join(host.ContainerOperations, ","); got != want {
		t.Errorf("the operation parameter's enum:\n%s\nthe kernel's operations:\n%s", got, want)
	}
}

func TestParamsMirrorContainerRequest(t *testing.T) {
	wiremirror.Check(t, "params", reflect.TypeFor[params](), reflect.TypeFor[host.ContainerRequest]())
}

func TestResponseMirrorsContainerResponse(t *testing.T) {
	// error and kind are the tool's own: the value of its failed result.
	wiremirror.Check(t, "response", reflect.TypeFor[response](), reflect.TypeFor[host.ContainerResponse](), "error", "kind")
}
