//go:build wasip1

// Package imports holds every raw host-function import of the wai ABI
// (docs/ABI.md), and nothing else does: one place to audit what a plugin
// can ask of the host. Each exported function sends a JSON request and
// returns the JSON response, moving both through Extism memory.
//
// Each import is referenced by one function only, so the linker keeps in
// a plugin exactly the imports it uses, and the host's grant check sees
// only those.
package imports

import gopdk "github.com/extism/go-pdk"

// Pad8 pads JSON with trailing spaces to a multiple of 8 bytes: Extism
// memory is copied 8 bytes per host call and the rest byte by byte, each
// byte costing a host call that Extism makes slow. JSON readers ignore
// trailing whitespace.
func Pad8(b []byte) []byte {
	if r := len(b) % 8; r != 0 {
		b = append(b, "       "[:8-r]...)
	}
	return b
}

// roundTrip writes req to an Extism block, calls fn with its offset and
// reads the response block; nil when the host could not allocate one.
func roundTrip(fn func(uint64) uint64, req []byte) []byte {
	in := gopdk.AllocateBytes(Pad8(req))
	off := fn(in.Offset())
	in.Free()
	if off == 0 {
		return nil
	}
	out := gopdk.FindMemory(off)
	b := out.ReadBytes()
	out.Free()
	return b
}

//go:wasmimport extism:host/user wai_shell_exec
func waiShellExec(uint64) uint64

// ShellExec calls wai_shell_exec.
func ShellExec(req []byte) []byte { return roundTrip(waiShellExec, req) }

//go:wasmimport extism:host/user wai_shell_script
func waiShellScript(uint64) uint64

// ShellScript calls wai_shell_script.
func ShellScript(req []byte) []byte { return roundTrip(waiShellScript, req) }

//go:wasmimport extism:host/user wai_shell_which
func waiShellWhich(uint64) uint64

// ShellWhich calls wai_shell_which.
func ShellWhich(req []byte) []byte { return roundTrip(waiShellWhich, req) }

//go:wasmimport extism:host/user wai_shell_env
func waiShellEnv(uint64) uint64

// ShellEnv calls wai_shell_env.
func ShellEnv(req []byte) []byte { return roundTrip(waiShellEnv, req) }

//go:wasmimport extism:host/user wai_shell_info
func waiShellInfo(uint64) uint64

// ShellInfo calls wai_shell_info.
func ShellInfo(req []byte) []byte { return roundTrip(waiShellInfo, req) }

//go:wasmimport extism:host/user wai_shell_limits
func waiShellLimits(uint64) uint64

// ShellLimits calls wai_shell_limits.
func ShellLimits(req []byte) []byte { return roundTrip(waiShellLimits, req) }

//go:wasmimport extism:host/user wai_fs_stat
func waiFSStat(uint64) uint64

// FSStat calls wai_fs_stat.
func FSStat(req []byte) []byte { return roundTrip(waiFSStat, req) }

//go:wasmimport extism:host/user wai_fs_list
func waiFSList(uint64) uint64

// FSList calls wai_fs_list.
func FSList(req []byte) []byte { return roundTrip(waiFSList, req) }

//go:wasmimport extism:host/user wai_fs_read
func waiFSRead(uint64) uint64

// FSRead calls wai_fs_read.
func FSRead(req []byte) []byte { return roundTrip(waiFSRead, req) }

//go:wasmimport extism:host/user wai_fs_write
func waiFSWrite(uint64) uint64

// FSWrite calls wai_fs_write.
func FSWrite(req []byte) []byte { return roundTrip(waiFSWrite, req) }

//go:wasmimport extism:host/user wai_fs_edit
func waiFSEdit(uint64) uint64

// FSEdit calls wai_fs_edit.
func FSEdit(req []byte) []byte { return roundTrip(waiFSEdit, req) }

//go:wasmimport extism:host/user wai_fs_glob
func waiFSGlob(uint64) uint64

// FSGlob calls wai_fs_glob.
func FSGlob(req []byte) []byte { return roundTrip(waiFSGlob, req) }

//go:wasmimport extism:host/user wai_fs_grep
func waiFSGrep(uint64) uint64

// FSGrep calls wai_fs_grep.
func FSGrep(req []byte) []byte { return roundTrip(waiFSGrep, req) }

//go:wasmimport extism:host/user wai_fs_remove
func waiFSRemove(uint64) uint64

// FSRemove calls wai_fs_remove.
func FSRemove(req []byte) []byte { return roundTrip(waiFSRemove, req) }

//go:wasmimport extism:host/user wai_lifecycle_start
func waiLifecycleStart(uint64) uint64

// LifecycleStart calls wai_lifecycle_start.
func LifecycleStart(req []byte) []byte { return roundTrip(waiLifecycleStart, req) }

//go:wasmimport extism:host/user wai_lifecycle_stop
func waiLifecycleStop(uint64) uint64

// LifecycleStop calls wai_lifecycle_stop.
func LifecycleStop(req []byte) []byte { return roundTrip(waiLifecycleStop, req) }

//go:wasmimport extism:host/user wai_lifecycle_state
func waiLifecycleState(uint64) uint64

// LifecycleState calls wai_lifecycle_state.
func LifecycleState(req []byte) []byte { return roundTrip(waiLifecycleState, req) }

//go:wasmimport extism:host/user wai_containers
func waiContainers(uint64) uint64

// Containers calls wai_containers.
func Containers(req []byte) []byte { return roundTrip(waiContainers, req) }

//go:wasmimport extism:host/user wai_log
func waiLog(uint64) uint64

// Log calls wai_log.
func Log(req []byte) []byte { return roundTrip(waiLog, req) }
