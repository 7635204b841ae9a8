// Package warm compiles Wasm modules into a wazero compilation cache
// directory, for plugbuild: a test binary built with the race detector,
// where wazero's compiler runs ten times slower, then finds them compiled.
//
// It is a test binary on purpose. wazero names its cache after its own
// version, read from the binary's build information, and test binaries
// carry none ("dev"): only another test binary writes entries they read.
//
//	WAI_WARM_CACHE=DIR WAI_WARM_MODULES=a.wasm:b.wasm go test -count=1 ./internal/plugbuild/warm
//
// The runtime settings that enter wazero's cache key must match the wai
// runtime's: WithCloseOnContextDone(true). Without the variables set, the
// package runs nothing.
package warm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

func TestMain(m *testing.M) {
	dir, modules := os.Getenv("WAI_WARM_CACHE"), os.Getenv("WAI_WARM_MODULES")
	if dir == "" || modules == "" {
		os.Exit(m.Run())
	}
	if err := warm(dir, filepath.SplitList(modules)); err != nil {
		fmt.Fprintln(os.Stderr, "warm:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func warm(dir string, modules []string) error {
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
