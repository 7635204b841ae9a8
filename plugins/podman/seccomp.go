package podman

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"go.podman.io/common/pkg/seccomp"
	"golang.org/x/sys/unix"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/atomicfile"
)

// userNSCalls are the system calls that create or enter a namespace. The
// default profile of Podman allows all of them and leaves the rest to the
// dropped capabilities; but a user namespace needs no capability, and
// inside one a command gets every capability again (over its own
// namespaces), which reopens kernel attack surface (mount, netfilter, …)
// that a sandbox means to keep closed.
var userNSCalls = []string{"unshare", "clone", "clone3", "setns"}

// seccompDirName holds the profile in workspace_dir. Like the state
// directory's, its name cannot be a session's, and it is not the state
// directory: gc reads every .json file there as a session's.
const seccompDirName = "@seccomp"

// seccompProfile returns Podman's default seccomp profile with user
// namespaces denied:
//   - unshare and clone are allowed only without CLONE_NEWUSER (EPERM with
//     it, as a kernel without user namespaces answers);
//   - clone3 passes its flags in memory, which seccomp cannot read, so it
//     fails with ENOSYS and the C library falls back to clone;
//   - setns fails with EPERM: without capabilities it can only ever enter a
//     user namespace, and none may be made.
//
// clone's flags are its first argument on amd64 and arm64, the only
// architectures wai builds for.
func seccompProfile() *seccomp.Seccomp {
	p := seccomp.DefaultProfile()
	var rules []*seccomp.Syscall
	for _, r := range p.Syscalls {
		r.Names = slices.DeleteFunc(slices.Clone(r.Names), func(n string) bool { return slices.Contains(userNSCalls, n) })
		if r.Name != "" && slices.Contains(userNSCalls, r.Name) {
			r.Name = ""
		}
		if len(r.Names) > 0 || r.Name != "" {
			rules = append(rules, r)
		}
	}
	eperm, enosys := uint(unix.EPERM), uint(unix.ENOSYS)
	withoutNewUser := []*seccomp.Arg{{Index: 0, Value: unix.CLONE_NEWUSER, ValueTwo: 0, Op: seccomp.OpMaskedEqual}}
	withNewUser := []*seccomp.Arg{{Index: 0, Value: unix.CLONE_NEWUSER, ValueTwo: unix.CLONE_NEWUSER, Op: seccomp.OpMaskedEqual}}
	rules = append(rules,
		&seccomp.Syscall{Names: []string{"unshare", "clone"}, Action: seccomp.ActAllow, Args: withoutNewUser,
			Comment: "wai: no user namespaces"},
		&seccomp.Syscall{Names: []string{"unshare", "clone"}, Action: seccomp.ActErrno, Args: withNewUser, ErrnoRet: &eperm,
			Comment: "wai: no user namespaces"},
		&seccomp.Syscall{Names: []string{"clone3"}, Action: seccomp.ActErrno, Args: []*seccomp.Arg{}, ErrnoRet: &enosys,
			Comment: "wai: clone3's flags cannot be checked; the C library falls back to clone"},
		&seccomp.Syscall{Names: []string{"setns"}, Action: seccomp.ActErrno, Args: []*seccomp.Arg{}, ErrnoRet: &eperm,
			Comment: "wai: no entering namespaces"},
	)
	p.Syscalls = rules
	return p
}

// writeSeccompProfile writes the profile into dir, named after its
// content so that processes with different wai versions never overwrite
// each other's, and returns its path. The Podman service reads the file
// itself: it must be on the service's host, as the workspaces are.
func writeSeccompProfile(dir string) (string, error) {
	body, err := json.MarshalIndent(seccompProfile(), "", " ")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	p := filepath.Join(dir, "seccomp-"+hex.EncodeToString(sum[:6])+".json")
	if old, err := os.ReadFile(p); err == nil && string(old) == string(body) {
		return p, nil
	}
	fail := func(err error) (string, error) {
		return "", backend.Errorf(backend.ErrUnavailable, "open", p,
			"cannot write the seccomp profile that denies user namespaces: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	// The service reads it; it holds no secret.
	if err := atomicfile.Write(p, body, 0o644); err != nil {
		return fail(err)
	}
	return p, nil
}
