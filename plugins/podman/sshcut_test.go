//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The test sshd is shared: other test processes (cmd/wai's ssh:// volume
// test, a second package running at the same time) hold connections to it
// too. A test that cuts connections must cut only its own, so these
// helpers find which of the sshd's per-connection processes serve a
// connection this process opened: the sshd side's peer port is this
// side's local port.

// tcpConn is one row of /proc/net/tcp{,6}: the ports of a socket by inode.
type tcpConn struct{ local, remote int }

// tcpTable reads every IPv4 and IPv6 TCP socket of the host's network
// namespace, by inode.
func tcpTable() map[string]tcpConn {
	conns := map[string]tcpConn{}
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			conns[fields[9]] = tcpConn{local: hexPort(fields[1]), remote: hexPort(fields[2])}
		}
		f.Close()
	}
	return conns
}

// hexPort is the port of an ADDR:PORT field, both in hexadecimal.
func hexPort(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	p, err := strconv.ParseUint(addr[i+1:], 16, 16)
	if i < 0 || err != nil {
		return -1
	}
	return int(p)
}

// socketInodes are the inodes of the sockets process pid ("self" for this
// one) has open.
func socketInodes(pid string) []string {
	links, _ := filepath.Glob(filepath.Join("/proc", pid, "fd", "*"))
	var inodes []string
	for _, l := range links {
		target, err := os.Readlink(l)
		if inode, ok := strings.CutPrefix(target, "socket:["); ok && err == nil {
			inodes = append(inodes, strings.TrimSuffix(inode, "]"))
		}
	}
	return inodes
}

// ownClientPorts are the local ports of this process's TCP connections to
// port.
func ownClientPorts(conns map[string]tcpConn, port int) map[int]bool {
	ports := map[int]bool{}
	for _, inode := range socketInodes("self") {
		if c, ok := conns[inode]; ok && c.remote == port {
			ports[c.local] = true
		}
	}
	return ports
}

// servesOneOf reports whether process pid holds the server side of a
// connection on port from one of clientPorts.
func servesOneOf(conns map[string]tcpConn, pid string, port int, clientPorts map[int]bool) bool {
	for _, inode := range socketInodes(pid) {
		if c, ok := conns[inode]; ok && c.local == port && clientPorts[c.remote] {
			return true
		}
	}
	return false
}
