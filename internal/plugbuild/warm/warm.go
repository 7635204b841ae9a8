// Package warm compiles Wasm modules into a wazero compilation cache
// directory, for plugbuild: a test binary built with the race detector,
// where wazero's compiler runs ten times slower, then finds them compiled.
//
// wazero names its cache after its own version, read from the binary's
// build information, and the two kinds of test binary differ there: one
// of a library package carries none ("dev"), one of a main package (the
// tools, cmd/wai) carries the module's versions ("v1.9.0"). Each reads
// only entries a binary of its kind wrote, so the cache is warmed by two
// test binaries: this package's, and versioned's, a main package.
//
//	WAI_WARM_CACHE=DIR WAI_WARM_MODULES=a.wasm:b.wasm go test -count=1 ./internal/plugbuild/warm/...
//
// The runtime settings that enter wazero's cache key must match the wai
// runtime's: WithCloseOnContextDone(true). Without the variables set, the
// test binaries run nothing.
package warm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// Main is a warming test binary's TestMain: it compiles the modules the
// environment names, or runs the package's tests when it names none.
func Main(m *testing.M) {
	dir, modules := os.Getenv("WAI_WARM_CACHE"), os.Getenv("WAI_WARM_MODULES")
	if dir == "" || modules == "" {
		os.Exit(m.Run())
	}
	if err := compile(dir, filepath.SplitList(modules)); err != nil {
		fmt.Fprintln(os.Stderr, "warm:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func compile(dir string, modules []string) error {
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	for _, path := range modules {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, err := rt.CompileModule(ctx, b); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}
