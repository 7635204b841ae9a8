#!/usr/bin/env bash
# demo.sh — wai's main job end to end (what `make demo` runs):
#   1. build bin/wai (with the Podman backend), the bundled plugins and the
#      scripted agent bin/wai-demo
#   2. set up Podman with scripts/setup-podman.sh (as root); where that
#      cannot be done, fall back to the host backend with a loud notice
#   3. bin/wai-demo starts `wai serve` and drives it over MCP, printing a
#      transcript: write a Python project, a failing test run, read and fix,
#      a passing run, a command the policy blocks, a runaway killed by its
#      timeout
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
GOTAGS="${GOTAGS:-remote exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp}"
IMAGE="${WAI_PODMAN_IMAGE:-localhost/wai-python:bookworm}"
DIR=build/demo

# Bold and red on a terminal only: a log file gets plain text.
bold="" red="" off=""
if [[ -t 2 ]]; then bold=$'\033[1m' red=$'\033[1;31m' off=$'\033[0m'; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$off" >&2; }
loud() {
	local bar="################################################################################"
	printf '\n%s%s\n' "$red" "$bar" >&2
	printf '# %s\n' "$@" >&2
	printf '%s%s\n\n' "$bar" "$off" >&2
}

step "building wai, the plugins and the demo agent (the first build takes a few minutes)"
make --no-print-directory bin/wai plugins GO="$GO" GOTAGS="$GOTAGS" >&2
"$GO" build -o bin/wai-demo ./cmd/wai-demo

mkdir -p "$DIR"
config="$DIR/wai.toml"
write_config() {
	{
		echo "backend = \"$1\""
		echo "bundled_tools = [\"shell\", \"vfs\"]"
		printf '\n[backends.podman]\nimage = "%s"\n' "$IMAGE"
	} >"$config"
}
write_config podman

backend=podman
why=""
if [[ "$(id -u)" == 0 ]]; then
	step "setting up Podman (scripts/setup-podman.sh)"
	if ! bash scripts/setup-podman.sh >&2; then
		backend=host
		why="scripts/setup-podman.sh could not set Podman up (its output above says why)"
	fi
fi
if [[ $backend == podman ]]; then
	step "checking Podman (wai preflight)"
	if ! bin/wai preflight --config "$config" >&2; then
		backend=host
		why="the Podman preflight failed (above says what to fix)"
		[[ "$(id -u)" == 0 ]] || why="$why; not root, so scripts/setup-podman.sh was not run"
	fi
fi
write_config "$backend"

if [[ $backend == host ]]; then
	loud "FALLBACK: the demo runs on the HOST backend, NOT SANDBOXED." \
		"Reason: $why." \
		"Commands run as $(id -un) in a workspace directory on this machine." \
		"Run 'sudo make demo' on Debian (or scripts/setup-podman.sh as root) for the Podman sandbox."
else
	step "Podman is ready: every command runs in a hardened container ($IMAGE)"
fi

step "the agent session (bin/wai-demo → wai serve over MCP stdio, backend $backend)"
WAI_PLUGIN_DIR="$PWD/build/plugins" bin/wai-demo -wai bin/wai -- --config "$config"
