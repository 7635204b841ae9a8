#!/usr/bin/env bash
# setup-sshd.sh — a loopback-only sshd for testing wai against an ssh://
# Podman service.
#
# Idempotent; run as root on Debian/Ubuntu (scripts/setup-podman.sh runs it
# at its end on CI; the tests run it when root and the sshd is down). It never touches the system's sshd: it has its own config,
# host key, client key and pid file in $DIR, listens only on 127.0.0.1:$PORT,
# accepts only root, and only with the key made here (no passwords, no
# keyboard-interactive). Steps:
#   1. install openssh-server if sshd is missing, without starting the
#      system's ssh service
#   2. make $DIR (0700) with a host key, a client key (id_ed25519) and its
#      authorized_keys, an sshd_config, and home/.ssh/known_hosts holding the
#      host key for [127.0.0.1]:$PORT
#   3. start sshd -f $DIR/sshd_config unless ours already answers
#
# The tests (plugins/podman/remote_test.go) connect to
#   ssh://root@127.0.0.1:$PORT/run/podman/podman.sock
# with identity $DIR/id_ed25519 and HOME=$DIR/home, so that the Podman
# bindings check the host key against that known_hosts file and never read
# or write the invoking user's ~/.ssh.
#
# Environment overrides:
#   WAI_TEST_SSHD_DIR   directory of keys and config (default /var/lib/wai-test/ssh)
#   WAI_TEST_SSHD_PORT  loopback port                (default 42722)
set -euo pipefail

DIR="${WAI_TEST_SSHD_DIR:-/var/lib/wai-test/ssh}"
PORT="${WAI_TEST_SSHD_PORT:-42722}"

log() { printf 'setup-sshd: %s\n' "$*" >&2; }
die() {
	printf 'setup-sshd: ERROR: %s\n' "$1" >&2
	shift
	local hint
	for hint in "$@"; do printf 'setup-sshd:   -> %s\n' "$hint" >&2; done
	exit 1
}

[[ "$(id -u)" == 0 ]] || die "must run as root (it installs openssh-server and runs an sshd that logs in root)" "re-run as: sudo $0"
[[ "$PORT" =~ ^[0-9]+$ && "$PORT" != 22 ]] || die "WAI_TEST_SSHD_PORT must be a port number other than 22 (got $PORT)"

# ------------------------------------------------------------- 1. package
SSHD=/usr/sbin/sshd
if [[ ! -x "$SSHD" ]]; then
	command -v apt-get >/dev/null 2>&1 || die "sshd not found and apt-get not available" "install OpenSSH's server, then re-run"
	log "installing openssh-server (apt-get)"
	# The package's postinst starts the system ssh service on port 22 unless
	# a policy-rc.d forbids it. Forbid it for this install only, and only if
	# no policy of the machine's own is in place.
	policy=/usr/sbin/policy-rc.d
	ours=0
	if [[ ! -e "$policy" ]]; then
		printf '#!/bin/sh\n# written by wai setup-sshd.sh for one apt-get run\nexit 101\n' >"$policy"
		chmod 0755 "$policy"
		ours=1
	fi
	apt_log="$(mktemp /tmp/wai-setup-sshd-apt.XXXXXX)"
	export DEBIAN_FRONTEND=noninteractive
	rc=0
	{ apt-get update -q && apt-get install -y -q --no-install-recommends openssh-server; } >"$apt_log" 2>&1 || rc=$?
	((ours)) && rm -f "$policy"
	if ((rc)); then
		tail -n 20 "$apt_log" >&2
		die "apt-get install openssh-server failed (full log: $apt_log)" "check network access to the apt mirror, then re-run"
	fi
	rm -f "$apt_log"
fi
[[ -x "$SSHD" ]] || die "$SSHD missing after installing openssh-server"
command -v ssh-keygen >/dev/null 2>&1 || die "ssh-keygen not found" "apt-get install openssh-client"

