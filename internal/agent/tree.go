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
//   - has a parent in the tree;
//   - was reparented to the init process (PID 1), started after the
//     command did, and carries no marker of another command this agent
//     still runs: a process that cleared or forged its marker, left its
//     session and lost its parent has hidden every trace of where it came
//     from, and in a sandbox it is killed rather than left running.
//
// The agent itself and PID 1 never belong to it; zombies are dead already
// and do not count.

// treeSpec names a command's tree: its process, that process's start
// time, its marker, and the markers of the agent's other running
// commands (which protect their orphans).
type treeSpec struct {
	root      int
	rootStart uint64 // 0: the orphan rule is off
	marker    string
	others    func() map[string]bool
}

// procInfo is what /proc/PID/stat says about one process.
type procInfo struct {
	pid, ppid, pgrp, sid int
	start                uint64
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
	pi.start, _ = strconv.ParseUint(f[19], 10, 64)
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

// environ returns the NUL-separated entries of pid's environment.
func environ(pid int) [][]byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil
	}
	return bytes.Split(b, []byte{0})
}

func hasMarker(pid int, marker string) bool {
	for _, kv := range environ(pid) {
		if string(kv) == marker {
			return true
		}
	}
	return false
}

// orphanOf reports whether p, reparented to init, counts as the tree's by
// the last rule: started after the command, no live marker of another.
func (t treeSpec) orphanOf(p procInfo) bool {
	if p.ppid != 1 || p.start < t.rootStart || t.rootStart == 0 {
		return false
	}
	others := t.others()
	var jobs map[string]bool // read only when needed: most processes have no orphans
	for _, kv := range environ(p.pid) {
		if others[string(kv)] {
			return false
		}
		if bytes.HasPrefix(kv, []byte(markerPrefix)) {
			if jobs == nil {
				jobs = execMarkers()
			}
			if jobs[string(kv)] {
				return false
			}
		}
	}
	return true
}

// members is what one scan found of a tree: its processes, and the
// process groups they are in.
type members struct {
	pids   []int
	groups []int
}

func (m members) empty() bool { return len(m.pids) == 0 }

// tree returns t's tree as one scan finds it (its root included while it
// lives). withEnv also reads every process's environment for the marker;
// the polls of a kill skip that, finding new processes through their
// parents and sessions.
func tree(t treeSpec, withEnv bool) members {
	procs := scan()
	in := map[int]bool{}
	groups := map[int]bool{t.root: true} // session and group ids in the tree
	pgrps := map[int]bool{}              // the groups to signal as a whole
	agentSID, agentPG := getsid(), syscall.Getpgrp()
	add := func(p procInfo) {
		in[p.pid] = true
		if p.sid != agentSID && p.sid != 0 {
			groups[p.sid] = true
		}
		if p.pgrp != agentSID && p.pgrp != 0 {
			groups[p.pgrp] = true
		}
		if p.pgrp != agentSID && p.pgrp != agentPG && p.pgrp > 1 {
			pgrps[p.pgrp] = true
		}
	}
	for _, p := range procs {
		if p.pid == t.root || withEnv && hasMarker(p.pid, t.marker) || t.orphanOf(p) {
			add(p)
		}
	}
	delete(groups, agentSID) // never widen to the agent's own session
	for changed := true; changed; {
		changed = false
		for _, p := range procs {
			if in[p.pid] || !(groups[p.sid] || groups[p.pgrp] || in[p.ppid]) {
				continue
			}
			add(p)
			changed = true
		}
	}
	return members{pids: keys(in), groups: keys(pgrps)}
}

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// settled is tree(t, withEnv), with an empty answer confirmed by a second,
// full scan. One scan is not atomic: it lists /proc, then reads each
// process, so a process that forks after the listing and is gone by its
// read hides the child (dash blocks signals around its vfork: a SIGTERM
// sent then ends the shell only once its child exists). The child is in
// /proc before its parent ends, so the scan that starts after lists it.
// Trusting the first empty scan left such a child running after the
// command was reported killed.
func settled(t treeSpec, withEnv bool) members {
	if m := tree(t, withEnv); !m.empty() {
		return m
	}
	return tree(t, true)
}

// killTree stops t's tree: SIGTERM, up to grace for it to end, then
// SIGSTOP and SIGKILL until a scan, confirmed, finds nothing (bounded: a
// tree that keeps forking faster than it dies is left to the host's
// kill). It returns the outcome ("none", "term N", "kill N", or "left N")
// and the last signal sent (0 when nothing was left).
func killTree(t treeSpec, grace time.Duration) (string, int) {
	m := settled(t, true)
	if m.empty() {
		return "none", 0
	}
	n := len(m.pids)
	if grace > 0 {
		if m = terminate(t, m, grace); m.empty() {
			return fmt.Sprintf("term %d", n), int(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for !m.empty() && time.Now().Before(deadline) {
		n = max(n, len(m.pids))
		m.signal(syscall.SIGSTOP, nil)
		m.signal(syscall.SIGKILL, nil)
		time.Sleep(5 * time.Millisecond)
		m = settled(t, true)
	}
	if !m.empty() {
		return fmt.Sprintf("left %d", len(m.pids)), int(syscall.SIGKILL)
	}
	return fmt.Sprintf("kill %d", n), int(syscall.SIGKILL)
}

// terminate sends m SIGTERM and waits up to grace for the tree to end. A
// process that turns up meanwhile (forked as the first signal went out)
// gets its SIGTERM too, once: a second one would rush a process that
// handles the first. It returns what is left, from a full scan.
func terminate(t treeSpec, m members, grace time.Duration) members {
	sent := map[int]bool{}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		m.signal(syscall.SIGTERM, sent)
		time.Sleep(20 * time.Millisecond)
		if m = settled(t, false); m.empty() {
			return m
		}
	}
	return tree(t, true)
}

// signal sends sig to m's process groups, then to its processes; those in
// sent (groups as negative ids) are skipped, and recorded when sent is not
// nil. A group's signal reaches a child its member is forking at that
// moment, which the scan could not list yet.
func (m members) signal(sig syscall.Signal, sent map[int]bool) {
	send := func(id int) {
		if sent != nil {
			if sent[id] {
				return
			}
			sent[id] = true
		}
		_ = syscall.Kill(id, sig)
	}
	for _, g := range m.groups {
		send(-g)
	}
	for _, pid := range m.pids {
		send(pid)
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
