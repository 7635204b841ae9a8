package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/host"
)

// The binary of wai these run is built without the Podman tags (see
// waiBinary), so these check what a plain `go build` user gets: ps and gc work on the
// host backend without Podman, and when the config names Podman they say
// how to build it in, after doing the rest.
func TestAdminWithoutPodman(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	r := e.runBinary("preflight", "--config", e.config)
	if r.code != exitChecksFailed || !strings.Contains(r.stdout, "FAIL  podman backend built in") || !strings.Contains(r.stdout, "make build") {
		t.Errorf("wai preflight without the backend: want exit 1 and a failing check saying how to build it in; got %v", r)
	}
	for _, args := range [][]string{{"ps"}, {"gc"}, {"gc", "--all"}} {
		r := e.runBinary(append(args, "--config", e.config)...)
		if r.code != exitOK || r.stderr != "" {
			t.Errorf("wai %s on the host backend, Podman not configured: want exit 0 and no errors; got %v", strings.Join(args, " "), r)
		}
	}
	withPodman := newEnv(t, "\n[backends.podman]\nname_prefix = \"x\"\n")
	for _, args := range [][]string{{"ps"}, {"gc"}} {
		r := withPodman.runBinary(append(args, "--config", withPodman.config)...)
		if r.code != exitError || !strings.Contains(r.stderr, "built without the podman backend") || !strings.Contains(r.stderr, "make build") || r.stdout == "" {
			t.Errorf("wai %s with Podman configured but not built in: want the other backends' answer, then exit 2 saying how to build it in; got %v", strings.Join(args, " "), r)
		}
	}
	r = e.runBinary("ps", "extra")
	if r.code != exitError || !strings.Contains(r.stderr, "takes no arguments") {
		t.Errorf("wai ps extra: want a usage error; got %v", r)
	}
	r = e.runBinary("rm", "--config", e.config)
	if r.code != exitError || !strings.Contains(r.stderr, "name at least one session") {
		t.Errorf("wai rm without names: want a usage error; got %v", r)
	}
}

// psJSON runs wai ps --json with extra flags and returns the sessions.
func psJSON(t *testing.T, e *env, flags ...string) []host.SessionEntry {
	t.Helper()
	r := e.run(append([]string{"ps", "--json", "--config", e.config}, flags...)...)
	if r.code != exitOK {
		t.Fatalf("wai ps --json %v: %v", flags, r)
	}
	var out []host.SessionEntry
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("wai ps --json: %v: %s", err, r.stdout)
	}
	return out
}

func sessionNames(ls []host.SessionEntry) []string {
	var out []string
	for _, s := range ls {
		out = append(out, s.User+"/"+s.Name)
	}
	return out
}

