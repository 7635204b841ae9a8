#!/usr/bin/env bash
# setup-wasm-toolchain.sh — install what builds wai's C example plugin
# (examples/c-plugin) for WebAssembly: clang, wasm-ld, wasi-libc and the
# compiler-rt builtins for wasm32, all from Debian's own archive.
#
# Idempotent; run as root on Debian/Ubuntu. A second run checks four files
# and changes nothing. `make test` calls it (when root) so the C plugin's
# test runs instead of skipping.
#
# Environment overrides:
#   WAI_LLVM_VERSION   LLVM major version of the packages (default 14, bookworm's)
set -euo pipefail

V="${WAI_LLVM_VERSION:-14}"
PKGS=("clang-$V" "lld-$V" wasi-libc "libclang-rt-$V-dev-wasm32")

log() { printf 'setup-wasm-toolchain: %s\n' "$*" >&2; }

have() {
	command -v "clang-$V" >/dev/null &&
		command -v "wasm-ld-$V" >/dev/null &&
		[[ -f /usr/lib/wasm32-wasi/libc.a ]] &&
		compgen -G "/usr/lib/llvm-$V/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null
}

if have; then
	exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
	log "not root: install ${PKGS[*]} yourself (apt-get install --no-install-recommends ...)"
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	log "no apt-get: install clang, lld (wasm-ld), wasi-libc and compiler-rt's wasm32 builtins with your package manager"
	exit 1
fi
log "installing ${PKGS[*]}"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PKGS[@]}" >/dev/null; then
	log "install failed; refreshing the package lists once and retrying"
	apt-get update >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PKGS[@]}" >/dev/null
fi
have || { log "installed ${PKGS[*]} but clang-$V, wasm-ld-$V or the wasi sysroot is still missing"; exit 1; }
log "ready: clang-$V --target=wasm32-wasi --sysroot=/usr"
