#!/usr/bin/env bash
# Installs the pinned TypeScript SDK (package-lock.json) into node_modules,
# once: a second run with the lock unchanged does nothing.
set -euo pipefail
cd "$(dirname "$0")"
# Two tests (or two test binaries) may install at once; npm ci removes and
# rewrites node_modules, so the second waits for the first, then finds the
# stamp. The lock is this script itself: nothing new to clean up.
exec 9<"$(basename "$0")"
flock 9
stamp=node_modules/.wai-lock-sha
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
	exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > "$stamp"
