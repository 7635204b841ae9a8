package sdktests

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wai-dev/wai/host/backend"
)

// ws is a workspace as a check sees it: the backend's workspace plus
// helpers that fail the check on unexpected errors.
type ws struct {
	backend.Workspace
	b      Backend
	limits backend.Limits
	// dir is the check's own directory when it shares the suite's
	// workspace ("" at the root of a workspace of its own).
	dir string
	t   *T
}

// withDir returns a view of a shared workspace confined (by convention)
// to a directory named after the check.
func (w *ws) withDir(name string) *ws {
	c := *w
	c.dir = dirName(name)
	return &c
}

// prepare creates the check's directory, so that cwd and paths inside it
// are valid from the first call.
func (w *ws) prepare() {
	if w.dir == "" {
		return
	}
	w.t.Helper()
	_, err := w.FS().Write(w.t.Context(), backend.WriteRequest{Path: w.dir + "/.sdktests", Content: "", Mode: backend.WriteOverwrite})
	if err != nil {
		w.t.Fatalf("creating the check's directory %s: %v", w.dir, err)
	}
}

// p returns rel inside the check's directory.
func (w *ws) p(rel string) string {
	if w.dir == "" {
		return rel
	}
	if rel == "" || rel == "." {
		return w.dir
	}
	return path.Join(w.dir, rel)
}

// execErr runs req (its Cwd taken inside the check's directory).
func (w *ws) execErr(req backend.ExecRequest) (backend.ExecResult, error) {
	return w.Shell().Execute(w.t.Context(), req)
}

// exec runs req and fails the check if it could not run.
func (w *ws) exec(req backend.ExecRequest) backend.ExecResult {
	w.t.Helper()
	res, err := w.execErr(req)
	if err != nil {
		w.t.Fatalf("Execute(%s): unexpected error: %v", describe(req), err)
	}
	return res
}

// sh runs a shell string in the check's directory.
func (w *ws) sh(script string) backend.ExecResult {
	w.t.Helper()
	return w.exec(backend.ExecRequest{Shell: script, Cwd: w.p("")})
}

// rootPwd is the physical path of the workspace root as commands see it.
func (w *ws) rootPwd() string {
	w.t.Helper()
	res := w.exec(backend.ExecRequest{Argv: []string{"pwd", "-P"}})
	if res.ExitCode != 0 {
		w.t.Fatalf("pwd -P at the root: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	return strings.TrimSpace(res.Stdout)
}

// write writes content to rel (inside the check's directory), replacing
// what was there.
func (w *ws) write(rel, content string) {
	w.t.Helper()
	if _, err := w.FS().Write(w.t.Context(), backend.WriteRequest{Path: w.p(rel), Content: content, Mode: backend.WriteOverwrite}); err != nil {
		w.t.Fatalf("Write(%s): %v", w.p(rel), err)
	}
}

// content reads rel back as text (lines joined with "\n").
func (w *ws) content(rel string) string {
	w.t.Helper()
	res, err := w.FS().Read(w.t.Context(), backend.ReadRequest{Path: w.p(rel)})
	if err != nil {
		w.t.Fatalf("Read(%s): %v", w.p(rel), err)
	}
	return strings.Join(res.Lines, "\n")
}

// exists reports whether rel exists (following symlinks inside the root).
func (w *ws) exists(rel string) bool {
	w.t.Helper()
	_, err := w.FS().Stat(w.t.Context(), w.p(rel))
	switch {
	case err == nil:
		return true
	case errors.Is(err, backend.ErrNotFound):
		return false
	}
	w.t.Fatalf("Stat(%s): %v", w.p(rel), err)
	return false
}

// hostDir is the host directory behind the workspace ("" if unknown).
func (w *ws) hostDir() string {
	if w.b.Caps.HostDir == nil {
		return ""
	}
	return w.b.Caps.HostDir(w.Workspace)
}

// symlink plants a symlink at rel (inside the check's directory) pointing
// at target, verbatim: what a command in the sandbox could do.
func (w *ws) symlink(target, rel string) {
	w.t.Helper()
	if h := w.hostDir(); h != "" {
		if err := os.Symlink(target, filepath.Join(h, filepath.FromSlash(w.p(rel)))); err != nil {
			w.t.Fatalf("planting symlink %s -> %s: %v", w.p(rel), target, err)
		}
		return
	}
	w.plantByShell("ln", "-s", "--", target, w.p(rel))
}

// mkfifo plants a named pipe at rel.
func (w *ws) mkfifo(rel string) {
	w.t.Helper()
	if h := w.hostDir(); h != "" {
		if err := syscall.Mkfifo(filepath.Join(h, filepath.FromSlash(w.p(rel))), 0o666); err != nil {
			w.t.Fatalf("planting FIFO %s: %v", w.p(rel), err)
		}
		return
	}
	w.plantByShell("mkfifo", "--", w.p(rel))
}

func (w *ws) plantByShell(argv ...string) {
	w.t.Helper()
	if !w.b.Caps.RealProcesses {
		w.t.Fatalf("sdktests: cannot plant %v: no HostDir and no real processes", argv)
	}
	res := w.exec(backend.ExecRequest{Argv: argv})
	if res.ExitCode != 0 {
		w.t.Fatalf("planting with %v: exit %d, stderr %q", argv, res.ExitCode, res.Stderr)
	}
}

// describe renders a request for failure messages, eliding long fields.
func describe(req backend.ExecRequest) string {
	var b strings.Builder
	if req.Shell != "" {
		fmt.Fprintf(&b, "shell %q", elide(req.Shell))
	} else {
		fmt.Fprintf(&b, "argv %q", elideAll(req.Argv))
	}
	if req.Cwd != "" {
		fmt.Fprintf(&b, " cwd=%q", req.Cwd)
	}
	if req.Timeout != 0 {
		fmt.Fprintf(&b, " timeout=%s", req.Timeout)
	}
	if len(req.Env) > 0 {
		fmt.Fprintf(&b, " env=%d vars (%s)", len(req.Env), req.EnvMode)
	}
	if req.Stdin != "" {
		fmt.Fprintf(&b, " stdin=%d bytes", len(req.Stdin))
	}
	return b.String()
}

func elide(s string) string {
	if len(s) <= 120 {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:100], len(s))
}

func elideAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = elide(s)
	}
	return out
}

// wantKind fails the check unless err is of the given kind.
func wantKind(t *T, what string, err, kind error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: got no error, want %v", what, kind)
		return
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: got error %q of kind %v, want kind %v", what, err, backend.KindOf(err), kind)
	}
}
