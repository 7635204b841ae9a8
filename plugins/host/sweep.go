//go:build linux && (amd64 || arm64)

package host

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"syscall"
)

// Finding what a command left behind outside its process group.
//
// Every command starts as the leader of a process group of its own, and
// the group is killed when the command ends. A child that calls setsid
// leaves the group; what still ties it to the command is its environment:
// every command gets WAI_EXEC=<128 random bits>, new each time, which its
// children inherit. After the group kill, sweep looks through /proc for
// processes whose environment holds that entry (compared as a whole
// NUL-separated entry, never as a substring), or whose parent is one found,
// stops them all, then kills them, again until none is left.
//
// A process that both clears its environment and leaves the group is not
// found: this backend is not a sandbox (the podman backend finds those
// too, in a container where an orphan can only be a command's). The host
// has processes of its own, so nothing is killed on a guess.

// markerVar carries a command's secret into its processes.
const markerVar = "WAI_EXEC"

// newSecret returns a command's marker value.
func newSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sweepRounds bounds the kill loop and, within each round, freeze's
// rescans: each round stops then kills every process found, so only a
// command forking as fast as it is stopped needs more than two of either.
// A sweep that finds nothing is one scan.
const sweepRounds = 100

// sweep sends sig to every live process, other than this one, that carries
// the marker entry or descends from one that does, and with SIGKILL repeats
// until a scan finds none. It reports how many of the processes it
// signalled were outside the command's process group (group). It
// only looks at processes that started no earlier than the command's
// leader (minStart, in clock ticks since boot), which keeps the scan of a
// busy host to a few stat reads per process.
func sweep(entry string, group int, minStart uint64, sig syscall.Signal) int {
	want := []byte("\x00" + entry + "\x00")
	escaped := map[int]bool{}
	for range sweepRounds {
		found := freeze(want, group, minStart)
		live := 0
		for _, p := range found {
			if syscall.Kill(p.pid, sig) == nil {
				live++
				if p.pgid != group {
					escaped[p.pid] = true
				}
			}
			// A stopped process acts on SIGTERM only once continued.
			_ = syscall.Kill(p.pid, syscall.SIGCONT)
		}
		if live == 0 || sig != syscall.SIGKILL {
			break
		}
	}
	return len(escaped)
}

// freeze stops every process scanMarked finds, scanning again until a
// scan finds none it has not stopped, and returns them. A stopped process
// cannot fork, and its children keep it as their parent: a child forked
// between a scan and the signal, which may have cleared its environment
// and left the group (setsid, then env -i), is found through its parent
// on the next scan, where killing the parent at once would have orphaned
// it beyond finding.
func freeze(want []byte, group int, minStart uint64) []procInfo {
	stopped := map[int]procInfo{}
	for range sweepRounds {
		added := 0
		for _, p := range scanMarked(want, group, minStart) {
			if _, ok := stopped[p.pid]; !ok && syscall.Kill(p.pid, syscall.SIGSTOP) == nil {
				stopped[p.pid] = p
				added++
			}
		}
		if added == 0 {
			break
		}
	}
	out := make([]procInfo, 0, len(stopped))
	for _, p := range stopped {
		out = append(out, p)
	}
	return out
}

// procInfo is what sweep needs of a process.
type procInfo struct {
	pid, ppid, pgid int
	start           uint64
	zombie          bool
}

// scanMarked lists the live processes carrying want (NUL-delimited entry)
// in their environment, with their descendants.
func scanMarked(want []byte, leader int, minStart uint64) []procInfo {
	procs := listProcs(leader, minStart)
	self := os.Getpid()
	ours := map[int]bool{}
	var envBuf []byte // grown on the first environment read, kept for the next
	for _, p := range procs {
		if p.pid != self && !p.zombie && environHas(p.pid, want, &envBuf) {
			ours[p.pid] = true
		}
	}
	// Children of what was found, until nothing changes: a child that
	// cleared its environment still has its parent.
	for changed := len(ours) > 0; changed; {
		changed = false
		for _, p := range procs {
			if !ours[p.pid] && ours[p.ppid] && p.pid != self && !p.zombie {
				ours[p.pid], changed = true, true
			}
		}
	}
	out := make([]procInfo, 0, len(ours))
	for _, p := range procs {
		if ours[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// listProcs reads pid, parent and start time of every process that started
// at minStart or later. Pids are handed out in increasing order, wrapping
// at pid_max, so only those between the leader's and the last one handed
// out (ns_last_pid) can be younger than the leader: the others are not even
// read, which keeps a sweep on a busy host to a directory listing and a
// few stat reads. (A command that lives through a whole cycle of pid_max
// pids could hide a child below its leader's pid from this; the group kill
// still gets it unless it left the group.)
func listProcs(leader int, minStart uint64) []procInfo {
	last, lastOK := readInt("/proc/sys/kernel/ns_last_pid")
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []procInfo
	buf := make([]byte, 1024)
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if lastOK && leader > 0 {
			if last >= leader && (pid < leader || pid > last) || last < leader && pid < leader && pid > last {
				continue
			}
		}
		p, ok := readStat(pid, buf)
		if ok && p.start >= minStart {
			out = append(out, p)
		}
	}
	return out
}

// readStat parses /proc/PID/stat: "pid (comm) state ppid … starttime …",
// where comm may hold spaces and parentheses (hence the last ')').
func readStat(pid int, buf []byte) (procInfo, bool) {
	n, ok := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf)
	if !ok {
		return procInfo{}, false
	}
	s := buf[:n]
	i := bytes.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return procInfo{}, false
	}
	f := bytes.Fields(s[i+2:]) // f[0] state, f[1] ppid, f[2] pgrp, … f[19] starttime
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, start: start, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// startTime is the start time of pid in clock ticks since boot.
func startTime(pid int) (uint64, bool) {
	p, ok := readStat(pid, make([]byte, 1024))
	return p.start, ok
}

func readInt(path string) (int, bool) {
	var buf [32]byte
	n, ok := readSmall(path, buf[:])
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n])))
	return v, err == nil
}

func readSmall(path string, buf []byte) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	n, err := f.Read(buf)
	return n, err == nil && n > 0
}

// environHas reports whether /proc/PID/environ holds want, a whole entry
// between NULs. Processes this one may not read (another user's) hold
// nothing.
func environHas(pid int, want []byte, buf *[]byte) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	defer f.Close()
	if cap(*buf) == 0 {
		*buf = make([]byte, 0, 8<<10)
	}
	b := append((*buf)[:0], 0)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil || n == 0 {
			break
		}
	}
	b = append(b, 0)
	*buf = b
	return hasEntry(b, want)
}

// hasEntry reports whether env, a NUL-separated list wrapped in NULs, holds
// want ("\x00NAME=VALUE\x00") as a whole entry.
func hasEntry(env, want []byte) bool { return bytes.Contains(env, want) }
