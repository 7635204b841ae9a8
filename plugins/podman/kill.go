//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Stopping a command inside the container.
//
// Dropping the attach connection does not stop an exec'd process (podman
// #19486), and ExecRemove(force) needs a 4.8 service. So every command runs
// under a small wrapper shell that runc makes a session leader, with
// WAI_EXEC=<secret> in its environment: 128 random bits, new for every exec.
// Before it runs the command, the wrapper writes one line to stderr with its
// pid and start time (the host strips it; kill_header.go): written before
// any of the command's code runs, it cannot be forged, and it lets the kill
// find the command's session and start time even after the wrapper is gone.
// On timeout, on cancellation, and after a command that exited with
// processes still about (kill_leftovers.go), a second exec runs killScript,
// which finds the command's processes from inside the container and signals
// them: SIGTERM, the grace period, then SIGSTOP+SIGKILL until none is left.
//
// A process belongs to the command when any of these holds, applied until
// nothing changes:
//   - an entry of its environment is exactly WAI_EXEC=<secret> (compared as
//     a whole NUL-separated entry, never as a substring: FOO=WAI_EXEC=…,
//     WAI_EXEC=<secret>x or the marker in argv match nothing);
//   - its parent is one of the command's processes;
//   - it is in the command's session or process group, or in the session
//     or group of one of its processes (catches `env -i` children, and
//     setsid'd children while their parent lives);
//   - it was reparented to the init process, started after the command did,
//     and carries no marker of another command that is still running: a
//     process that cleared or forged its marker, left its session and lost
//     its parent has hidden every trace of where it came from, and in a
//     sandbox it is killed rather than left running.
//
// "Another command that is still running" is decided by the container, not
// by what a process claims: the exec roots (the processes whose parent is
// outside the container, ppid 0) are the wrappers podman started, and only
// the markers they carry count. A made-up WAI_EXEC=decoy protects nothing,
// and a process that copies a running command's marker is stopped with that
// command at the latest. Processes of the third and fourth rule that carry
// such a live marker are left to their own command.
//
// One sweep is not atomic (it lists /proc, then reads each process): a
// process that forks after the listing and is gone by its read hides its
// child, which is in /proc by then. So "nothing left" is only believed
// when a second, full sweep, started after the first ended, agrees.
//
// Only builtins run per process (read on /proc/PID/stat); the environment
// scan is a few grep runs for all processes at once, and the polls during
// the grace period skip it (new children are found through their parents),
// so the script stays quick. When it cannot run or cannot finish (a fork
// bomb at the pids limit leaves no pid for the exec), the container is
// removed instead, which kills everything in it, and recreated on the next
// call; the result says so.
//
// Arguments: the secret, the grace period in tenths of a second (0: SIGKILL
// at once), and the root's pid and start time from its header line (0 0
// when unknown: the script then looks for the root itself). It prints how
// the command ended: "none" (nothing was left), "term N" (N processes,
// gone after SIGTERM) or "kill N" (SIGKILL was needed); "left PIDS" and
// exit 1 when processes survived.
const killScript = `id=$1; grace=$2; rpid=$3; rstart=$4; self=$$
T=" "; S=" "; G=" "; K=" "; F=" "; M=" "; nk=0; wstart=""
isin() { case "$1" in *" $2 "*) return 0;; esac; return 1; }
initsid=""
if read -r l 2>/dev/null </proc/1/stat; then r=${l##*) }; set -- $r; initsid=$4; fi
snap() {
	P=""; R=""
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
		[ "$2" = 0 ] && [ "$p" != 1 ] && R="$R $p"
	done
}
pids() {
	o=" "
	for f in $(grep "$@" /proc/[0-9]*/environ 2>/dev/null); do f=${f#/proc/}; o="$o${f%/environ} "; done
	printf '%s' "$o"
}
collect() {
	snap
	M=$(pids -l -a -z -x -F -e "WAI_EXEC=$id")
	set --
	for r in $R; do
		[ "$r" = "$rpid" ] && continue
		v=$(grep -a -z -m1 '^WAI_EXEC=' "/proc/$r/environ" 2>/dev/null) || continue
		[ "$v" = "WAI_EXEC=$id" ] || set -- "$@" -e "$v"
	done
	F=" "
	[ $# -gt 0 ] && F=$(pids -l -a -z -x -F "$@")
	extend
}
root() {
	[ -z "$wstart" ] || return 0
	while read -r p pp pg s st state; do
		[ -n "$p" ] || continue
		if [ "$rpid" != 0 ]; then
			[ "$p" = "$rpid" ] && [ "$st" = "$rstart" ] || continue
		else
			[ "$pp" = 0 ] && [ "$p" = "$s" ] && isin "$M" "$p" || continue
			rpid=$p; rstart=$st
		fi
		T="$T$p "
	done <<EOF
$P
EOF
	if [ "$rpid" != 0 ]; then wstart=$rstart; S="$S$rpid "; G="$G$rpid "; fi
}
extend() {
	root
	c=1
	while [ $c = 1 ]; do
		c=0
		while read -r p pp pg s st state; do
			[ -n "$p" ] && [ "$p" != 1 ] && [ "$pp" != 0 ] || continue
			isin "$T" "$p" && continue
			if isin "$M" "$p" || isin "$T" "$pp" || { ! isin "$F" "$p" && { isin "$S" "$s" || isin "$G" "$pg" ||
				{ [ -n "$wstart" ] && [ "$pp" = 1 ] && [ "$st" -ge "$wstart" ]; }; }; }; then
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
		isin "$K" "$p" || { K="$K$p "; nk=$((nk+1)); }
	done <<EOF
$P
EOF
}
finish() { rm -f "/tmp/.wai-exec-$id.sh" 2>/dev/null; echo "$1"; exit "$2"; }
collect
[ -z "$A" ] && collect
[ -z "$A" ] && finish none 0
if [ "$grace" -gt 0 ]; then
	kill -TERM $A 2>/dev/null
	i=0
	while [ $i -lt "$grace" ]; do
		sleep 0.1
		snap
		extend
		[ -z "$A" ] && collect
		[ -z "$A" ] && finish "term $nk" 0
		kill -TERM $A 2>/dev/null
		i=$((i+1))
	done
fi
n=0
while [ $n -lt 100 ]; do
	collect
	[ -z "$A" ] && collect
	[ -z "$A" ] && finish "kill $nk" 0
	kill -STOP $A 2>/dev/null
	collect
	kill -KILL $A 2>/dev/null
	n=$((n+1))
done
finish "left$A" 1
`

