package podman

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultURL is the service URL used when the config names none:
// $CONTAINER_HOST, else the rootful socket as root, else the rootless one.
func DefaultURL() string {
	if v := os.Getenv("CONTAINER_HOST"); v != "" {
		return v
	}
	if os.Geteuid() == 0 {
		return "unix:///run/podman/podman.sock"
	}
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = "/run/user/" + strconv.Itoa(os.Getuid())
	}
	return "unix://" + filepath.Join(dir, "podman", "podman.sock")
}

func validPrefix(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
		if !alnum && (i == 0 || ch != '_' && ch != '-' && ch != '.') {
			return false
		}
	}
	return true
}

func validUser(s string) bool {
	u, g, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	_, e1 := strconv.ParseUint(u, 10, 32)
	_, e2 := strconv.ParseUint(g, 10, 32)
	return e1 == nil && e2 == nil
}

// parseBytes reads "1024", "64k", "512m", "1g", "1GiB", "2GB" (binary
// multiples either way, as podman does).
func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			mult, t = 1<<10, t[:n-1]
		case 'm':
			mult, t = 1<<20, t[:n-1]
		case 'g':
			mult, t = 1<<30, t[:n-1]
		case 't':
			mult, t = 1<<40, t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(f * float64(mult)), nil
}

// hostHardLimit reads a hard limit of this process from /proc/self/limits.
func hostHardLimit(name string) (uint64, bool) {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		f := strings.Fields(line[len(name):])
		if len(f) < 2 || f[1] == "unlimited" {
			return 0, false
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		return v, err == nil
	}
	return 0, false
}

// defaultNproc is min(hard nproc limit, kernel.pid_max): podman lowers its
// own nproc hard limit to pid_max, and a container cannot get more than the
// service has.
func defaultNproc() uint64 {
	n := uint64(32768)
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 {
			n = v
		}
	}
	if hard, ok := hostHardLimit("Max processes"); ok && hard < n {
		n = hard
	}
	return n
}
