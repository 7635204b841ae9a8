//go:build linux

package agent

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A command's tree is every process that, applied until nothing changes:
//   - carries the command's marker as a whole entry of its environment;
//   - is in the session or process group of the command's process (its
//     session id is that process's pid: the agent made it a session
//     leader) or of one of the tree's processes;
//   - has a parent in the tree.
//
// The agent itself and PID 1 never belong to it; zombies are dead already
// and do not count.

// procInfo is what /proc/PID/stat says about one process.
type procInfo struct {
	pid, ppid, pgrp, sid int
	zombie               bool
}

// scan lists the live processes other than the agent and PID 1.
func scan() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	out := make([]procInfo, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == 1 {
			continue
		}
		if pi, ok := readStat(pid); ok && !pi.zombie {
			out = append(out, pi)
		}
	}
	return out
}

func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procInfo{}, false
	}
	pi := procInfo{pid: pid, zombie: f[0] == "Z" || f[0] == "X"}
	pi.ppid, _ = strconv.Atoi(f[1])
	pi.pgrp, _ = strconv.Atoi(f[2])
	pi.sid, _ = strconv.Atoi(f[3])
	return pi, true
}

// startTime is field 22 of /proc/PID/stat: clock ticks since boot.
func startTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

func hasMarker(pid int, marker string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == marker {
			return true
		}
	}
	return false
}

// tree returns the pids of root's tree (root included while it lives).
// withEnv also reads every process's environment for the marker; the
// polls of a kill skip that, finding new processes through their parents
// and sessions.
func tree(root int, marker string, withEnv bool) []int {
	procs := scan()
	in := map[int]bool{}
	groups := map[int]bool{root: true} // session and group ids in the tree
	for _, p := range procs {
		if p.pid == root || withEnv && hasMarker(p.pid, marker) {
			in[p.pid] = true
			groups[p.sid], groups[p.pgrp] = true, true
		}
	}
	agentSID := getsid()
	delete(groups, agentSID) // never widen to the agent's own session
	delete(groups, 0)
	for changed := true; changed; {
		changed = false
		for _, p := range procs {
			if in[p.pid] || !(groups[p.sid] || groups[p.pgrp] || in[p.ppid]) {
				continue
			}
			in[p.pid] = true
			if p.sid != agentSID && p.sid != 0 {
				groups[p.sid] = true
			}
			if p.pgrp != agentSID && p.pgrp != 0 {
				groups[p.pgrp] = true
			}
			changed = true
		}
	}
	pids := make([]int, 0, len(in))
	for pid := range in {
		pids = append(pids, pid)
	}
	return pids
}

// killTree stops root's tree: SIGTERM, up to grace for it to end, then
// SIGSTOP and SIGKILL until nothing is left (bounded: a tree that keeps
// forking faster than it dies is left to the host's kill). It returns the
// outcome ("none", "term N", "kill N", or "left N") and the last signal
// sent (0 when nothing was left).
func killTree(root int, marker string, grace time.Duration) (string, int) {
	pids := tree(root, marker, true)
	if len(pids) == 0 {
		return "none", 0
	}
	n := len(pids)
	if grace > 0 {
		signalAll(pids, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			if pids = tree(root, marker, false); len(pids) == 0 {
				return fmt.Sprintf("term %d", n), int(syscall.SIGTERM)
			}
		}
		pids = tree(root, marker, true)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(pids) > 0 && time.Now().Before(deadline) {
		n = max(n, len(pids))
		signalAll(pids, syscall.SIGSTOP)
		signalAll(pids, syscall.SIGKILL)
		time.Sleep(5 * time.Millisecond)
		pids = tree(root, marker, true)
	}
	if len(pids) > 0 {
		return fmt.Sprintf("left %d", len(pids)), int(syscall.SIGKILL)
	}
	return fmt.Sprintf("kill %d", n), int(syscall.SIGKILL)
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// getsid is the agent's own session id (the syscall package has no
// wrapper for it).
func getsid() int {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		return -1
	}
	return int(sid)
}