// Host sessions through the CLI, without Podman: ps lists them (each user
// only their own), rm removes exactly the named ones and refuses one a
// live process holds, gc leaves held ones and takes what a killed process
// left. The same session name under two users is two sessions.
func TestAdminHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	for _, user := range []string{"", "alice"} {
		args := []string{"exec", "--session", "proj"}
		if user != "" {
			args = append(args, "--user", user)
		}
		if r := e.run(append(args, "--", "sh", "-c", "echo "+user+"x >f")...); r.code != 0 {
			t.Fatalf("wai exec --user %q --session proj: %v", user, r)
		}
	}
	if r := e.run("exec", "--user", "alice", "--session", "proj", "--", "cat", "f"); r.code != 0 || r.stdout != "alicex\n" {
		t.Errorf("alice's proj does not hold alice's file: %v", r)
	}
	if got := sessionNames(psJSON(t, e)); len(got) != 1 || got[0] != "/proj" {
		t.Errorf("wai ps without --user lists %v, want only the user-less proj", got)
	}
	alice := psJSON(t, e, "--user", "alice")
	if len(alice) != 1 || alice[0].Name != "proj" || alice[0].User != "alice" || alice[0].Backend != "host" ||
		alice[0].Holder != "" || !alice[0].Keep || alice[0].Size <= 0 || alice[0].Created.IsZero() {
		t.Errorf("wai ps --user alice: %+v", alice)
	}
	if got := psJSON(t, e, "--all-users"); len(got) != 2 {
		t.Errorf("wai ps --all-users lists %v, want both", sessionNames(got))
	}
	if r := e.run("ps", "--config", e.config, "--user", "alice"); r.code != 0 || !strings.Contains(r.stdout, "HELD BY") || !strings.Contains(r.stdout, "alice") {
		t.Errorf("wai ps table: %v", r)
	}
	if r := e.run("ps", "--config", e.config, "--user", "Alice"); r.code != exitError || !strings.Contains(r.stderr, "user name") {
		t.Errorf("wai ps --user Alice: want the user-name rule; got %v", r)
	}

	// rm: bob has no proj; alice's goes, the user-less one stays.
	if r := e.run("rm", "--config", e.config, "--user", "bob", "proj"); r.code != exitError || !strings.Contains(r.stderr, `no session of user "bob"`) {
		t.Errorf("wai rm --user bob proj: want not found; got %v", r)
	}
	if r := e.run("rm", "--config", e.config, "--user", "alice", "proj"); r.code != 0 || !strings.Contains(r.stdout, "removed host session proj") {
		t.Errorf("wai rm --user alice proj: %v", r)
	}
	if _, err := os.Stat(alice[0].Workspace); !os.IsNotExist(err) {
		t.Errorf("alice's workspace survived wai rm: %v", err)
	}
	if got := sessionNames(psJSON(t, e, "--all-users")); len(got) != 1 || got[0] != "/proj" {
		t.Errorf("after wai rm --user alice proj: %v", got)
	}
	if r := e.run("rm", "--config", e.config, "--user", "alice", "proj"); r.code != exitError {
		t.Errorf("wai rm of a removed session: want exit 2; got %v", r)
	}
	if r := e.run("rm", "--config", e.config, "--user", "alice", "--force", "proj"); r.code != 0 {
		t.Errorf("wai rm --force of a removed session: want exit 0; got %v", r)
	}

	// A session a live process holds: rm and gc --all leave it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder := e.command(ctx, "exec", "--config", e.config, "--session", "held", "--", "sleep", "120")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	waitHeld(t, e, "held")
	r := e.run("rm", "--config", e.config, "held", "--force")
	if r.code != exitError || !strings.Contains(r.stderr, "in use by pid") || strings.Contains(r.stderr, "policy") {
		t.Errorf("wai rm --force of a held session: want a refusal naming the holder; got %v", r)
	}
	if r := e.run("gc", "--all", "--why", "--config", e.config); r.code != 0 || !strings.Contains(r.stdout, "kept    host workspace") || !strings.Contains(r.stdout, "in use by") {
		t.Errorf("wai gc --all with a held session: want it kept, in use; got %v", r)
	}
	held := psJSON(t, e)
	var heldDir string
	for _, s := range held {
		if s.Name == "held" {
			heldDir = s.Workspace
		}
	}
	if _, err := os.Stat(heldDir); heldDir == "" || err != nil {
		t.Fatalf("the held session's workspace %q: %v", heldDir, err)
	}
	// Killed, the holder leaves its kept session behind: gc --all takes it.
	_ = holder.Process.Kill()
	_ = holder.Wait()
	if r := e.run("gc", "--all", "--config", e.config); r.code != 0 || !strings.Contains(r.stdout, "(session held)") {
		t.Errorf("wai gc --all after the holder died: want the held session removed; got %v", r)
	}
	if _, err := os.Stat(heldDir); !os.IsNotExist(err) {
		t.Errorf("the dead holder's workspace survived gc --all: %v", err)
	}
	// gc --all took the user-less kept proj too, and nothing of alice's
	// was left to take: the user-less proj was the only other session.
	if _, err := os.Stat(filepath.Join(e.state, "host", "proj")); !os.IsNotExist(err) {
		t.Errorf("gc --all left the user-less kept proj no process holds: %v", err)
	}
}

// waitHeld polls wai ps until session has a holder (a process starting).
func waitHeld(t *testing.T, e *env, session string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, s := range psJSON(t, e) {
			if s.Name == session && s.Holder != "" {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("session %s never showed a holder", session)
}

func TestAgo(t *testing.T) {
	for d, want := range map[string]string{"-1s": "0s", "59s": "59s", "61s": "1m01s", "3h5m": "3h05m", "72h": "3d"} {
		dur, err := time.ParseDuration(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := ago(dur); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
	for key, want := range map[string]string{"u.alice.x": "session x of user alice", "x": "session x", "u.bad": "session u.bad"} {
		if got := sessionLabel(key); got != want {
			t.Errorf("sessionLabel(%q) = %q, want %q", key, got, want)
		}
	}
	// A gc item of no session (a Podman files volume) names none.
	for key, want := range map[string]string{"": "", "x": " (session x)"} {
		if got := ofSession(key); got != want {
			t.Errorf("ofSession(%q) = %q, want %q", key, got, want)
		}
	}
	for n, want := range map[int64]string{-1: "?", 0: "0B", 1023: "1023B", 1536: "1.5K", 5 << 30: "5.0G"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
