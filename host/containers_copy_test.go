package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// hooksGuard refuses writes under .git/hooks, judging both the path and
// the resolved one as a policy about a directory must, and records what it
// is asked: the chain asks it on the caller's goroutine.
type hooksGuard struct{ seen []string }

func (*hooksGuard) Name() string { return "hooks" }

func (g *hooksGuard) Check(_ context.Context, req CheckRequest) (Decision, error) {
	g.seen = append(g.seen, req.Action+" "+subject(req)+" ("+req.ResolvedPath+")")
	if req.Action == ActionFSWrite && (strings.HasPrefix(req.Path, ".git/hooks/") || strings.HasPrefix(req.ResolvedPath, ".git/hooks/")) {
		return Decision{Reason: "no writes to git hooks"}, nil
	}
	return Decision{Allow: true}, nil
}

// copy_out writes into the session workspace past the file functions: a
// policy that refuses writes under .git/hooks must refuse it there too,
// judging the same fs.write a write of that path gets, after the
// containers check; elsewhere the copy goes through.
func TestCopyOutIsJudgedAsAWrite(t *testing.T) {
	hooks := &hooksGuard{}
	fc := newFakeContainers()
	k := safetyKernel(t, testConfig(t), nil, fc, WithPolicy(hooks))
	s := session(t, k, "cp")
	ctx := context.Background()
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "box"}); err != nil {
		t.Fatal(err)
	}
	files := func() map[string]string {
		fc.fakeBackend.mu.Lock()
		defer fc.fakeBackend.mu.Unlock()
		out := map[string]string{}
		for p, c := range fc.fakeBackend.files["cp"] {
			out[p] = c
		}
		return out
	}
	hooks.seen = nil
	_, err := s.Containers(ctx, ContainerRequest{Operation: "copy_out", Container: "box", ContainerPath: "/tmp/hook", HostPath: ".git/hooks/pre-commit"})
	if !errors.Is(err, backend.ErrPermission) || !strings.Contains(err.Error(), "denied by policy hooks: no writes to git hooks") ||
		!strings.Contains(err.Error(), ".git/hooks/pre-commit") {
		t.Fatalf("copy_out into .git/hooks: %v; want ErrPermission naming the policy, its reason and the path", err)
	}
	if got := files(); len(got) != 0 {
		t.Fatalf("a refused copy_out wrote %v", got)
	}
	want := []string{"containers.copy_out box ()", "fs.write .git/hooks/pre-commit (.git/hooks/pre-commit)"}
	if strings.Join(hooks.seen, "|") != strings.Join(want, "|") {
		t.Errorf("the policy saw %q, want %q: the containers check, then the write", hooks.seen, want)
	}
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "copy_out", Container: "box", ContainerPath: "/tmp/out.txt", HostPath: "./out/result.txt"}); err != nil {
		t.Fatalf("copy_out to an allowed path: %v", err)
	}
	if got := files()["out/result.txt"]; got != "from box:/tmp/out.txt" {
		t.Errorf("copy_out to an allowed path wrote %q; files %v", got, files())
	}
	// copy_in reads the workspace: not a write, nothing to refuse.
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "copy_in", Container: "box", ContainerPath: "/tmp/h", HostPath: ".git/hooks/pre-commit"}); err != nil {
		t.Errorf("copy_in from .git/hooks: %v; a read is not judged as a write", err)
	}
}

// A workspace filesystem that cannot resolve paths gets no copy_out a
// policy judging fs.write would see: it could not see what is written.
func TestCopyOutFailsClosedWithoutResolvedPath(t *testing.T) {
	fc := newFakeContainers()
	fc.noResolver = true
	k := safetyKernel(t, testConfig(t), nil, fc)
	s := session(t, k, "cp")
	ctx := context.Background()
	if _, err := s.Containers(ctx, ContainerRequest{Operation: "create", Name: "box"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Containers(ctx, ContainerRequest{Operation: "copy_out", Container: "box", ContainerPath: "/tmp/x", HostPath: "x"})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "PathResolver") {
		t.Errorf("copy_out on a filesystem without ResolvePath: %v; want ErrUnavailable naming PathResolver", err)
	}
}
