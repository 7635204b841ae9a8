// Package depcheck enforces the dependency rules of docs/ARCHITECTURE.md ("Layout and
// who may import whom") on the module's real import graph, as `go list`
// reports it for every platform the code is built for.
//
// The rules are what keep wai's promises true: an embedder that needs no
// Podman links no Podman code, a backend cannot reach around the kernel, and
// a Wasm plugin depends on nothing but the pdk. They are checked by a test
// (and `make deps`) rather than by review because a single stray import
// breaks them silently.
//
// Only non-test imports are checked: a test may wire any packages together.
package depcheck

import (
	"slices"
	"strings"
)

// dep classifies one dependency of a local package.
type dep struct {
	path  string
	rel   string // path inside the module when local, "." for the root
	local bool
	std   bool
}

type rule struct {
	// text says the rule as docs/ARCHITECTURE.md does, so a violation explains itself.
	text    string
	applies func(rel string) bool
	// transitive rules look at every dependency; the others at direct
	// imports only, because those rules also govern every local package
	// that could be imported, so the closure follows.
	transitive bool
	allowed    func(from string, d dep) bool
}

// under reports whether rel is dir or inside it.
func under(rel, dir string) bool {
	return rel == dir || strings.HasPrefix(rel, dir+"/")
}

// hasModule reports whether path is the package mod or one inside it.
func hasModule(path, mod string) bool { return path == mod || strings.HasPrefix(path, mod+"/") }

// topTwo returns the first two segments of rel ("plugins/host/x" →
// "plugins/host"): the unit a plugin, tool or policy is.
func topTwo(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 2 {
		return rel
	}
	return parts[0] + "/" + parts[1]
}

// isKernel: host itself or any of its subpackages except the contracts.
func isKernel(rel string) bool {
	return under(rel, "host") && !under(rel, "host/backend")
}

const (
	tomlMod    = "github.com/BurntSushi/toml"
	mcpSDK     = "github.com/modelcontextprotocol/go-sdk"
	goPDK      = "github.com/extism/go-pdk"
	podmanMods = "github.com/containers/"
	// shellParser is the one library policies may import besides pdk.
	shellParser = "mvdan.cc/sh/v3/"
	// k8sMods are the Kubernetes libraries; k8sAPI and k8sMachinery the two
	// the kubernetes backend imports directly (API types, not a client yet).
	k8sMods      = "k8s.io/"
	k8sAPI       = "k8s.io/api/"
	k8sMachinery = "k8s.io/apimachinery/"
)

// sharedHelpers are the small internal packages every part of wai may
// import (each says why in its doc comment).
var sharedHelpers = []string{"internal/atomicfile", "internal/syncbuf", "internal/jobring", "internal/pipedrain"}

