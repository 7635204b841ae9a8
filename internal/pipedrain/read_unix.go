//go:build unix

package pipedrain

import "syscall"

func readNow(fd uintptr, buf []byte, take func([]byte)) (eof bool) {
	for {
		n, err := syscall.Read(int(fd), buf)
		switch {
		case err == syscall.EINTR:
			continue
		case n > 0:
			take(buf[:n])
		default: // 0 bytes and no error is end of file; EAGAIN is "empty, writer left"
			return n == 0 && err == nil
		}
	}
}