// killReport is how stopping a command's processes went.
type killReport struct {
	// outcome is the kill script's report ("none", "term N", "kill N"), or
	// "removed" when the container was removed instead.
	outcome string
	signal  int    // the last signal the command's processes got; 0 when none was needed
	note    string // for the result's stderr when the kill could not be confirmed
}

// Time the kill script gets on top of the grace period. Generous: on a
// loaded machine one exec takes a second or more, and running out of it
// removes the container, which is safe but throws away what /tmp held.
const killScriptBudget = 20 * time.Second

// pidsHeadroom is how many free pids the kill script needs (its exec, a
// grep, a command substitution, a sleep). With fewer left the script
// cannot run, and the container is removed at once.
const pidsHeadroom = 8

func (b *Backend) grace() time.Duration { return time.Duration(b.cfg.KillGrace) }

// killTree stops every process of the exec with this secret and returns
// what it did. It runs with contexts of its own (the caller's may have
// expired: that is often why it runs), each bounded. When the kill cannot
// be confirmed, the container is removed, which ends everything in it.
// nprocs is the container's task count (taskCount) when the caller has it,
// or -1.
func (w *Workspace) killTree(st *ctrState, id, secret string, root execRoot, grace time.Duration, nprocs int) killReport {
	b := w.b
	t0 := time.Now()
	limit := int(w.pidsLimit())
	atLimit := func(n int) string {
		return fmt.Sprintf("the container is at its pids limit (%d of %d), so no kill can run inside it", n, limit)
	}
	if nprocs >= limit-pidsHeadroom {
		return w.removeUnconfirmed(st, id, t0, atLimit(nprocs))
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace+killScriptBudget)
	defer cancel()
	// Without a count, one is read beside the kill rather than before it
	// (a stats call costs as much as an exec on a busy service): at the
	// limit, the kill exec cannot start, and is given up for the removal.
	bomb := make(chan int, 1)
	if nprocs < 0 {
		go func() {
			if n, ok := b.taskCount(st.id); ok && n >= limit-pidsHeadroom {
				bomb <- n
				cancel()
			}
			close(bomb)
		}()
	} else {
		close(bomb)
	}
	argv := []string{"/bin/sh", "-c", killScript, "wai-kill", secret, fmt.Sprint(int(grace / (100 * time.Millisecond))),
		strconv.FormatUint(root.pid, 10), strconv.FormatUint(root.start, 10)}
	code, out, err := b.execSimple(ctx, st.id, argv, []string{markerVar + "=k" + secret})
	if err != nil {
		if n, ok := <-bomb; ok {
			return w.removeUnconfirmed(st, id, t0, atLimit(n))
		}
	}
	out = strings.TrimSpace(out)
	outcome := lastLine(out)
	if err != nil || code != 0 || !validOutcome(outcome) {
		return w.removeUnconfirmed(st, id, t0, fmt.Sprintf("the kill inside the container did not confirm it (exit %d, %q, %v)", code, elideOut(out), err))
	}
	b.log.LogAttrs(ctx, slog.LevelDebug, "runtime.podman.kill", slog.String("session", w.session),
		slog.String("exec", id), slog.String("outcome", outcome), slog.Duration("duration", time.Since(t0)))
	rep := killReport{outcome: outcome}
	switch {
	case strings.HasPrefix(outcome, "term "):
		rep.signal = 15
	case strings.HasPrefix(outcome, "kill "):
		rep.signal = 9
	}
	return rep
}

