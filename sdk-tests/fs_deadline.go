package sdktests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// sparse plants rel as a sparse file of size bytes starting with head, on
// the host side or by a command in the workspace: huge to read, free to
// make. It reports false (and skips the check) when the file system
// cannot hold it.
func (w *ws) sparse(rel, head string, size int64) bool {
	w.t.Helper()
	w.write(rel, head)
	if h := w.hostDir(); h != "" {
		if err := os.Truncate(filepath.Join(h, filepath.FromSlash(w.p(rel))), size); err != nil {
			w.t.Skipf("the workspace's file system cannot hold a sparse file of %d bytes: %v", size, err)
			return false
		}
		return true
	}
	res := w.exec(backend.ExecRequest{Argv: []string{"truncate", "-s", strconv.FormatInt(size, 10), "--", w.p(rel)}})
	if res.ExitCode != 0 {
		w.t.Skipf("truncate -s %d in the workspace: exit %d, %q", size, res.ExitCode, res.Stderr)
		return false
	}
	return true
}

// stopsAtDeadline runs op under a one-second deadline and fails the check
// unless it returns, well within generous slack, an error that wraps
// context.DeadlineExceeded. Without it a read of a sparse file spins the
// host's CPU for many minutes.
func stopsAtDeadline(t *T, what string, op func(ctx context.Context) error) {
	t.Helper()
	const deadline, slack = time.Second, 10 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- op(ctx) }()
	select {
	case err := <-done:
		t.Logf("%s stopped after %s", what, time.Since(start).Round(time.Millisecond))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s under a %s deadline: error %v, want one wrapping context.DeadlineExceeded", what, deadline, err)
		}
	case <-time.After(deadline + slack):
		t.Errorf("%s still running %s past its %s deadline: the file-system loops ignore the context", what, slack, deadline)
	}
}

// checkSparseDeadline: read and grep on an 8 TiB sparse file, and on 8 KiB
// of text followed by a 200 GB hole, stop at the call's deadline.
func checkSparseDeadline(t *T, w *ws) {
	var head strings.Builder
	for head.Len() < 8<<10 {
		head.WriteString("ordinary text before a very large hole\n")
	}
	if !w.sparse("big", "", 8<<40) || !w.sparse("holed.txt", head.String(), 200<<30) {
		return
	}
	fs := w.FS()
	for _, p := range []string{"big", "holed.txt"} {
		stopsAtDeadline(t, "Read("+p+") past its text", func(ctx context.Context) error {
			_, err := fs.Read(ctx, backend.ReadRequest{Path: w.p(p), Offset: 1000, Limit: 10})
			return err
		})
	}
	stopsAtDeadline(t, "Grep for a string not in holed.txt", func(ctx context.Context) error {
		_, err := fs.Grep(ctx, backend.GrepRequest{Pattern: "needle", Path: w.p("holed.txt")})
		return err
	})
}
