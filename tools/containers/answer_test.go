package main

import "testing"

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
