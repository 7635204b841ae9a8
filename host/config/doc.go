// Package config maps wai.toml onto the kernel's configuration.
//
// The kernel (package host) reads a host.Config built in code; this package
// is the file format around it, for the CLI and anyone who wants wai's
// file: TOML decoding over the defaults, unknown keys refused with their
// line and the key most likely meant, the [mcp] table `wai serve` reads,
// where the bundled plugins are looked for, and InspectPlugin for `wai
// plugin inspect`. An embedder that builds its Config in Go does not link
// the TOML parser.
//
// Where a file is looked for and the defaults the environment decides
// ($XDG_CONFIG_HOME, $HOME, $WAI_PLUGIN_DIR, $XDG_CACHE_HOME, ./wai.toml,
// ./build/plugins) come from an Env: Load uses the process's, LoadIn the
// one it is given, so one process can load configurations for several
// callers (tests of the CLI, in parallel) without changing its own
// environment or working directory.
package config
