package wasm

import (
	"context"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wai-dev/wai/internal/plugbuild"
)

// TestInspectModuleAgreesWithWazero reads the imports and exports of real
// plugins and checks them against wazero's own decoder.
func TestInspectModuleAgreesWithWazero(t *testing.T) {
	ctx := context.Background()
	// The runtime's own settings and cache: the modules are compiled there
	// already, so asking wazero costs no compilation.
	cache, err := wazero.NewCompilationCacheWithDir(plugbuild.CompilationCacheDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	for _, dir := range []string{"examples/hello", "host/internal/wasm/testdata/evil"} {
		wasm := testModule(t, dir)
		info, err := inspectModule(wasm)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		cm, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		var want []importRef
		for _, f := range cm.ImportedFunctions() {
			mod, name, _ := f.Import()
			want = append(want, importRef{mod, name})
		}
		if !slices.Equal(info.funcImports, want) {
			t.Errorf("%s: imports %v, wazero says %v", dir, info.funcImports, want)
		}
		for name := range cm.ExportedFunctions() {
			if !info.exports[name] {
				t.Errorf("%s: export %s missed", dir, name)
			}
		}
		if len(info.exports) != len(cm.ExportedFunctions()) {
			t.Errorf("%s: %d exports, wazero says %d", dir, len(info.exports), len(cm.ExportedFunctions()))
		}
	}
}

func TestInspectModuleRejectsGarbage(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":             nil,
		"not wasm":          []byte("\x7fELF\x02\x01\x01"),
		"truncated section": append(append([]byte{}, wasmMagic...), secImport, 10, 1),
		"long leb":          append(append([]byte{}, wasmMagic...), secImport, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80),
		"bad import kind":   append(append([]byte{}, wasmMagic...), secImport, 5, 1, 1, 'm', 1, 'n', 9),
		"huge name":         append(append([]byte{}, wasmMagic...), secExport, 6, 1, 0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		if _, err := inspectModule(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	info, err := inspectModule(module("extism:host/user", "wai_log"))
	if err != nil || len(info.funcImports) != 1 || info.funcImports[0] != (importRef{"extism:host/user", "wai_log"}) {
		t.Errorf("hand-made module: %+v, %v", info, err)
	}
}

// FuzzInspectModule: no input makes the reader panic or loop.
func FuzzInspectModule(f *testing.F) {
	f.Add(module("extism:host/user", "wai_shell_exec"))
	f.Add(emptyExport())
	f.Add(append(append([]byte{}, wasmMagic...), secImport, 9, 1, 1, 'm', 1, 'n', kindMemory, 5, 1, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		inspectModule(b)
	})
}