// validOutcome reports whether s is a report of a kill that left nothing.
func validOutcome(s string) bool {
	if s == "none" {
		return true
	}
	verb, n, ok := strings.Cut(s, " ")
	_, err := strconv.Atoi(n)
	return ok && err == nil && (verb == "term" || verb == "kill")
}

// removeUnconfirmed removes the container when a command's processes could
// not be confirmed stopped, and says so: in the event log and in the note
// the result carries. The removal has a context of its own, never the
// kill's, which may have run out.
func (w *Workspace) removeUnconfirmed(st *ctrState, id string, t0 time.Time, why string) killReport {
	b := w.b
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reason := "a command's processes could not be confirmed stopped: " + why
	w.markDead(st, reason)
	rep := killReport{outcome: "removed", signal: 9}
	err := b.remove(ctx, st.id)
	outcome := "unconfirmed; container removed"
	if err != nil {
		outcome = "unconfirmed; removing the container failed: " + err.Error()
		rep.note = fmt.Sprintf("\nwai: the command's processes could not be confirmed stopped (%s), and removing its container failed too (%v): "+
			"processes may still be running in it. The next command tries the removal again.\n", why, err)
	} else {
		b.event(ctx, "runtime.podman.removed", w, "container_id", short(st.id), "reason", reason)
		rep.note = fmt.Sprintf("\nwai: the command's processes could not be confirmed stopped (%s); its container was removed instead, "+
			"which ended every process in it, and the next command starts a new one (files under %s are kept; /tmp and other running commands are not).\n",
			why, ContainerWorkspace)
	}
	b.log.LogAttrs(ctx, slog.LevelWarn, "runtime.podman.kill", slog.String("session", w.session),
		slog.String("exec", id), slog.String("outcome", outcome), slog.String("reason", why), slog.Duration("duration", time.Since(t0)))
	return rep
}

func elideOut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
