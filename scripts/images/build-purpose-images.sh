#!/usr/bin/env bash
# build-purpose-images.sh — build the purpose images localhost/wai-PURPOSE:HASH
# (HASH: the recipe hash, as `wai image build PURPOSE` names them) from the
# recipes in this directory, each only when no image of its current recipe
# exists, so a second run takes a second. Run as root by
# scripts/setup-podman.sh (step 3b); the containers tests create from them.
#
#   build-purpose-images.sh [PURPOSE...]   default: $WAI_SETUP_IMAGES, else
#                                          node go rust general
# The python image is built by setup-podman.sh itself (it is also the
# session image) and tagged with its hash there.
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=recipe.sh
source "$DIR/recipe.sh"

log() { printf 'setup-podman: %s\n' "$*" >&2; }
die() { printf 'setup-podman: ERROR: %s\n' "$*" >&2; exit 1; }

# What each image must run: its tool chain, and git (try-repo unpacks
# repositories with tar and works on them with git).
declare -A CHECK=(
	[node]='node -e "process.exit(0)" && npm --version'
	[go]='go version'
	[rust]='cargo --version && rustc --version && cc --version'
	[general]='cc --version && make --version'
	[python]='python3 -m pytest --version'
)

mirror="${WAI_DEBIAN_MIRROR:-}"
if [[ -z "$mirror" ]]; then
	mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -Eo '(https?)://[^ ]+/debian/?( |$)' | grep -v security | head -n1 | tr -d ' ' || true)"
	mirror="${mirror:-http://deb.debian.org/debian}"
fi

build_one() { # purpose
	local purpose="$1" recipe="$DIR/wai-$1.packages" hash image tmp have
	[[ -r "$recipe" ]] || die "no recipe $recipe (purposes: $(cd "$DIR" && ls wai-*.packages | sed 's/^wai-//; s/\.packages$//' | tr '\n' ' '))"
	recipe_load "$recipe" || die "recipe $recipe is invalid"
	hash="$(recipe_hash)"
	image="localhost/wai-$purpose:$hash"
	have="$(podman image inspect --format '{{index .Labels "wai.recipe"}}' "$image" 2>/dev/null || true)"
	if [[ "$have" == "$hash" ]]; then
		log "image $image present"
		return
	fi
	log "building $image (${#RECIPE_PACKAGES[@]} packages) with mmdebstrap from $mirror"
	local start=$SECONDS
	tmp="$(mktemp -d /var/tmp/wai-image.XXXXXX)"
	# The same flags as plugins/podman/images_build.go (mmdebstrapArgs).
	if ! mmdebstrap --quiet --variant="$RECIPE_VARIANT" --include="$(IFS=,; printf '%s' "${RECIPE_PACKAGES[*]}")" \
		--aptopt='APT::Install-Recommends "false"' \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
		"$RECIPE_SUITE" "$tmp/rootfs.tar" "$mirror" 2>"$tmp/mmdebstrap.log"; then
		tail -n 20 "$tmp/mmdebstrap.log" >&2
		rm -rf "$tmp"
		die "mmdebstrap failed for $purpose: check that $mirror is reachable, or set WAI_DEBIAN_MIRROR"
	fi
	local changes=() c
	for c in "${RECIPE_CHANGES[@]}" "LABEL wai.recipe=$hash" "LABEL wai.purpose=$purpose"; do changes+=(--change "$c"); done
	podman import "${changes[@]}" --message "wai image build $purpose" "$tmp/rootfs.tar" "$image" >/dev/null 2>"$tmp/import.log" ||
		{ cat "$tmp/import.log" >&2; rm -rf "$tmp"; die "podman import of $image failed"; }
	rm -rf "$tmp"
	if ! out="$(podman run --rm --network none "$image" sh -c "git --version >/dev/null && ${CHECK[$purpose]:-true}" 2>&1)"; then
		podman rmi -f "$image" >/dev/null 2>&1 || true
		die "image $image failed its check: $out"
	fi
	log "built $image in $((SECONDS - start)) s"
}

purposes=("$@")
if ((${#purposes[@]} == 0)); then
	read -r -a purposes <<<"${WAI_SETUP_IMAGES:-node go rust general}"
fi
for p in "${purposes[@]}"; do build_one "$p"; done
