#!/usr/bin/env bash
# setup-podman.sh — prepare this machine for wai's Podman backend.
#
# Idempotent; run as root on Debian/Ubuntu. Steps:
#   1. install podman, runc, catatonit, mmdebstrap, uidmap (only if missing)
#   2. containers.conf drop-in: exec cleanup delay; pin runc / clamp default
#      rlimits (only if needed)
#   3. build the default image localhost/wai-python:bookworm from Debian
#      packages (only if missing, or built from an older recipe); 3b. the
#      purpose images localhost/wai-PURPOSE:HASH (python is the same image;
#      node, go, rust, general: scripts/images/build-purpose-images.sh)
#   4. start a Podman API service on unix:///run/podman/podman.sock (only if
#      nothing answers there)
#   5. verify a hardened `podman run` end to end, locally and via the service
#   6. on CI (CI=true) or with WAI_SETUP_SSHD=1 only: start the loopback
#      test sshd of scripts/setup-sshd.sh for the ssh:// tests
# A second run changes nothing and takes about a second.
#
# Environment overrides:
#   WAI_PODMAN_SOCKET   socket path      (default /run/podman/podman.sock)
#   WAI_PODMAN_IMAGE    test image name  (default localhost/wai-python:bookworm)
#   WAI_PODMAN_EXIT_COMMAND_DELAY  seconds an exited API exec session is kept
#                       (default 30; podman's own default is 300)
#   WAI_SETUP_IMAGES    purpose images to build in step 3b (default
#                       "node go rust general"; "" builds none)
#   WAI_DEBIAN_MIRROR   Debian mirror for mmdebstrap (default: from apt
#                       sources if they name a Debian mirror, else
#                       http://deb.debian.org/debian)
set -euo pipefail

SOCK="${WAI_PODMAN_SOCKET:-/run/podman/podman.sock}"
IMAGE="${WAI_PODMAN_IMAGE:-localhost/wai-python:bookworm}"
DROPIN=/etc/containers/containers.conf.d/50-wai.conf
SERVICE_LOG=/var/log/wai-podman-service.log
SERVICE_PID=/run/wai-podman-service.pid
PING_URL=http://d/v4.0.0/libpod/_ping

log() { printf 'setup-podman: %s\n' "$*" >&2; }
die() {
	printf 'setup-podman: ERROR: %s\n' "$1" >&2
	shift
	local hint
	for hint in "$@"; do printf 'setup-podman:   -> %s\n' "$hint" >&2; done
	exit 1
}

# ---------------------------------------------------------------- preflight
[[ "$(id -u)" == 0 ]] || die "must run as root (it installs packages, writes /etc/containers and starts the rootful Podman service)" \
	"re-run as: sudo $0"
[[ "$(uname -s)" == Linux ]] || die "Linux only (found $(uname -s))"

# ------------------------------------------------------------- 1. packages
# Needed: podman (pulls conmon, containers-common, CNI plugins), runc (crun
# cannot run on cgroup v1/hybrid hosts, see step 2), catatonit (podman --init),
# mmdebstrap + debian-archive-keyring (build the image without a registry),
# uidmap (newuidmap/newgidmap, for rootless use of the same host), curl
# (health check of the API socket), crun (not used by wai here, but `wai
# preflight` and its test check the advice given when podman picks crun on a
# cgroup v1/hybrid host, so the test needs the real binary), e2fsprogs,
# util-linux and mount (mkfs.ext4, losetup, mount: size-limited workspaces),
# git (the dotfiles test builds a repository on the host for a container to
# clone through a mount), netavark + aardvark-dns (networks agents create:
# containers on one reach each other by name, internal ones included —
# CNI's dnsname plugin refuses internal networks, see step 2 (d)), iproute2
# (ip: drops idle CNI bridges).
# Not needed:
# slirp4netns and fuse-overlayfs — wai runs rootful with --network none on
# native overlayfs.
PACKAGES=(podman runc crun catatonit mmdebstrap debian-archive-keyring uidmap curl e2fsprogs util-linux mount git
	netavark aardvark-dns iproute2)

pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
	for p in "${PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
else
	for b in podman runc crun catatonit mmdebstrap curl mkfs.ext4 losetup mount git; do
		command -v "$b" >/dev/null 2>&1 || missing+=("$b")
	done
