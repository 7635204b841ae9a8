package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wai-dev/wai/internal/tooltest"
)

// The default image is useful, not minimal: an agent's first moves are
// pytest, json, sqlite3, venv, git and the usual command-line tools. This
// runs a small pytest suite through shell_execute in the image that
// scripts/setup-podman.sh builds (the smoke test a new user runs first),
// and checks the rest of what the image recipe promises.
func TestDefaultImageRunsPytest(t *testing.T) {
	// Alongside the other tests: it waits on pip and pytest in its own
	// kernel and container.
	t.Parallel()
	// This is about the Podman image.
	pod := tooltest.Only(t, func(b tooltest.Backend) bool { return b.Name == "podman" })
	tooltest.RunOn(t, pod, []string{"tools/shell"}, nil, func(t *testing.T, e *tooltest.Env) {
		const session = "image-smoke"
		write := `{"command":["sh","-c","mkdir -p proj && cd proj && ` +
			`printf 'import json, sqlite3\\n\\ndef roundtrip(x):\\n    return json.loads(json.dumps(x))\\n\\ndef count(rows):\\n    db = sqlite3.connect(\":memory:\")\\n    db.execute(\"create table t(x)\")\\n    db.executemany(\"insert into t values (?)\", [(r,) for r in rows])\\n    return db.execute(\"select count(*) from t\").fetchone()[0]\\n' > lib.py && ` +
			`printf 'from lib import roundtrip, count\\n\\ndef test_roundtrip():\\n    assert roundtrip({\"a\": [1, 2]}) == {\"a\": [1, 2]}\\n\\ndef test_count():\\n    assert count([1, 2, 3]) == 3\\n\\ndef test_fails_on_purpose():\\n    assert count([]) == 1\\n' > test_lib.py"]}`
		if res, err := e.CallIn(t, session, "shell_execute", write); err != nil || !res.OK {
			t.Fatalf("writing the suite: %+v, %v", res, err)
		}
		res, err := e.CallIn(t, session, "shell_execute", `{"command":["python3","-m","pytest","-q","-p","no:cacheprovider","proj"],"timeout_seconds":60}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Message, "1 failed, 2 passed") {
			t.Fatalf("pytest in the default image: want 1 failed, 2 passed:\n%s", res.Message)
		}
		// The rest of the recipe: a virtualenv with pip, unittest, git and
		// the tools an agent reaches for.
		check := `python3 -m venv /tmp/venv && /tmp/venv/bin/python -m pip --version >/dev/null && ` +
			`python3 -m unittest --help >/dev/null && git --version >/dev/null && ` +
			`{ which sqlite3 jq make gawk sed grep diff patch ps file less tar gzip xz unzip find >/dev/null || echo missing; }; echo checked`
		res, err = e.CallIn(t, session, "shell_execute", `{"command":["sh","-c",`+jsonString(check)+`],"timeout_seconds":120}`)
		// Nothing missing: stdout is the final word alone.
		if err != nil || !res.OK || !strings.Contains(res.Message, "STDOUT:\nchecked\n") {
			t.Fatalf("the image lacks what its recipe promises: %+v, %v", res, err)
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
