package backend

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Holder identifies the process holding a session open, across pid reuse:
// host name, pid, and the process's start time in clock ticks since boot.
// Backends record it next to a session so that another process (wai ps,
// wai rm, wai gc) can tell a session in use from one a crash left behind.
type Holder struct {
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// CurrentHolder describes this process.
func CurrentHolder() *Holder {
	h, _ := os.Hostname()
	pid := os.Getpid()
	return &Holder{Host: h, PID: pid, Start: procStart(pid)}
}

// String names the holder for people: "pid 123 on host".
func (h *Holder) String() string {
	if h == nil {
		return ""
	}
	return fmt.Sprintf("pid %d on %s", h.PID, h.Host)
}

// Alive reports whether the holding process still runs. A process on
// another host cannot be checked and counts as alive: only its own host may
// judge it, and a session is never taken from a process that might run.
func (h *Holder) Alive() bool {
	if h == nil {
		return false
	}
	if name, _ := os.Hostname(); name != h.Host {
		return true
	}
	st := procStart(h.PID)
	return st != 0 && st == h.Start
}

// procStart returns field 22 of /proc/PID/stat (start time), 0 if the
// process does not exist.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// Interface guards
var _ fmt.Stringer = (*Holder)(nil)
