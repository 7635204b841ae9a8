package host

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

const (
	// repoTarball is where a cloned repository is provisioned in the
	// container's home before it is unpacked.
	repoTarball = ".wai-try-repo.tar"
	// maxRepoBytes bounds the tarball of a clone: it is held in memory
	// and provisioned whole. A shallow clone of a project to try is far
	// smaller.
	maxRepoBytes = 64 << 20
	// cloneTimeout bounds the host's git clone.
	cloneTimeout = 5 * time.Minute
)

// repoMarkers decide a repository's purpose, first match wins: the order
// of the issue (a Rust crate with a Python helper script is Rust).
var repoMarkers = []struct{ file, purpose string }{
	{"Cargo.toml", "rust"},
	{"pyproject.toml", "python"},
	{"setup.py", "python"},
	{"requirements.txt", "python"},
	{"package.json", "node"},
	{"go.mod", "go"},
}

// detectPurpose picks the profile for a repository whose top-level files
// exists reports. A Dockerfile alone gives general, marker Dockerfile:
// tryDockerfile builds it or says why not (see RATIONALE.md).
func detectPurpose(exists func(name string) bool) (purpose, marker, note string) {
	for _, m := range repoMarkers {
		if exists(m.file) {
			return m.purpose, m.file, ""
		}
	}
	if exists("Dockerfile") {
		return "general", "Dockerfile", ""
	}
	return "general", "", ""
}

// repoSource checks a repo_url: an https, http, ssh, git or file URL, or a
// relative path in the session workspace (returned as workspace).
func repoSource(raw string) (workspace string, err error) {
	if strings.HasPrefix(raw, "-") || strings.ContainsAny(raw, "\x00\n\r") {
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", raw, "repo_url is not a URL or a path")
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		switch u.Scheme {
		case "https", "http", "ssh", "git", "file":
			return "", nil
		}
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", raw, "repo_url scheme %q: use https, http, ssh, git or file", u.Scheme)
	}
	clean := path.Clean(filepath.ToSlash(raw))
	// A colon would be a URL url.Parse could not read (ext::…): never a path.
	if strings.Contains(clean, ":") || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", backend.Errorf(backend.ErrInvalid, "containers.create", raw,
			"repo_url: give a git URL, or a path relative to the session workspace (a host directory: file:///path)")
	}
	return clean, nil
}

// localRepoPath is the host path a file:// repo_url reads, "" otherwise.
func localRepoPath(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme == "file" {
		return filepath.Clean(u.Path)
	}
	return ""
}

// clonedRepo is a repository try-repo fetched: its purpose and either the
// tarball of a host clone or a path in the session workspace.
type clonedRepo struct {
	name, purpose, marker string
	notes                 []string
	tarball               []byte
	workspace             string // the repository is this workspace path
	dir                   string // the host clone, removed by remove
	root, commit          string // the clone's work tree and HEAD (a URL's)
}

func (r *clonedRepo) remove() {
	if r.dir != "" {
		_ = os.RemoveAll(r.dir)
	}
}

