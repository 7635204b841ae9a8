package main

import (
	"encoding/json"
	"testing"
)

// The lists and the end of a new container's answer are worded in one
// place for every kind; these pin the words the model reads.
func TestAnswerWording(t *testing.T) {
	box := info{Name: "box", Image: "img", State: "running"}
	for _, c := range []struct {
		p    params
		r    response
		want string
	}{
		{params{Operation: "list"}, response{}, "No containers."},
		{params{Operation: "list"}, response{Containers: []info{box, {Name: "b2", Image: "i2", State: "exited"}}},
			"Containers:\n- box (img, running)\n- b2 (i2, exited)"},
		{params{Operation: "destroy_all"}, response{Containers: []info{box}}, "Destroyed:\n- box (img, running)"},
		{params{Operation: "list"}, response{Containers: []info{{Name: "k", Image: "i", State: "exited", Persistent: true, EarlierSession: true}}, Notes: []string{"k outlived"}},
			"Containers:\n- k (i, exited, persistent, from an earlier session)\nNotes:\n- k outlived"},
		{params{Operation: "stop"}, response{Container: &info{Name: "k", Image: "i", State: "exited"}},
			"Stopped k (i, exited); its files are kept: operation start runs it again, destroy removes it for good."},
		{params{Operation: "start"}, response{Container: &box}, "Started box (img, running); its files are as they were. Run commands with operation exec."},
		{params{Operation: "status"}, response{Container: &box, Jobs: []job{{ID: "j0123456789ab", Command: []string{"make"}, State: "running"},
			{ID: "j0123456789ac", Command: []string{"true"}, State: "exited"}}},
			"box (img, running)\nBackground jobs (poll with exec_poll and the job_id):\n- j0123456789ab: make (running)\n- j0123456789ac: true (ended with exit code 0)"},
		{params{Operation: "list_snapshots"}, response{}, "No snapshots."},
		{params{Operation: "list_snapshots"}, response{Snapshots: []snapshot{{Name: "s", Container: "box", Created: "today"}}},
			"Snapshots:\n- s (of container box, today)"},
		{params{Operation: "list_networks"}, response{}, "No networks."},
		{params{Operation: "list_networks"}, response{Networks: []netInfo{{Name: "n", Internal: true}}}, "Networks:\n- n (internal)"},
		{params{Operation: "list_networks"}, response{Networks: []netInfo{{Name: "n", Persistent: true, Project: "p", Containers: []string{"a", "b"}}}},
			"Networks:\n- n (with egress, persistent, compose project p, containers a b)"},
		{params{Operation: "list"}, response{Containers: []info{{Name: "b", Image: "i", State: "running", Persistent: true, Purpose: "go",
			EnvKeys: []string{"K", "L"}, Health: "healthy", Network: "n"}}},
			"Containers:\n- b (i, running, persistent, purpose go, env K L, healthy, network n)"},
		{params{Operation: "create"}, response{Container: &box, Setup: []execResult{{ExitCode: 0}, {ExitCode: 2}}},
			"Created box (img, running).\nSetup 1: exit 0\nSetup 2: exit 2\nRun commands with operation exec and container \"box\"."},
		{params{Operation: "restore", Snapshot: "s"}, response{Container: &box, Notes: []string{"n1"}},
			"Restored snapshot s as box (img, running).\nRun commands with operation exec and container \"box\".\nNotes:\n- n1"},
	} {
		if got := answer(c.p, c.r); !got.OK || got.Message != c.want {
			t.Errorf("%s: %q (ok %v), want %q", c.p.Operation, got.Message, got.OK, c.want)
		}
	}
}

// compose_down's answer carries the states from before the removal:
// they must not reach the model, which would believe the services run.
func TestComposeDownSaysRemoved(t *testing.T) {
	var r response
	if err := json.Unmarshal([]byte(`{"operation":"compose_down","compose":{"project":"demo","network":"demo-net",`+
		`"services":[{"service":"web","container":"demo-web","image":"img","state":"running","running":true}]}}`), &r); err != nil {
		t.Fatal(err)
	}
	got := answer(params{Operation: "compose_down", Project: "demo"}, r)
	want := "Stopped and removed project demo: services web (container demo-web); network demo-net. Nothing of it runs now."
	if !got.OK || got.Message != want {
		t.Errorf("compose_down: %q, want %q", got.Message, want)
	}
}
