package rootfs

import "syscall"

const (
	sysOpenat2 = 437
	sysFstatat = syscall.SYS_FSTATAT
)
