package backend

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidUser(t *testing.T) {
	for _, u := range []string{"alice", "_svc", "a1-b_2", strings.Repeat("a", MaxUserName)} {
		if err := ValidUser(u); err != nil {
			t.Errorf("ValidUser(%q): %v", u, err)
		}
	}
	for _, u := range []string{"", "Alice", "1a", "-a", "a.b", "a/b", "..", "a b", "é", strings.Repeat("a", MaxUserName+1)} {
		if err := ValidUser(u); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "user name") {
			t.Errorf("ValidUser(%q) = %v, want ErrInvalid naming the rule", u, err)
		}
	}
	if err := (WorkspaceSpec{Session: "s", User: "Bob"}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("a spec with user Bob: %v, want ErrInvalid", err)
	}
}

// Two users' sessions of the same name have different keys, neither of
// which a session without a user can be named.
func TestSessionKey(t *testing.T) {
	a, b := SessionKey("alice", "proj"), SessionKey("bob", "proj")
	if a == b || a == "proj" || SessionKey("", "proj") != "proj" {
		t.Fatalf("keys: alice %q, bob %q, none %q", a, b, SessionKey("", "proj"))
	}
	if !IsUserKey(a) || IsUserKey("proj") {
		t.Errorf("IsUserKey: %q %v, proj %v", a, IsUserKey(a), IsUserKey("proj"))
	}
	for key, want := range map[string][2]string{a: {"alice", "proj"}, "proj": {"", "proj"}, SessionKey("a-b", "c.d"): {"a-b", "c.d"}} {
		u, s, ok := SplitSessionKey(key)
		if !ok || u != want[0] || s != want[1] {
			t.Errorf("SplitSessionKey(%q) = %q %q %v, want %q", key, u, s, ok, want)
		}
	}
	for _, key := range []string{"u.", "u.alice", "u.alice.", "u.Alice.x"} {
		if _, _, ok := SplitSessionKey(key); ok {
			t.Errorf("SplitSessionKey(%q) accepted a name SessionKey cannot make", key)
		}
	}
}

func TestHolder(t *testing.T) {
	me := CurrentHolder()
	if !me.Alive() || !strings.Contains(me.String(), "pid") {
		t.Fatalf("this process: %+v alive %v", me, me.Alive())
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := &Holder{Host: me.Host, PID: cmd.Process.Pid, Start: 1}
	if dead.Alive() {
		t.Errorf("an exited process counts as alive: %+v", dead)
	}
	reused := &Holder{Host: me.Host, PID: me.PID, Start: me.Start + 1}
	if reused.Alive() {
		t.Errorf("a live pid with another start time (pid reuse) counts as alive")
	}
	if other := (&Holder{Host: me.Host + "-elsewhere", PID: 1}); !other.Alive() {
		t.Errorf("a holder on another host must count as alive: it cannot be checked")
	}
	if (*Holder)(nil).Alive() {
		t.Errorf("no holder counts as alive")
	}
}

func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	n, err := DiskUsage(t.Context(), dir)
	if err != nil || n < 64<<10 || n > 1<<30 {
		t.Errorf("DiskUsage = %d, %v; want at least the 64 KiB file and far less than the 1 TiB sparse one", n, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := DiskUsage(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("DiskUsage with a cancelled context: %v", err)
	}
}
