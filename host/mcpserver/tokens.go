package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/host/config"
	"github.com/wai-dev/wai/internal/atomicfile"
)

// NewToken returns a fresh bearer token: 32 bytes (256 bits) from
// crypto/rand, hex-encoded.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// TokenPath is where `wai serve --http` keeps the token it creates when
// none is configured.
func TokenPath(stateDir string) string { return filepath.Join(stateDir, "mcp", "token") }

// readTokenFile reads a token from a regular file that only its owner (the
// user wai runs as) can read or write, and that is not a symbolic link: a
// token others can read is a shell for them. made says wai made the file
// (its own token in the state directory, made anew when removed), not the
// operator (a token_file of [[mcp.tokens]]): only then is "remove it" the
// advice.
func readTokenFile(path string, made bool) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", backend.Errorf(backend.ErrPermission, "mcp.token", path, "the token file is a symbolic link; name the file itself")
		}
		return "", backend.Errorf(backend.ErrInvalid, "mcp.token", path, "cannot read the token file: %v", err)
	}
	defer f.Close()
	if err := checkPrivate(f, path, false, made); err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", backend.Errorf(backend.ErrInvalid, "mcp.token", path, "cannot read the token file: %v", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// checkPrivate refuses a file (or directory) that is not owned by the user
// wai runs as, or that others can read (a file) or write (a directory).
// made: wai made it, and makes a new token when it is removed; an
// operator's own file must be fixed and, if it leaked, given a new token
// by the operator.
func checkPrivate(f *os.File, path string, dir, made bool) error {
	fi, err := f.Stat()
	if err != nil {
		return backend.Errorf(backend.ErrInvalid, "mcp.token", path, "cannot stat: %v", err)
	}
	switch {
	case dir && !fi.IsDir():
		return backend.Errorf(backend.ErrInvalid, "mcp.token", path, "not a directory")
	case !dir && !fi.Mode().IsRegular():
		return backend.Errorf(backend.ErrInvalid, "mcp.token", path, "the token file is not a regular file")
	}
	renew := "remove the token file so wai makes a new one"
	if !made {
		renew = "write a new token into it and give that to the clients"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		fix := "remove it (a new token is made) or chown it"
		if !made {
			fix = fmt.Sprintf("`chown %d %s`, and %s", os.Geteuid(), path, renew)
		}
		return backend.Errorf(backend.ErrPermission, "mcp.token", path,
			"owned by uid %d, not by uid %d that wai runs as: another user could have read or replaced the token; %s", st.Uid, os.Geteuid(), fix)
	}
	if perm := fi.Mode().Perm(); dir && perm&0o022 != 0 || !dir && perm&0o077 != 0 {
		fix := "chmod 600"
		if dir {
			fix = "chmod 700"
		}
		return backend.Errorf(backend.ErrPermission, "mcp.token", path,
			"mode %04o lets other users at the token; `%s %s` (and, if others may have read it, %s)", perm, fix, path, renew)
	}
	return nil
}

// LoadOrCreateTokenFile returns the token kept at path, creating a new one
// (file 0600, directory 0700) when there is none or it is not a valid
// token. A token file or directory that others can reach is refused, not
// reused: it may have leaked.
func LoadOrCreateTokenFile(path string) (token string, created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, backend.Errorf(backend.ErrInvalid, "mcp.token", dir, "cannot create the token directory: %v", err)
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return "", false, backend.Errorf(backend.ErrInvalid, "mcp.token", dir, "cannot open the token directory (a symbolic link is refused): %v", err)
	}
	err = checkPrivate(d, dir, true, true)
	d.Close()
	if err != nil {
		return "", false, err
	}
	tok, err := readTokenFile(path, true)
	if err == nil && config.CheckMCPToken(path, tok) == nil {
		return tok, false, nil
	}
	if err != nil && !isNotExist(path) {
		return "", false, err
	}
	// Absent, or private but not a valid token: make a new one.
	tok = NewToken()
	// 0600: never readable by others, even for the moment before the
	// rename.
	if werr := atomicfile.Write(path, []byte(tok+"\n"), 0o600); werr != nil {
		return "", false, backend.Errorf(backend.ErrInvalid, "mcp.token", path, "cannot write the token file: %v", werr)
	}
	return tok, true, nil
}

func isNotExist(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}
