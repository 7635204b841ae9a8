#!/usr/bin/env bash
# recipe.sh — read a wai image recipe (format: embed.go in this directory).
#
# Sourced by scripts/setup-podman.sh; run directly it prints what it read:
#   recipe.sh hash FILE       the recipe hash (the image's wai.recipe label)
#   recipe.sh packages FILE   the packages, one per line
#   recipe.sh changes FILE    the config changes applied at import
# plugins/podman/recipe.go implements the same rules; a Go test runs this
# script and compares the hashes, so the two cannot drift apart.

RECIPE_SUITE=bookworm
RECIPE_VARIANT=minbase
# Config every image gets at import, before the recipe's own @env/@label.
RECIPE_BASE_CHANGES=('ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' 'ENV LANG=C.UTF-8' 'CMD ["/bin/sh"]')

# recipe_items FILE [DEPTH]: the recipe's items, @include expanded.
recipe_items() {
	local file="$1" depth="${2:-0}" line
	((depth < 4)) || { echo "recipe: @include nested too deep in $file" >&2; return 1; }
	[[ -r "$file" ]] || { echo "recipe: cannot read $file" >&2; return 1; }
	while IFS= read -r line || [[ -n "$line" ]]; do
		line="${line%%#*}"
		line="$(printf '%s' "$line" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')"
		[[ -n "$line" ]] || continue
		if [[ "$line" == "@include "* ]]; then
			recipe_items "$(dirname "$file")/$(printf '%s' "${line#@include}" | tr -d '[:space:]')" $((depth + 1)) || return 1
		else
			printf '%s\n' "$line"
		fi
	done <"$file"
}

# recipe_load FILE: sets RECIPE_PACKAGES and RECIPE_CHANGES (arrays).
recipe_load() {
	local items item
	items="$(recipe_items "$1")" || return 1
	RECIPE_PACKAGES=()
	RECIPE_CHANGES=("${RECIPE_BASE_CHANGES[@]}")
	while IFS= read -r item; do
		[[ -n "$item" ]] || continue
		case "$item" in
		"@env "*) RECIPE_CHANGES+=("ENV $(printf '%s' "${item#@env}" | sed 's/^[[:space:]]*//')") ;;
		"@label "*) RECIPE_CHANGES+=("LABEL $(printf '%s' "${item#@label}" | sed 's/^[[:space:]]*//')") ;;
		@*) echo "recipe: unknown directive in $1: $item" >&2; return 1 ;;
		*) RECIPE_PACKAGES+=("$item") ;;
		esac
	done <<<"$items"
	((${#RECIPE_PACKAGES[@]})) || { echo "recipe: $1 lists no packages" >&2; return 1; }
}

# recipe_hash: the hash of the loaded recipe.
recipe_hash() {
	printf '%s\n' "$RECIPE_SUITE" "$RECIPE_VARIANT" "${RECIPE_PACKAGES[@]}" "${RECIPE_CHANGES[@]}" | sha256sum | cut -c1-16
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	set -euo pipefail
	[[ $# == 2 ]] || { echo "usage: $0 hash|packages|changes FILE" >&2; exit 2; }
	recipe_load "$2"
	case "$1" in
	hash) recipe_hash ;;
	packages) printf '%s\n' "${RECIPE_PACKAGES[@]}" ;;
	changes) printf '%s\n' "${RECIPE_CHANGES[@]}" ;;
	*) echo "usage: $0 hash|packages|changes FILE" >&2; exit 2 ;;
	esac
fi
