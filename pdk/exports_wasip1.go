//go:build wasip1

package pdk

import (
	gopdk "github.com/extism/go-pdk"

	"github.com/wai-dev/wai/pdk/internal/imports"
)

// The exports of docs/ABI.md. Every plugin built with the pdk has all
// three; wai_describe says which ones it serves.

//go:wasmexport wai_describe
func waiDescribe() int32 { return serveExport(handleDescribe) }

//go:wasmexport wai_call
func waiCall() int32 { return serveExport(handleCall) }

//go:wasmexport wai_check
func waiCheck() int32 { return serveExport(handleCheck) }

func serveExport(h func([]byte) []byte) int32 {
	gopdk.Output(imports.Pad8(h(gopdk.Input())))
	return 0
}

func configGet(key string) (string, bool) { return gopdk.GetConfig(key) }
