//go:build !wasip1

// Package imports holds every raw host-function import of the wai ABI.
// Outside Wasm (the pdk's own tests run on the host) there are no imports:
// calls go to Host, which a test sets.
package imports

// Host answers host-function calls outside Wasm; nil answers every call
// with an "unavailable" error.
var Host func(name string, req []byte) []byte

func call(name string, req []byte) []byte {
	if Host == nil {
		return []byte(`{"error":{"kind":"unavailable","message":"host functions exist only inside a Wasm plugin (GOOS=wasip1)"}}`)
	}
	return Host(name, req)
}

// ShellExec calls wai_shell_exec.
func ShellExec(req []byte) []byte { return call("wai_shell_exec", req) }

// ShellScript calls wai_shell_script.
func ShellScript(req []byte) []byte { return call("wai_shell_script", req) }

// ShellWhich calls wai_shell_which.
func ShellWhich(req []byte) []byte { return call("wai_shell_which", req) }

// ShellEnv calls wai_shell_env.
func ShellEnv(req []byte) []byte { return call("wai_shell_env", req) }

// ShellInfo calls wai_shell_info.
func ShellInfo(req []byte) []byte { return call("wai_shell_info", req) }

// ShellLimits calls wai_shell_limits.
func ShellLimits(req []byte) []byte { return call("wai_shell_limits", req) }

// FSStat calls wai_fs_stat.
func FSStat(req []byte) []byte { return call("wai_fs_stat", req) }

// FSList calls wai_fs_list.
func FSList(req []byte) []byte { return call("wai_fs_list", req) }

// FSRead calls wai_fs_read.
func FSRead(req []byte) []byte { return call("wai_fs_read", req) }

// FSWrite calls wai_fs_write.
func FSWrite(req []byte) []byte { return call("wai_fs_write", req) }

// FSEdit calls wai_fs_edit.
func FSEdit(req []byte) []byte { return call("wai_fs_edit", req) }

// FSGlob calls wai_fs_glob.
func FSGlob(req []byte) []byte { return call("wai_fs_glob", req) }

// FSGrep calls wai_fs_grep.
func FSGrep(req []byte) []byte { return call("wai_fs_grep", req) }

// FSRemove calls wai_fs_remove.
func FSRemove(req []byte) []byte { return call("wai_fs_remove", req) }

// LifecycleStart calls wai_lifecycle_start.
func LifecycleStart(req []byte) []byte { return call("wai_lifecycle_start", req) }

// LifecycleStop calls wai_lifecycle_stop.
func LifecycleStop(req []byte) []byte { return call("wai_lifecycle_stop", req) }

// LifecycleState calls wai_lifecycle_state.
func LifecycleState(req []byte) []byte { return call("wai_lifecycle_state", req) }

// Containers calls wai_containers.
func Containers(req []byte) []byte { return call("wai_containers", req) }

// Log calls wai_log.
func Log(req []byte) []byte { return call("wai_log", req) }