var rules = []rule{
	{
		text:    "host/backend imports only the standard library",
		applies: func(rel string) bool { return under(rel, "host/backend") },
		allowed: func(_ string, d dep) bool { return d.std || d.local && under(d.rel, "host/backend") },
	},
	{
		text:       "host never imports plugins/*, cmd/* or sdk-tests/*: backends register themselves, the kernel only knows host/backend",
		applies:    func(rel string) bool { return under(rel, "host") },
		transitive: true,
		allowed: func(_ string, d dep) bool {
			return !d.local || !(under(d.rel, "plugins") || under(d.rel, "cmd") || under(d.rel, "sdk-tests"))
		},
	},
	{
		text:       "plugins/* import host/backend, never host and never each other",
		applies:    func(rel string) bool { return under(rel, "plugins") },
		transitive: true,
		allowed: func(from string, d dep) bool {
			if !d.local {
				return true
			}
			switch {
			case isKernel(d.rel), under(d.rel, "cmd"):
				return false
			case under(d.rel, "plugins"):
				return topTwo(d.rel) == topTwo(from)
			}
			return true
		},
	},
	{
		text: "the kernel (host, host/internal/*) links neither the TOML parser nor the MCP SDK, nor host/config or host/mcpserver: " +
			"wai.toml is mapped onto host.Config by host/config, so an embedder that builds its Config in code links no file format",
		applies:    func(rel string) bool { return rel == "host" || under(rel, "host/internal") },
		transitive: true,
		allowed: func(_ string, d dep) bool {
			if d.local {
				return !under(d.rel, "host/config") && !under(d.rel, "host/mcpserver")
			}
			return !hasModule(d.path, tomlMod) && !hasModule(d.path, mcpSDK)
		},
	},
	{
		text: "the one-of-each helpers (internal/atomicfile, internal/syncbuf, internal/jobring, internal/pipedrain) import only the standard library: " +
			"the kernel, the backends and their tests all import them, so they may depend on none of them",
		applies: func(rel string) bool {
			return slices.ContainsFunc(sharedHelpers, func(h string) bool { return under(rel, h) })
		},
		allowed: func(_ string, d dep) bool { return d.std },
	},
	{
		text: "wai-agent (cmd/wai-agent, internal/agent, internal/agentproto, internal/agentfs) imports only the standard library, " +
			"its own packages, the shared helpers and host/backend with host/backend/rootfs: it is a small static binary in every container, and it serves " +
			"the workspace's files with the host's own confined filesystem, so both sides confine them the same way",
		applies: func(rel string) bool {
			return under(rel, "cmd/wai-agent") || under(rel, "internal/agent") || under(rel, "internal/agentproto") || under(rel, "internal/agentfs")
		},
		transitive: true,
		allowed: func(_ string, d dep) bool {
			return d.std || d.local && (under(d.rel, "internal/agent") || under(d.rel, "internal/agentproto") ||
				under(d.rel, "internal/agentfs") || under(d.rel, "host/backend") ||
				slices.ContainsFunc(sharedHelpers, func(h string) bool { return under(d.rel, h) }))
		},
	},
	{
		text:    "pdk imports only the standard library and github.com/extism/go-pdk",
		applies: func(rel string) bool { return under(rel, "pdk") },
		allowed: func(_ string, d dep) bool {
			return d.std || d.local && under(d.rel, "pdk") || !d.local && (d.path == goPDK || strings.HasPrefix(d.path, goPDK+"/"))
		},
	},
	{
		text:    "tools/* and policies/* import only pdk, their own subpackages, their tree's internal/ packages and the standard library (policies also the shell parser mvdan.cc/sh/v3)",
		applies: func(rel string) bool { return under(rel, "tools") || under(rel, "policies") },
		allowed: func(from string, d dep) bool {
			// tools/internal/... (policies/internal/...) is code shared
			// within one tree; this same rule governs it, so the closure
			// still reaches nothing but pdk and the standard library.
			tree, _, _ := strings.Cut(from, "/")
			if tree == "policies" && !d.local && strings.HasPrefix(d.path, shellParser) {
				return true // policies see commands as the shell does (docs/ARCHITECTURE.md)
			}
			return d.std || d.local && (under(d.rel, "pdk") || topTwo(d.rel) == topTwo(from) || under(d.rel, tree+"/internal"))
		},
	},
	{
		text:       "sdk-tests import host/backend (abitest may import host), never a backend or the CLI: the backend under test is handed in",
		applies:    func(rel string) bool { return under(rel, "sdk-tests") },
		transitive: true,
		allowed: func(from string, d dep) bool {
			if !d.local {
				return true
			}
			switch {
			case under(d.rel, "plugins"), under(d.rel, "cmd"):
				return false
			case isKernel(d.rel):
				return under(from, "sdk-tests/abitest")
			}
			return true
		},
	},
	{
		text:       "only plugins/podman (and the CLI that links it) may depend on the Podman bindings: an embedder that needs no Podman links no Podman code",
		applies:    func(rel string) bool { return !under(rel, "plugins/podman") && !under(rel, "cmd") },
		transitive: true,
		allowed:    func(_ string, d dep) bool { return d.local || !strings.HasPrefix(d.path, podmanMods) },
	},
	{
		text:       "only plugins/kubernetes (and the CLI that links it) may depend on the Kubernetes libraries (k8s.io/...): an embedder that needs no Kubernetes links none",
		applies:    func(rel string) bool { return !under(rel, "plugins/kubernetes") && !under(rel, "cmd") },
		transitive: true,
		allowed:    func(_ string, d dep) bool { return d.local || !strings.HasPrefix(d.path, k8sMods) },
	},
	{
		text:    "plugins/kubernetes imports only the standard library, host/backend, its own packages, k8s.io/api and k8s.io/apimachinery",
		applies: func(rel string) bool { return under(rel, "plugins/kubernetes") },
		allowed: func(_ string, d dep) bool {
			return d.std || d.local && (under(d.rel, "host/backend") || under(d.rel, "plugins/kubernetes")) ||
				!d.local && (strings.HasPrefix(d.path, k8sAPI) || strings.HasPrefix(d.path, k8sMachinery))
		},
	},
}
