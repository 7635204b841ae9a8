package wasm

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// Import namespaces a plugin may use.
const (
	nsUser   = "extism:host/user"
	nsEnv    = "extism:host/env"
	nsWASI   = "wasi_snapshot_preview1"
	hostHTTP = "http_request"
)

// hostCaps maps every wai host function to the capability it needs.
var hostCaps = map[string]string{
	"wai_shell_exec":      CapShell,
	"wai_shell_script":    CapShell,
	"wai_shell_which":     CapShell,
	"wai_shell_env":       CapShell,
	"wai_shell_info":      CapShell,
	"wai_fs_stat":         CapFSRead,
	"wai_fs_list":         CapFSRead,
	"wai_fs_read":         CapFSRead,
	"wai_fs_glob":         CapFSRead,
	"wai_fs_grep":         CapFSRead,
	"wai_fs_write":        CapFSWrite,
	"wai_fs_edit":         CapFSWrite,
	"wai_fs_remove":       CapFSWrite,
	"wai_lifecycle_start": CapLifecycle,
	"wai_lifecycle_stop":  CapLifecycle,
	"wai_lifecycle_state": CapLifecycle,
	"wai_containers":      CapContainers,
	"wai_log":             CapLog,
}

var knownCaps = []string{CapShell, CapFSRead, CapFSWrite, CapLifecycle, CapContainers, CapLog}

// capSet is a set of capabilities. It is written once, in Load, before the
// plugin is shared, and only read afterwards.
type capSet map[string]bool

func (c capSet) list() []string {
	return slices.Sorted(maps.Keys(c))
}

func parseCaps(plugin, what string, caps []string) (capSet, error) {
	set := capSet{}
	for _, c := range caps {
		if !slices.Contains(knownCaps, c) {
			return nil, errorf(plugin, "load", backend.ErrInvalid, "%s: unknown capability %q (known: %s)", what, c, strings.Join(knownCaps, ", "))
		}
		set[c] = true
	}
	return set, nil
}

// checkImports refuses imports this host does not offer and returns the
// wai host functions the module imports.
func checkImports(plugin string, info moduleInfo) ([]string, error) {
	var user []string
	for _, imp := range info.funcImports {
		mod, name := imp.module, imp.name
		switch mod {
		case nsUser:
			if _, ok := hostCaps[name]; !ok {
				return nil, errorf(plugin, "load", backend.ErrInvalid,
					"imports %s %q, which this host does not offer (docs/ABI.md lists the host functions of ABI %d)", nsUser, name, ABIVersion)
			}
			user = append(user, name)
		case nsEnv:
			if name == hostHTTP {
				return nil, errorf(plugin, "load", backend.ErrPermission,
					"imports %s %s: wai plugins have no network; reach the world through the shell capability", nsEnv, hostHTTP)
			}
		case nsWASI:
		default:
			return nil, errorf(plugin, "load", backend.ErrInvalid,
				"imports %s.%s: only %s, %s and %s are provided", mod, name, nsUser, nsEnv, nsWASI)
		}
	}
	for _, imp := range info.memoryImports {
		return nil, errorf(plugin, "load", backend.ErrInvalid, "imports memory %s.%s: a plugin must define its own memory", imp.module, imp.name)
	}
	sort.Strings(user)
	return user, nil
}

// grant computes what a plugin may use and refuses it when it imports a
// host function outside that.
func grant(d Description, grants capSet, bundled bool, imports []string) (capSet, error) {
	declared := capSet{}
	for _, c := range d.Capabilities {
		declared[c] = true
	}
	granted := capSet{CapLog: true}
	for c := range declared {
		if bundled || grants[c] {
			granted[c] = true
		}
	}
	for _, fn := range imports {
		c := hostCaps[fn]
		if granted[c] {
			continue
		}
		if !declared[c] {
			return nil, errorf(d.Name, "load", backend.ErrPermission,
				"imports %s, which needs capability %q, but does not declare that capability in wai_describe; the plugin must list it in \"capabilities\"", fn, c)
		}
		return nil, errorf(d.Name, "load", backend.ErrPermission,
			"imports %s, which needs capability %q, not granted: add grants = [%s] under this plugin's [[plugins]] entry in wai.toml", fn, c, quoteList(append(grants.list(), c)))
	}
	return granted, nil
}

func quoteList(caps []string) string {
	sort.Strings(caps)
	caps = slices.Compact(caps)
	q := make([]string, len(caps))
	for i, c := range caps {
		q[i] = fmt.Sprintf("%q", c)
	}
	return strings.Join(q, ", ")
}
