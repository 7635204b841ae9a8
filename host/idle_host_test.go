package host_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

// eventWaiter is a slog handler that lets a test wait for an event of a
// session instead of sleeping for a guessed time.
type eventWaiter struct {
	mu     sync.Mutex
	seen   []string // "event session"
	notify chan struct{}
}

func newEventWaiter() *eventWaiter { return &eventWaiter{notify: make(chan struct{}, 1)} }

func (w *eventWaiter) Enabled(context.Context, slog.Level) bool { return true }
func (w *eventWaiter) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *eventWaiter) WithGroup(string) slog.Handler            { return w }
func (w *eventWaiter) Handle(_ context.Context, r slog.Record) error {
	session := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "session" {
			session = a.Value.String()
		}
		return true
	})
	w.mu.Lock()
	w.seen = append(w.seen, r.Message+" "+session)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
	return nil
}

// wait returns once an event whose name starts with prefix was logged for
// session, failing the test after a minute (a bound no loaded machine
// reaches: the events come every few tens of milliseconds).
func (w *eventWaiter) wait(t *testing.T, prefix, session string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		w.mu.Lock()
		for _, e := range w.seen {
			if name, s, _ := strings.Cut(e, " "); strings.HasPrefix(name, prefix) && s == session {
				w.mu.Unlock()
				return
			}
		}
		w.mu.Unlock()
		select {
		case <-w.notify:
		case <-deadline:
			t.Fatalf("no %s… event for session %s within a minute", prefix, session)
		}
	}
}

func hostKernel(t *testing.T, idle time.Duration, opts ...host.Option) (*host.Kernel, *eventWaiter) {
	t.Helper()
	cfg := host.DefaultConfig()
	cfg.Backend = "host"
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	cfg.SessionIdleTimeout = idle
	ev := newEventWaiter()
	return startKernel(t, cfg, append([]host.Option{host.WithLogger(slog.New(ev))}, opts...)...), ev
}

// A session left idle past session_idle_timeout keeps its files and its
// name: the next call reads what the last one wrote (the reaper used to
// close the session, removing a throwaway workspace with its files).
func TestIdleSessionKeepsItsFilesOnHost(t *testing.T) {
	k, ev := hostKernel(t, 50*time.Millisecond)
	ctx := t.Context()
	s := openSession(t, k, "") // throwaway, like an MCP session
	if _, err := s.FS().Write(ctx, backend.WriteRequest{Path: "keep.txt", Content: "kept\n"}); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, "session.idle", s.Name())
	same, err := k.Session(ctx, s.Name(), host.SessionOptions{})
	if err != nil || same != s {
		t.Fatalf("after the idle timeout the session is not the same one: %v", err)
	}
	got, err := s.FS().Read(ctx, backend.ReadRequest{Path: "keep.txt"})
	if err != nil || len(got.Lines) != 1 || got.Lines[0] != "kept" {
		t.Fatalf("read_file after the idle timeout: %+v, %v; want the file written before", got, err)
	}
	res, err := s.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"cat", "keep.txt"}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "kept" {
		t.Fatalf("cat after the idle timeout: %+v, %v", res, err)
	}
}

// Users are kept apart in the kernel: the same session name under two
// users is two sessions with their own files; neither user, nor a caller
// without a user, can open the other's by naming its key.
func TestUsersKeptApartOnHost(t *testing.T) {
	k, _ := hostKernel(t, 0)
	ctx := t.Context()
	alice, err := k.Session(ctx, "proj", host.SessionOptions{User: "alice", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := k.Session(ctx, "proj", host.SessionOptions{User: "bob", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if alice == bob || alice.Name() == bob.Name() || alice.User() != "alice" {
		t.Fatalf("alice's and bob's proj are one session: %q %q", alice.Name(), bob.Name())
	}
	if _, err := alice.FS().Write(ctx, backend.WriteRequest{Path: "secret", Content: "alice's"}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.FS().Stat(ctx, "secret"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("bob sees alice's file: %v", err)
	}
	res, err := bob.Shell().Execute(ctx, backend.ExecRequest{Argv: []string{"ls", "-A"}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "" {
		t.Fatalf("bob's workspace is not empty: %+v %v", res, err)
	}
	for _, user := range []string{"bob", ""} {
		if _, err := k.Session(ctx, alice.Name(), host.SessionOptions{User: user}); user != "" && !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("user %q opened alice's session by its key %q: %v", user, alice.Name(), err)
		}
	}
	other, _ := hostKernel(t, 0) // another process: nothing open, so the key is just a name
	if _, err := other.Session(ctx, alice.Name(), host.SessionOptions{}); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("a caller without a user opened alice's key %q in a new kernel: %v", alice.Name(), err)
	}
	if _, err := k.Session(ctx, "x", host.SessionOptions{User: "Alice"}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("user name Alice accepted: %v", err)
	}
	if _, err := k.Session(ctx, strings.Repeat("s", 60), host.SessionOptions{User: "alice"}); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "too long for user") {
		t.Errorf("an over-long session name for a user: %v", err)
	}
}

// WithUser makes every session without a user that user's: the CLI's
// --user.
func TestWithUser(t *testing.T) {
	k, _ := hostKernel(t, 0, host.WithUser("carol"))
	s, err := k.Session(t.Context(), "n", host.SessionOptions{})
	if err != nil || s.User() != "carol" || s.Name() != backend.SessionKey("carol", "n") {
		t.Fatalf("session of a kernel WithUser(carol): %v %q %q", err, s.User(), s.Name())
	}
	cfg := host.DefaultConfig()
	cfg.StateDir = t.TempDir()
	cfg.BundledTools = []string{}
	if _, err := host.New(t.Context(), cfg, host.WithUser("no.dots")); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("WithUser(no.dots): %v", err)
	}
}
