package main

import (
	"testing"

	"github.com/wai-dev/wai/internal/plugbuild/warm"
)

// TestMain warms the cache for test binaries of main packages.
func TestMain(m *testing.M) { warm.Main(m) }
