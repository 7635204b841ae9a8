package warm

import "testing"

// TestMain warms the cache for test binaries of library packages ("dev").
func TestMain(m *testing.M) { Main(m) }
