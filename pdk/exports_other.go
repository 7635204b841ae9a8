//go:build !wasip1

package pdk

// testConfig stands in for the Extism plugin config outside Wasm, where
// the pdk's own tests run.
var testConfig = map[string]string{}

func configGet(key string) (string, bool) {
	v, ok := testConfig[key]
	return v, ok
}