fi
if ((${#missing[@]})); then
	command -v apt-get >/dev/null 2>&1 || die "missing: ${missing[*]}; apt-get not found" \
		"install them with your distribution's package manager, then re-run"
	log "installing ${missing[*]} (apt-get)"
	apt_log="$(mktemp /tmp/wai-setup-podman-apt.XXXXXX)"
	export DEBIAN_FRONTEND=noninteractive
	# --no-install-recommends: podman recommends buildah, dbus-user-session,
	# slirp4netns, fuse-overlayfs, … none of which wai uses.
	if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1; then
		tail -n 20 "$apt_log" >&2
		die "apt-get failed (full log: $apt_log)" \
			"check network access to the apt mirror and /etc/apt/sources.list*, then re-run"
	fi
	rm -f "$apt_log"
else
	log "packages present"
fi

# Node.js and npm: cmd/wai's MCP tests drive `wai serve` with the official
# TypeScript SDK client (tests/mcp-ts, installed by npm ci from its lock).
# Checked by command, not package: a machine may have Node.js from
# elsewhere (NodeSource's nodejs carries npm), and Debian's npm would
# conflict with it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	command -v apt-get >/dev/null 2>&1 || die "node or npm missing; apt-get not found" \
		"install Node.js 18 or newer with npm, then re-run"
	log "installing nodejs npm (apt-get)"
	apt_log="$(mktemp /tmp/wai-setup-podman-apt.XXXXXX)"
	if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm; } >"$apt_log" 2>&1; then
		tail -n 20 "$apt_log" >&2
		die "apt-get failed to install nodejs npm (full log: $apt_log)" \
			"check network access to the apt mirror, then re-run"
	fi
	rm -f "$apt_log"
fi
for b in podman runc crun conmon curl mmdebstrap mkfs.ext4 losetup mount; do
	command -v "$b" >/dev/null 2>&1 || die "$b not on PATH after install"
done
[[ -x /usr/libexec/podman/catatonit || -x /usr/bin/catatonit ]] ||
	die "catatonit not found; podman --init needs it" "apt-get install catatonit"

# ----------------------------------------------- 2. containers.conf drop-in
# Two host quirks, each fixed only when present, plus one tuning:
#
# (a) crun 1.8 (Debian 12) refuses cgroup v1/hybrid hosts ("cgroups in hybrid
#     mode not supported, drop all controllers from cgroupv2"), and podman
#     prefers crun whenever it is installed. runc works on v1, hybrid and v2,
#     so pin it unless the host is pure cgroup v2 and crun is there.
#
# (b) Without CAP_SYS_RESOURCE (sandboxed root, e.g. this VM) a container's
#     rlimits cannot exceed the hard limits podman itself runs with. podman
#     4.3 defaults nofile and nproc to 1048576 / 4194304 for rootful
#     containers, so a plain `podman run` fails with "error setting rlimit
#     type 7 (6): operation not permitted". podman also lowers its own nproc
#     hard limit to kernel.pid_max, so the usable maximum is
#     min(hard nproc, pid_max). Set default_ulimits to those maxima so plain
#     `podman run` works. NOTE: an explicit --ulimit (or specgen Rlimits over
#     the API) replaces default_ulimits entirely, and podman then fills the
#     unnamed one of nofile/nproc with its too-high default — so callers
#     (wai included) must always pass BOTH nofile and nproc explicitly.
cgroup_fs="$(stat -fc %T /sys/fs/cgroup 2>/dev/null || echo unknown)"
need_runc=0
if ! command -v crun >/dev/null 2>&1 || [[ "$cgroup_fs" != cgroup2fs ]]; then
	need_runc=1
fi

hard_limit() { # ulimit flag -> number ("unlimited" -> 0)
	local v
	v="$(ulimit -H "$1")"
	[[ "$v" == unlimited ]] && v=0
	printf '%s' "$v"
}
max_nofile="$(hard_limit -n)"
max_nproc="$(hard_limit -u)"
pid_max="$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 0)"
if ((pid_max > 0 && (max_nproc == 0 || pid_max < max_nproc))); then max_nproc=$pid_max; fi
# podman's nproc default when nothing is requested
((max_nproc == 0)) && max_nproc=4194304
((max_nofile == 0)) && max_nofile=1048576

# (c) Every API exec session keeps its conmon process alive for
#     engine.exit_command_delay seconds (default 300, "mimics Docker's exec
#     cleanup") before the session is cleaned up: measured ~1.6 MB RSS each,
#     so 400 execs in 5 minutes left 400 conmons (~630 MB) behind. wai reads
#     the exit code (ExecInspect) right after the attach returns, so a short
#     delay is enough. Always set.
EXIT_COMMAND_DELAY="${WAI_PODMAN_EXIT_COMMAND_DELAY:-30}"
[[ "$EXIT_COMMAND_DELAY" =~ ^[0-9]+$ ]] || die "WAI_PODMAN_EXIT_COMMAND_DELAY must be a number of seconds"

cap_eff="$(awk '/^CapEff:/ {print $2}' /proc/self/status)"
need_ulimits=0
if (((0x$cap_eff >> 24) & 1)); then :; else need_ulimits=1; fi # bit 24 = CAP_SYS_RESOURCE

want="# Managed by wai scripts/setup-podman.sh (regenerated when it runs).

[engine]
# API exec sessions (and their conmon) linger this long after exiting.
exit_command_delay = $EXIT_COMMAND_DELAY
"
if ((need_runc)); then
	want+="# crun refuses cgroup v1/hybrid hosts (cgroup fs here: $cgroup_fs); runc works.
runtime = \"runc\"
"
fi
if ((need_ulimits)); then
	want+="
# No CAP_SYS_RESOURCE: container rlimits must stay <= podman's hard limits.
[containers]
default_ulimits = [
  \"nofile=$max_nofile:$max_nofile\",
  \"nproc=$max_nproc:$max_nproc\",
]
"
fi

# (d) Networks agents create (create_network) are internal unless config
#     allows egress, and containers on them find each other by name. With
#     CNI, podman 4.3 drops the dnsname plugin from internal networks;
#     netavark + aardvark-dns resolve names on internal networks too. podman
#     keeps using CNI on a machine that had images before netavark was
#     installed (it records the choice in its storage), so say it here.
want+="
# Name resolution on internal networks needs netavark + aardvark-dns.
[network]
network_backend = \"netavark\"
"
prev_backend="$(podman info --format '{{.Host.NetworkBackend}}' 2>/dev/null || true)"

conf_changed=0
have=""
[[ -f "$DROPIN" ]] && have="$(cat "$DROPIN")"
if [[ "$have" != "${want%$'\n'}" ]]; then
	mkdir -p "$(dirname "$DROPIN")"
	printf '%s' "$want" >"$DROPIN.tmp"
	mv -f "$DROPIN.tmp" "$DROPIN"
	conf_changed=1
	log "wrote $DROPIN (runc=$need_runc, ulimits=$need_ulimits: nofile=$max_nofile nproc=$max_nproc, exit_command_delay=$EXIT_COMMAND_DELAY)"
else
	log "$DROPIN up to date"
fi

# Switching from CNI: containers attached to CNI networks cannot be torn
# down by netavark (recreate them), and CNI's idle bridges keep the default
# network's address (10.88.0.1/16) that netavark's podman0 wants: drop
# them once nothing is attached (on a later run too).
if [[ "$prev_backend" == cni ]] && ((conf_changed)); then
	in_use="$(podman ps -a --format '{{.Names}} {{.Networks}}' 2>/dev/null | awk '$2 != "" && $2 != "none" {print $1}' | tr '\n' ' ')"
	[[ -z "$in_use" ]] || log "WARNING: containers made with the CNI network backend (${in_use% }) must be recreated to have a network"
fi
for br in /sys/class/net/cni-podman*; do
	[[ -d "$br/brif" ]] || continue
	if [[ -z "$(ls -A "$br/brif")" ]]; then
		ip link delete "$(basename "$br")" && log "removed idle CNI bridge $(basename "$br")"
	else
		log "WARNING: CNI bridge $(basename "$br") is still in use; re-run once its containers are gone"
	fi
done
[[ "$(podman info --format '{{.Host.NetworkBackend}}' 2>/dev/null)" == netavark ]] ||
	die "podman does not use the netavark network backend" "check network_backend in /etc/containers/containers.conf{,.d/*}"

runtime="$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>/dev/null)" ||
	die "podman info failed" "run 'podman info' to see why"
log "podman $(podman version --format '{{.Client.Version}}' 2>/dev/null), runtime $runtime, cgroups $cgroup_fs"

# ---------------------------------------------------------- 3. default image
# No image registry is reachable: build Debian with mmdebstrap from the
# recipe in scripts/images/wai-python.packages and import the rootfs
# tarball. The recipe's hash is the image's wai.recipe label, so an image
# built from an older recipe is rebuilt (a test that needs pytest must not
# pass or fail depending on when the machine last built its image).
RECIPE="$(dirname "$0")/images/wai-python.packages"
[[ -r "$RECIPE" ]] || die "image recipe $RECIPE not found" "run this script from a wai checkout"
# The recipe format (packages, @include, @env, @label) and its hash are
# shared with `wai image build` (plugins/podman/recipe.go): see
# scripts/images/embed.go. The hash covers everything that shapes the image:
# suite, variant, packages and the config set at import.
# shellcheck source=images/recipe.sh
source "$(dirname "$0")/images/recipe.sh"
recipe_load "$RECIPE" || die "image recipe $RECIPE is invalid"
IMAGE_PACKAGES=("${RECIPE_PACKAGES[@]}")
IMPORT_CHANGES=("${RECIPE_CHANGES[@]}")
SUITE="$RECIPE_SUITE"
RECIPE_HASH="$(recipe_hash)"

debian_mirror() {
	if [[ -n "${WAI_DEBIAN_MIRROR:-}" ]]; then
		printf '%s' "$WAI_DEBIAN_MIRROR"
		return
	fi
	local m
	# First Debian (not -security) mirror named by apt's sources, one-line or
	# deb822 format; else deb.debian.org.
	m="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -Eo '(https?)://[^ ]+/debian/?( |$)' | grep -v security | head -n1 | tr -d ' ' || true)"
	printf '%s' "${m:-http://deb.debian.org/debian}"
}

image_recipe() { podman image inspect --format '{{index .Labels "wai.recipe"}}' "$IMAGE" 2>/dev/null || true; }
# The purpose label makes it the python purpose image as well (`wai image ls`).
image_purpose() { podman image inspect --format '{{index .Labels "wai.purpose"}}' "$IMAGE" 2>/dev/null || true; }

# What the image must hold, checked once right after building it: the
# commands wai itself runs (sh, sleep, setsid, kill, env) and the ones the
# recipe promises an agent.
IMAGE_CHECK='for b in sh sleep setsid kill grep env cat python3 pip3 pytest git sqlite3 jq make gawk diff patch ps file less tar gzip xz unzip; do
	command -v $b >/dev/null || echo "missing $b"; done
python3 -c "import json, unittest, sqlite3, venv, ensurepip, pytest" || echo "python3 modules missing"
test -r /proc/self/stat && test -r /proc/1/cmdline || echo "cannot read /proc"
echo ok'

if [[ "$(image_recipe)" == "$RECIPE_HASH" && "$(image_purpose)" == python ]]; then
	log "image $IMAGE present (recipe $RECIPE_HASH)"
else
	if podman image exists "$IMAGE"; then
		log "image $IMAGE was built from another recipe ($(image_recipe || true)): rebuilding"
	fi
	mirror="$(debian_mirror)"
	include="$(IFS=,; printf '%s' "${IMAGE_PACKAGES[*]}")"
	log "building $IMAGE (recipe $RECIPE_HASH: ${#IMAGE_PACKAGES[@]} packages) with mmdebstrap from $mirror (~1-2 min)"
	tmpdir="$(mktemp -d /var/tmp/wai-image.XXXXXX)"
	trap 'rm -rf "$tmpdir"' EXIT
	# Write to a file first (not a pipe) so a failed mmdebstrap can never
	# leave a truncated image behind. Recommends stay out (minbase), and apt
	# lists and caches are dropped: the image is for running code, and the
	# sandbox has no network to install anything with.
	if ! mmdebstrap --quiet --variant="$RECIPE_VARIANT" --include="$include" \
		--aptopt='APT::Install-Recommends "false"' \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
		"$SUITE" "$tmpdir/rootfs.tar" "$mirror" 2>"$tmpdir/mmdebstrap.log"; then
		tail -n 20 "$tmpdir/mmdebstrap.log" >&2
		die "mmdebstrap failed" "check that $mirror is reachable, or set WAI_DEBIAN_MIRROR=<debian mirror URL>"
	fi
	changes=()
	for c in "${IMPORT_CHANGES[@]}" "LABEL wai.recipe=$RECIPE_HASH" "LABEL wai.purpose=python"; do changes+=(--change "$c"); done
	podman import "${changes[@]}" "$tmpdir/rootfs.tar" "$IMAGE" >/dev/null 2>"$tmpdir/import.log" || {
		cat "$tmpdir/import.log" >&2
		die "podman import failed"
	}
	rm -rf "$tmpdir"
	trap - EXIT
	out="$(podman run --rm --network none --ulimit "nofile=1024:1024" --ulimit "nproc=$max_nproc:$max_nproc" \
		"$IMAGE" sh -c "$IMAGE_CHECK" 2>&1)" || true
	[[ "$out" == ok ]] || {
		podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
		die "image $IMAGE failed its sanity check: $out"
	}
	[[ "$(image_recipe)" == "$RECIPE_HASH" ]] || die "image $IMAGE lacks its wai.recipe label after import"
	log "built $IMAGE ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes)"
	# Images of older recipes are now untagged: drop them (never one in use).
	podman image prune -f --filter label=wai.recipe >/dev/null 2>&1 || true
fi

# ------------------------------------------------------ 3b. purpose images
# The same image is the python purpose image, by the name `wai image build
# python` gives it; the others are built from their recipes, each only when
# no image of its current recipe exists (a second run takes a second).
podman tag "$IMAGE" "localhost/wai-python:$RECIPE_HASH"
if [[ -n "${WAI_SETUP_IMAGES-node go rust general}" ]]; then
	"$(dirname "$0")/images/build-purpose-images.sh"
fi

# ----------------------------------------------------------- 4. API service
ping_ok() { [[ "$(curl -s -m 2 --unix-socket "$SOCK" "$PING_URL" 2>/dev/null)" == OK ]]; }

our_service_pid() { # prints the pid of the service this script started, if alive
	local pid
	[[ -f "$SERVICE_PID" ]] || return 1
	pid="$(cat "$SERVICE_PID")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "system service" || return 1
	printf '%s' "$pid"
}

# The service reads containers.conf only at start: restart ours if the
# drop-in just changed.
if ((conf_changed)) && pid="$(our_service_pid)"; then
	log "restarting Podman service (pid $pid) to pick up $DROPIN"
	kill "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$SERVICE_PID"
elif ((conf_changed)) && ping_ok; then
	log "WARNING: a Podman service not started by this script answers on $SOCK; restart it to apply $DROPIN"
fi

# conmon inherits the service's working directory and fails ("Failed to get
# working directory", then "write child: broken pipe") once that directory
# is deleted — as happens when the service was started from a CI checkout
# that is gone now. Restart ours from / in that case.
if pid="$(our_service_pid)" && [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == *"(deleted)" ]]; then
	log "restarting Podman service (pid $pid): its working directory was deleted, which breaks conmon"
	kill "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$SERVICE_PID"
fi

if ping_ok; then
	log "Podman service answers on unix://$SOCK"
else
	mkdir -p "$(dirname "$SOCK")"
	# A socket file left behind by a dead service would make the bind fail.
	[[ -S "$SOCK" ]] && rm -f "$SOCK"
	log "starting Podman service on unix://$SOCK (log $SERVICE_LOG)"
	# No systemd here (podman.socket is unusable): run it detached in its own
	# session so it outlives this script; --time=0 disables the idle timeout.
	# It starts from /, a directory that cannot be deleted under it.
	(cd / && exec setsid nohup podman system service --time=0 "unix://$SOCK") \
		</dev/null >>"$SERVICE_LOG" 2>&1 &
	echo $! >"$SERVICE_PID"
	for _ in $(seq 100); do
		ping_ok && break
		kill -0 "$(cat "$SERVICE_PID")" 2>/dev/null || break
		sleep 0.2
	done
	ping_ok || {
		tail -n 20 "$SERVICE_LOG" >&2
		die "Podman service did not answer on $SOCK within 20 s" "see $SERVICE_LOG"
	}
	log "Podman service up (pid $(cat "$SERVICE_PID"))"
fi

# ---------------------------------------------------------------- 5. verify
# The hardened flags wai uses. --ulimit nproc is required in addition to
# nofile: see (b) above — with only nofile given podman sets nproc=4194304,
# which runc cannot apply without CAP_SYS_RESOURCE.
RUN_FLAGS=(--rm --init --user 65534:65534 --network none --read-only --cap-drop all
	--security-opt no-new-privileges --memory 1g --memory-swap 1g --cpus 1 --pids-limit 256
	--ulimit nofile=1024:1024 --ulimit "nproc=$max_nproc:$max_nproc")
want_out=$'65534\n1'
verify() { # label, podman args...
	local label="$1" out
	shift
	out="$("$@" run "${RUN_FLAGS[@]}" "$IMAGE" sh -c 'id -u; python3 -c "print(1)"' 2>&1)" || true
	[[ "$out" == "$want_out" ]] || die "hardened podman run ($label) failed; output:
$out" "see the comments in $0 for known host quirks; 'podman info' shows runtime and cgroup setup"
}
verify local podman
verify "via unix://$SOCK" podman --remote --url "unix://$SOCK"
log "OK: hardened podman run works (local and via unix://$SOCK)"

# ------------------------------------------------- 6. test sshd (loopback)
# The ssh:// tests (plugins/podman/remote_test.go) reach this service
# through a loopback-only sshd with a key of its own; see that script. Only
# for testing: an operator's machine gets no extra sshd from this script
# (the tests start it themselves when run as root).
if [[ "${WAI_SETUP_SSHD:-}" == 1 || ( -z "${WAI_SETUP_SSHD:-}" && "${CI:-}" == true ) ]]; then
	"$(dirname "$0")/setup-sshd.sh"
fi
