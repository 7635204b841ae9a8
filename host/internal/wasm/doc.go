// Package wasm runs wai's WebAssembly plugins — tool handlers and
// command-validation policies — on Extism over wazero, speaking the JSON
// ABI of docs/ABI.md.
//
// A Runtime compiles each plugin once (wazero's on-disk compilation cache
// makes later processes start fast) and keeps a pool of instances per
// plugin: one call per instance at a time, the pool growing to a cap and
// blocking (with the caller's context) beyond it. Guests get no WASI
// preopens, no network and capped memory; the call's deadline interrupts
// guest code, and an instance that timed out or trapped is thrown away.
//
// Host functions reach the world only through the Env of the call, which
// the kernel builds per call already guarded by limits and policies: this
// package enforces capability grants and bounds, not policy. A plugin that
// imports a host function whose capability it was not granted does not
// load.
package wasm
