//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

// Stopping a command inside the container.
//
// Dropping the attach connection does not stop an exec'd process (podman
// #19486), and ExecRemove(force) needs a 4.8 service. So every command runs
// under a small wrapper shell that runc makes a session leader, with
// WAI_EXEC=<exec id> in its environment; on timeout a second exec runs
// killScript, which finds the command's processes from inside the container
// and signals them: SIGTERM, the grace period, then SIGSTOP+SIGKILL until
// none is left.
//
// A process belongs to the command when any of these holds, applied until
// nothing changes:
//   - its environment carries the command's marker (every descendant, unless
//     it cleared its environment);
//   - its parent, session or process group is one of the command's (catches
//     `env -i` children, and setsid'd children while their parent lives);
//   - it carries no marker at all, was reparented to the init process, and
//     started after the command did: a process that cleared its environment,
//     left its session and lost its parent has hidden every trace of where it
//     came from, and in a sandbox it is killed rather than left running.
//
// Only builtins run per process (read on /proc/PID/stat); the environment
// scan is two grep runs for all processes at once, and the polls during the
// grace period skip it (new children are found through their parents), so
// the script stays quick and still works with the pids limit nearly
// exhausted. When it cannot run at all (a fork
// bomb at the limit leaves no pid for the exec), the container is removed
// instead, which kills everything in it, and recreated on the next call.
//
// It prints how the command ended: "none" (nothing was left), "term" (gone
// after SIGTERM) or "kill" (SIGKILL was needed); "left PIDS" and exit 1 when
// processes survived.
const killScript = `id=$1; grace=$2; self=$$
T=" "; S=" "; G=" "; wstart=""
isin() { case "$1" in *" $2 "*) return 0;; esac; return 1; }
initsid=""
if read -r l 2>/dev/null </proc/1/stat; then r=${l##*) }; set -- $r; initsid=$4; fi
snap() {
	P=""
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = "$self" ] && continue
		l=""
		read -r l 2>/dev/null <"$d/stat" || continue
		r=${l##*) }
		set -- $r
		[ "$4" = "$self" ] && continue
		P="$P$p $2 $3 $4 ${20} $1
"
	done
}
pids() {
	o=" "
	for f in $(grep "$@" /proc/[0-9]*/environ 2>/dev/null); do f=${f#/proc/}; o="$o${f%/environ} "; done
	printf '%s' "$o"
}
collect() {
	snap
	M=$(pids -l -a -F "WAI_EXEC=$id")
	U=$(pids -L -a -F "WAI_EXEC=")
	extend
}
extend() {
	if [ -z "$wstart" ]; then
		while read -r p pp pg s st state; do
			[ -n "$p" ] && [ "$p" = "$s" ] && isin "$M" "$p" || continue
			if [ -z "$wstart" ] || [ "$st" -lt "$wstart" ]; then wstart=$st; fi
		done <<EOF
$P
EOF
	fi
	c=1
	while [ $c = 1 ]; do
		c=0
		while read -r p pp pg s st state; do
			[ -n "$p" ] && [ "$p" != 1 ] || continue
			isin "$T" "$p" && continue
			if isin "$M" "$p" || isin "$T" "$pp" || isin "$S" "$s" || isin "$G" "$pg" ||
				{ [ -n "$wstart" ] && [ "$pp" = 1 ] && isin "$U" "$p" && [ "$st" -ge "$wstart" ]; }; then
				T="$T$p "
				[ "$s" != "$initsid" ] && [ "$s" != 0 ] && S="$S$s "
				[ "$pg" != "$initsid" ] && [ "$pg" != 0 ] && G="$G$pg "
				c=1
			fi
		done <<EOF
$P
EOF
	done
	A=""
	while read -r p pp pg s st state; do
		[ -n "$p" ] && isin "$T" "$p" || continue
		case $state in Z|X|x) continue;; esac
		A="$A $p"
	done <<EOF
$P
EOF
}
finish() { rm -f "/tmp/.wai-exec-$id.sh" 2>/dev/null; echo "$1"; exit "$2"; }
collect
[ -z "$A" ] && finish none 0
kill -TERM $A 2>/dev/null
i=0
while [ $i -lt "$grace" ]; do
	sleep 0.1
	snap
	extend
	[ -z "$A" ] && finish term 0
	kill -TERM $A 2>/dev/null
	i=$((i+1))
done
n=0
while [ $n -lt 100 ]; do
	collect
	[ -z "$A" ] && finish kill 0
	kill -STOP $A 2>/dev/null
	collect
	kill -KILL $A 2>/dev/null
	n=$((n+1))
done
finish "left$A" 1
`

// wrapScript runs the command as a child, so that this shell (carrying the
// marker, leading the session runc gives the exec) stays in place as the
// root the kill script starts from. `exit $?` after the command keeps dash
// from exec'ing it in place; the subshell's exec makes sure an argv runs
// the program it names, never a shell builtin of the same name (dash's echo
// interprets backslashes, /bin/echo does not).
const wrapScript = `(exec "$@")
exit $?`

// scriptWrapScript first copies the script from stdin to a file under /tmp
// (private to the container, outside the workspace, so it never shows up
// among the workspace's files), runs the interpreter on it and removes it.
const scriptWrapScript = `f=/tmp/.wai-exec-$WAI_EXEC.sh
(umask 077 && cat >"$f") || exit 126
(exec "$@" "$f")
s=$?
rm -f "$f"
exit $s`