# ------------------------------------------------------ 2. keys and config
umask 077
mkdir -p "$DIR" "$DIR/home/.ssh"
chmod 0700 "$DIR" "$DIR/home" "$DIR/home/.ssh"
[[ -f "$DIR/ssh_host_ed25519_key" ]] || ssh-keygen -q -t ed25519 -N '' -C "wai test sshd host key" -f "$DIR/ssh_host_ed25519_key"
[[ -f "$DIR/id_ed25519" ]] || ssh-keygen -q -t ed25519 -N '' -C "wai test client key" -f "$DIR/id_ed25519"
# A second key that the sshd does not accept: the wrong-key test uses it.
[[ -f "$DIR/id_ed25519_unauthorized" ]] || ssh-keygen -q -t ed25519 -N '' -C "wai test key, never authorized" -f "$DIR/id_ed25519_unauthorized"
# Only the test key, and only for forwarding (the Podman bindings open a
# direct-streamlocal channel to the service's socket): no pty, no agent or
# X11 forwarding.
printf 'restrict,port-forwarding %s\n' "$(cat "$DIR/id_ed25519.pub")" >"$DIR/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$DIR/ssh_host_ed25519_key.pub")" >"$DIR/home/.ssh/known_hosts"

cat >"$DIR/sshd_config.tmp" <<EOF
# Managed by wai scripts/setup-sshd.sh (regenerated when it runs).
# A test sshd for ssh:// Podman connections; not the system's sshd.
ListenAddress 127.0.0.1
Port $PORT
HostKey $DIR/ssh_host_ed25519_key
PidFile $DIR/sshd.pid
AuthorizedKeysFile $DIR/authorized_keys
AllowUsers root
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
UsePAM no
AllowAgentForwarding no
# OpenSSH grants Unix-socket forwards only when local TCP forwarding is
# allowed too (session.c); the listener is loopback-only and root's anyway.
AllowTcpForwarding local
AllowStreamLocalForwarding local
X11Forwarding no
PermitTunnel no
PermitUserEnvironment no
StrictModes yes
LogLevel INFO
EOF
changed=0
if ! cmp -s "$DIR/sshd_config.tmp" "$DIR/sshd_config"; then
	mv -f "$DIR/sshd_config.tmp" "$DIR/sshd_config"
	changed=1
else
	rm -f "$DIR/sshd_config.tmp"
fi
mkdir -p /run/sshd # privilege separation directory Debian's sshd requires
chmod 0755 /run/sshd
"$SSHD" -t -f "$DIR/sshd_config" || die "sshd rejects $DIR/sshd_config" "run: $SSHD -t -f $DIR/sshd_config"

# ------------------------------------------------------------- 3. start
our_pid() { # pid of the sshd running our config, if alive
	local pid
	[[ -f "$DIR/sshd.pid" ]] || return 1
	pid="$(cat "$DIR/sshd.pid")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$DIR/sshd_config" || return 1
	printf '%s' "$pid"
}
answers() { # the sshd on the port speaks SSH
	local banner
	banner="$(timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT && head -c 4 <&3" 2>/dev/null || true)"
	[[ "$banner" == SSH- ]]
}

if pid="$(our_pid)"; then
	if ((changed)); then
		log "config changed: restarting the test sshd (pid $pid)"
		kill "$pid"
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	elif answers; then
		log "test sshd answers on 127.0.0.1:$PORT (pid $pid)"
		exit 0
	fi
fi
if ! our_pid >/dev/null && answers; then
	die "something else listens on 127.0.0.1:$PORT" "stop it, or set WAI_TEST_SSHD_PORT to a free port"
fi
# sshd daemonizes itself; started from / so that its working directory
# cannot disappear under it. -E keeps its log out of syslog.
(cd / && "$SSHD" -f "$DIR/sshd_config" -E "$DIR/sshd.log")
for _ in $(seq 50); do answers && break; sleep 0.1; done
answers || {
	tail -n 20 "$DIR/sshd.log" >&2 || true
	die "the test sshd did not answer on 127.0.0.1:$PORT" "see $DIR/sshd.log"
}
log "test sshd up on 127.0.0.1:$PORT (pid $(our_pid || echo ?)); key $DIR/id_ed25519, known_hosts $DIR/home/.ssh/known_hosts"
