package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
)

// The tool spells the kernel's JSON itself: it is a Wasm guest, and
// importing host would link the kernel into it (RATIONALE.md, "Deliberate
// repetition"). These tests, run natively, keep the two spellings one:
// every field the tool reads is one the kernel writes, and every
// parameter it offers is one the kernel decodes (strictly, so a stray one
// would fail every call), under the same JSON name and of a kind that
// decodes into the other. omitempty may differ: it changes no meaning.

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
	mirror(t, "params", reflect.TypeFor[params](), reflect.TypeFor[host.ContainerRequest]())
}

func TestResponseMirrorsContainerResponse(t *testing.T) {
	// error and kind are the tool's own: the value of its failed result.
	mirror(t, "response", reflect.TypeFor[response](), reflect.TypeFor[host.ContainerResponse](), "error", "kind")
}

// The check must catch what it is for: a renamed tag, a dropped
// another kind, a field the kernel does not have.
func TestMirrorCatchesDrift(t *testing.T) {
	type kernel struct {
		A string    `json:"a,omitempty"`
		B []int     `json:"b"`
		C time.Time `json:"c"`
	}
	for name, tool := range map[string]reflect.Type{
		"renamed": reflect.TypeFor[struct {
			A string `json:"aa,omitempty"`
		}](),
		"kind": reflect.TypeFor[struct {
			B []string `json:"b"`
		}](),
		"time": reflect.TypeFor[struct {
			C int `json:"c"`
		}](),
	} {
		rec := &recorder{}
		mirror(rec, "x", tool, reflect.TypeFor[kernel]())
		if rec.errors == 0 {
			t.Errorf("%s: no error", name)
		}
	}
	rec := &recorder{}
	mirror(rec, "x", reflect.TypeFor[struct {
		A *string `json:"a"`
		B []int64 `json:"b,omitempty"`
		C string  `json:"c"`
	}](), reflect.TypeFor[kernel]())
	if rec.errors != 0 {
		t.Errorf("a pointer, another integer, omitempty and a time read as text: %d errors", rec.errors)
	}
}

// reporter is the part of testing.T mirror uses, so that its own test can
// count what it reports.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

type recorder struct{ errors int }

func (*recorder) Helper()                 { /* nothing to mark outside a test */ }
func (r *recorder) Errorf(string, ...any) { r.errors++ }

// mirror reports where tool's JSON is not kernel's: recursively, every
// field of a tool struct (but those named in own) must be a field of the
// kernel struct with the same JSON name. Pointers are followed on both
// sides and integers are one kind (JSON spells them alike), and a
// time.Time the tool may read as its RFC 3339 text.
func mirror(t reporter, path string, tool, kernel reflect.Type, own ...string) {
	t.Helper()
	for tool.Kind() == reflect.Pointer {
		tool = tool.Elem()
	}
	for kernel.Kind() == reflect.Pointer {
		kernel = kernel.Elem()
	}
	if kernel == reflect.TypeFor[time.Time]() && tool.Kind() == reflect.String {
		return
	}
	if kindOf(tool) != kindOf(kernel) {
		t.Errorf("%s: the tool has a %s, the kernel a %s", path, tool, kernel)
		return
	}
	switch tool.Kind() {
	case reflect.Slice, reflect.Array:
		mirror(t, path+"[]", tool.Elem(), kernel.Elem())
	case reflect.Map:
		mirror(t, path+"[key]", tool.Key(), kernel.Key())
		mirror(t, path+"[]", tool.Elem(), kernel.Elem())
	case reflect.Struct:
		mirrorFields(t, path, tool, kernel, own)
	}
}

func mirrorFields(t reporter, path string, tool, kernel reflect.Type, own []string) {
	t.Helper()
	byName := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(kernel) {
		if name := jsonName(f); name != "" && f.IsExported() {
			byName[name] = f
		}
	}
	for _, f := range reflect.VisibleFields(tool) {
		name := jsonName(f)
		if name == "" || slices.Contains(own, name) {
			continue
		}
		k, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("%s.%s: the kernel's %s has no such field", path, name, kernel)
		default:
			mirror(t, path+"."+name, f.Type, k.Type)
		}
	}
}

// kindOf is t's kind with every integer kind as reflect.Int.
func kindOf(t reflect.Type) reflect.Kind {
	switch k := t.Kind(); k {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t != reflect.TypeFor[byte]() {
			return reflect.Int
		}
		return k
	default:
		return k
	}
}

// jsonName is the field's name on the wire, "" for one JSON leaves out.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || f.Anonymous {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}