// cloneRepo fetches repo_url for try-repo: a workspace path is looked at
// where it is; a URL is cloned (--depth 1) on the host, where the network
// and the URL's host are, and packed for the container.
func (s *Session) cloneRepo(ctx context.Context, raw string) (*clonedRepo, error) {
	wsPath, err := repoSource(raw)
	if err != nil {
		return nil, err
	}
	if wsPath != "" {
		return s.workspaceRepo(ctx, wsPath)
	}
	dir, err := os.MkdirTemp("", "wai-try-repo-")
	if err != nil {
		return nil, backend.Errorf(backend.ErrUnavailable, "containers.create", raw, "temporary directory: %v", err)
	}
	r := &clonedRepo{dir: dir, name: repoName(raw)}
	if err := gitClone(ctx, raw, filepath.Join(dir, "repo")); err != nil {
		r.remove()
		return nil, err
	}
	root := filepath.Join(dir, "repo")
	r.root, r.commit = root, headCommit(ctx, root)
	var note string
	r.purpose, r.marker, note = detectPurpose(func(n string) bool { return fileExists(filepath.Join(root, n)) })
	r.notes = appendNote(r.notes, note)
	if r.tarball, err = tarDir(root); err != nil {
		r.remove()
		return nil, backend.Errorf(backend.ErrInvalid, "containers.create", raw, "packing the clone: %v", err)
	}
	return r, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// workspaceRepo detects the purpose of a directory in the session
// workspace, which the container sees at /workspace.
func (s *Session) workspaceRepo(ctx context.Context, rel string) (*clonedRepo, error) {
	ws, _, err := s.workspace(ctx)
	if err != nil {
		return nil, err
	}
	fsys := ws.FS()
	fi, statErr := fsys.Stat(ctx, rel)
	if statErr == nil && fi.Kind != backend.KindDir {
		return nil, backend.Errorf(backend.ErrInvalid, "containers.create", rel, "repo_url: not a directory of the session workspace")
	}
	r := &clonedRepo{workspace: rel, name: path.Base(rel)}
	var note string
	r.purpose, r.marker, note = detectPurpose(func(n string) bool {
		fi, err := fsys.Stat(ctx, path.Join(rel, n))
		return err == nil && fi.Kind == backend.KindFile
	})
	// A marker file proves the directory even where Stat knows no
	// directories (a backend of files only).
	if statErr != nil && r.marker == "" {
		return nil, backend.Errorf(backend.ErrNotFound, "containers.create", rel, "repo_url: no such directory in the session workspace")
	}
	r.notes = appendNote(r.notes, note)
	return r, nil
}

// gitClone runs git clone --depth 1 with only the URL schemes repoSource
// accepts (no ext:: helpers), no prompts and no submodules.
func gitClone(ctx context.Context, src, dst string) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return backend.Errorf(backend.ErrUnavailable, "containers.create", src, "try-repo clones on the host and git is not installed there: apt-get install git")
	}
	cctx, cancel := context.WithTimeout(ctx, cloneTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, git, "-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
		"-c", "protocol.http.allow=always", "-c", "protocol.ssh.allow=always", "-c", "protocol.git.allow=always",
		"-c", "protocol.file.allow=always", "clone", "--quiet", "--depth", "1", "--no-recurse-submodules", "--", src, dst)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "SSH_ASKPASS=/bin/false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return backend.Errorf(backend.ErrUnavailable, "containers.create", src, "git clone failed (%v): %s; check the URL and that this machine can reach it",
			err, strings.TrimSpace(tail(stderr.String(), 400)))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// repoName is the directory a repository gets: its URL's last element
// without ".git".
func repoName(raw string) string {
	u := strings.TrimRight(raw, "/")
	if p, err := url.Parse(u); err == nil && p.Path != "" {
		u = p.Path
	}
	n := strings.TrimSuffix(path.Base(filepath.ToSlash(u)), ".git")
	if n == "" || n == "." || n == "/" || strings.HasPrefix(n, "-") {
		return "repo"
	}
	return n
}

// repoDest is where the repository goes in the container: in the
// workdir given, else in the mounted workspace, else in the home.
func repoDest(workdir string, mountCwd bool, name string) string {
	switch {
	case workdir != "":
		return path.Join(workdir, name)
	case mountCwd:
		return path.Join("/workspace", name)
	}
	// The managed containers' home (every backend's: docs/containers.md).
	return path.Join("/home/wai", name)
}

// tarDir packs dir (regular files, directories and symlinks, which tar
// keeps as links) into an uncompressed tarball of at most maxRepoBytes.
func tarDir(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = filepath.ToSlash(rel), 0, 0, "", ""
		if fi.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			if err := copyFile(tw, p); err != nil {
				return err
			}
		}
		if buf.Len() > maxRepoBytes {
			return errors.New("the clone is larger than 64 MiB: clone it in the container instead (exec git clone)")
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	return buf.Bytes(), err
}

func copyFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// shellQuote quotes s for sh -c.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
