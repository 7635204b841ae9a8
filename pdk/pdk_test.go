//go:build !wasip1

package pdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wai-dev/wai/pdk/internal/imports"
)

func resetRegistry(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		registry.name, registry.version, registry.caps, registry.tools = "", "", nil, nil
		registry.policy, registry.actions, registry.errs = nil, nil, nil
	})
}

type inner struct {
	Key string `json:"key"`
}

type embedded struct {
	Shared string `json:"shared,omitempty" jsonschema:"from an embedded struct"`
}

type shellParams struct {
	embedded
	Command []string          `json:"command" jsonschema:"argv, no shell" maxItems:"64"`
	Cwd     string            `json:"cwd,omitempty" pattern:"^[^/]"`
	Env     map[string]string `json:"env,omitempty"`
	Timeout float64           `json:"timeout_seconds,omitempty" minimum:"1" maximum:"120" default:"30"`
	Capture *bool             `json:"capture_output,omitempty" default:"true"`
	Mode    string            `json:"mode" enum:"a, b ,c" default:"a"`
	Level   int               `json:"level,omitempty" enum:"1,2"`
	Count   uint8             `json:"count,omitzero"`
	Nested  inner             `json:"nested"`
	Items   []inner           `json:"items,omitempty"`
	Any     any               `json:"any,omitempty"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	Skipped string            `json:"-"`
	NoTag   bool
}

func TestSchema(t *testing.T) {
	got, err := Schema[shellParams]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"shared":{"type":"string","description":"from an embedded struct"},` +
		`"command":{"type":"array","description":"argv, no shell","items":{"type":"string"},"maxItems":64},` +
		`"cwd":{"type":"string","pattern":"^[^/]"},` +
		`"env":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"timeout_seconds":{"type":"number","minimum":1,"maximum":120,"default":30},` +
		`"capture_output":{"type":"boolean","default":true},` +
		`"mode":{"type":"string","enum":["a","b","c"],"default":"a"},` +
		`"level":{"type":"integer","enum":[1,2]},` +
		`"count":{"type":"integer","minimum":0},` +
		`"nested":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"],"additionalProperties":false},` +
		`"items":{"type":"array","items":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"],"additionalProperties":false}},` +
		`"any":{},"raw":{},"NoTag":{"type":"boolean"}},` +
		`"required":["command","mode","nested","NoTag"],"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("schema is not valid JSON")
	}
}

type recursive struct {
	Children []recursive `json:"children"`
}

func TestSchemaErrors(t *testing.T) {
	for name, f := range map[string]func() (json.RawMessage, error){
		"not a struct": Schema[string],
		"recursive":    Schema[recursive],
		"int map keys": Schema[struct{ M map[int]string }],
		"channel":      Schema[struct{ C chan int }],
		"bad minimum": Schema[struct {
			N int `minimum:"x"`
		}],
		"bad enum": Schema[struct {
			N int `enum:"1,two"`
		}],
		"bad max length": Schema[struct {
			S string `maxLength:"-1"`
		}],
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A pointer to a struct is its struct.
	if s, err := Schema[*inner](); err != nil || !strings.Contains(string(s), `"key"`) {
		t.Errorf("pointer params: %s, %v", s, err)
	}
}

func TestToolDispatch(t *testing.T) {
	resetRegistry(t)
	type p struct {
		Name string `json:"name"`
		N    int    `json:"n,omitempty"`
	}
	Declare("t", "1.2.3", CapShell)
	var seen *Call
	Tool("greet", "Greets.", func(c *Call, in p) (Result, error) {
		seen = c
		switch in.Name {
		case "":
			return Fail("name is empty (n=%d)", in.N), nil
		case "error":
			return Result{}, Errorf(KindPermission, "not you")
		case "plain":
			return Result{}, errors.New("plain error")
		case "panic":
			panic("kaboom")
		case "unencodable":
			return OK("x", func() {}), nil
		}
		return OK("hi "+in.Name, map[string]int{"n": in.N}), nil
	}, ReadOnly(), Destructive(false), Idempotent(), OpenWorld(false), Title("Greeter"))

	var d map[string]any
	if err := json.Unmarshal(handleDescribe(nil), &d); err != nil {
		t.Fatal(err)
	}
	if d["abi"] != float64(1) || d["name"] != "t" || d["version"] != "1.2.3" || d["kind"] != "tool" || fmt.Sprint(d["capabilities"]) != "[shell]" {
		t.Errorf("description = %v", d)
	}
	tool := d["tools"].([]any)[0].(map[string]any)
	if fmt.Sprint(tool["annotations"]) != "map[destructive_hint:false idempotent_hint:true open_world_hint:false read_only_hint:true title:Greeter]" {
		t.Errorf("annotations = %v", tool["annotations"])
	}

	call := func(params string) string {
		return string(handleCall([]byte(`{"tool":"greet","params":` + params + `,"call_id":"c1","session":"s","deadline_ms":4102444800000,"timeout_ms":5}`)))
	}
	for params, want := range map[string]string{
		`{"name":"Ada","n":2}`:   `{"ok":true,"message":"hi Ada","value":{"n":2}}`,
		`{"name":"","n":7}`:      `{"ok":false,"message":"name is empty (n=7)"}`,
		`{"name":"error"}`:       `{"error":{"kind":"permission","message":"not you"}}`,
		`{"name":"plain"}`:       `{"error":{"kind":"internal","message":"plain error"}}`,
		`{"name":"x","extra":1}`: `{"error":{"kind":"invalid","message":"greet: bad params: json: unknown field \"extra\""}}`,
		`{"name":"unencodable"}`: `{"error":{"kind":"internal","message":"tool greet: cannot encode its result: json: unsupported type: func()"}}`,
	} {
		if got := call(params); got != want {
			t.Errorf("params %s:\n got %s\nwant %s", params, got, want)
		}
	}
	if got := call(`{"name":"panic"}`); !strings.HasPrefix(got, `{"error":{"kind":"internal","message":"tool greet panicked: kaboom`) {
		t.Errorf("panic: %s", got)
	}
	if seen == nil || seen.ID != "c1" || seen.Session != "s" || seen.Tool != "greet" || seen.Deadline.Year() != 2100 {
		t.Errorf("call context = %+v", seen)
	}
	if got := string(handleCall([]byte(`{"tool":"nope"}`))); !strings.Contains(got, `"kind":"not_found"`) {
		t.Errorf("unknown tool: %s", got)
	}
	if got := string(handleCheck([]byte(`{}`))); !strings.Contains(got, `"kind":"invalid"`) {
		t.Errorf("check on a tool plugin: %s", got)
	}
}

func TestRegistrationMistakes(t *testing.T) {
	resetRegistry(t)
	if got := string(handleDescribe(nil)); !strings.Contains(got, `"message":"no pdk.Declare`) {
		t.Errorf("undeclared: %s, want the message to start with what is missing (no nameless \"plugin :\")", got)
	}
	Declare("m", "1")
	if got := string(handleDescribe(nil)); !strings.Contains(got, "registers no tool and no policy") {
		t.Errorf("empty: %s", got)
	}
	Tool("a", "", func(*Call, struct{ C chan int }) (Result, error) { return Result{}, nil })
	Tool("a", "", func(*Call, struct{}) (Result, error) { return Result{}, nil })
	Policy(func(CheckRequest) Decision { return Allow() })
	got := string(handleDescribe(nil))
	for _, want := range []string{`"kind":"invalid"`, "tool a: field C", "tool a registered twice", "either a tool plugin or a policy plugin"} {
		if !strings.Contains(got, want) {
			t.Errorf("describe %s lacks %q", got, want)
		}
	}
}

func TestPolicyDispatch(t *testing.T) {
	resetRegistry(t)
	Declare("p", "1")
	Policy(func(r CheckRequest) Decision {
		switch {
		case r.Action == ActionFSRemove:
			return Decision{} // a deny without a reason gets one
		case len(r.Command) > 0 && r.Command[0] == "rm":
			return Deny("no %s in %s", r.Command[0], r.Cwd)
		case r.Shell == "panic":
			panic("policy bug")
		case len(r.Command) > 0 && r.Command[0] == "curl":
			return Ask("commands", "%s is not listed", r.Command[0])
		}
		return Allow()
	}, ActionShellExec, ActionFSRemove)
	if got := string(handleDescribe(nil)); got != `{"abi":1,"name":"p","version":"1","kind":"policy","actions":["shell.exec","fs.remove"]}` {
		t.Errorf("describe = %s", got)
	}
	for in, want := range map[string]string{
		`{"action":"shell.exec","command":["rm","-rf","/"],"cwd":"w"}`: `{"decision":"deny","reason":"no rm in w"}`,
		`{"action":"shell.exec","command":["ls"]}`:                     `{"decision":"allow"}`,
		`{"action":"shell.exec","command":["curl"]}`:                   `{"decision":"ask","reason":"curl is not listed","config_key":"commands"}`,
		`{"action":"fs.remove","path":"x"}`:                            `{"decision":"deny","reason":"denied by policy p"}`,
		`{"action":"shell.exec","shell":"panic"}`:                      `{"error":{"kind":"internal","message":"policy p panicked: policy bug"}}`,
		`not json`: `{"error":{"kind":"invalid","message":"wai_check: bad input: invalid character 'o' in literal null (expecting 'u')"}}`,
	} {
		if got := string(handleCheck([]byte(in))); got != want {
			t.Errorf("check %s:\n got %s\nwant %s", in, got, want)
		}
	}
}

// fakeHost answers host-function calls outside Wasm and records them.
func fakeHost(t *testing.T, answers map[string]string) map[string]string {
	t.Helper()
	seen := map[string]string{}
	imports.Host = func(name string, req []byte) []byte {
		seen[name] = string(req)
		if a, ok := answers[name]; ok {
			if a == "" {
				return nil
			}
			return []byte(a)
		}
		return []byte(`{"error":{"kind":"internal","message":"unexpected call"}}`)
	}
	t.Cleanup(func() { imports.Host = nil })
	return seen
}

func TestClients(t *testing.T) {
	seen := fakeHost(t, map[string]string{
		"wai_shell_exec": `{"exit_code":124,"stdout":"out","stderr":"","command":["sleep","9"],"cwd":"/w","duration_ms":1500,` +
			`"truncated":false,"timed_out":true,"signal":9,"backend":"host","sandboxed":false,"future_field":1}`,
		"wai_fs_stat":   `{"path":"a","name":"a","kind":"file","size":3,"mode":420,"mod_time":"2025-01-02T03:04:05.123Z"}`,
		"wai_fs_write":  `{"error":{"kind":"exists","message":"fs.write a: exists"}}`,
		"wai_fs_read":   `{"error":{"kind":"weird","message":"?"}}`,
		"wai_log":       ``,
		"wai_shell_env": `{"vars":[{"name":"A","value":"1"},{"name":"PATH","value":"/bin"}],"cwd":"/w","shell":"/bin/sh"}`,
	})
	r, err := Shell.Exec(ExecRequest{Argv: []string{"sleep", "9"}, Timeout: 1500 * time.Millisecond, Env: map[string]string{"X": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	if seen["wai_shell_exec"] != `{"argv":["sleep","9"],"env":{"X":"y"},"timeout_ms":1500}` {
		t.Errorf("exec request = %s", seen["wai_shell_exec"])
	}
	if !r.TimedOut || r.ExitCode != TimeoutExitCode || r.Duration != 1500*time.Millisecond || r.Signal != 9 || r.Success() {
		t.Errorf("exec result = %+v", r)
	}
	Shell.Exec(ExecRequest{Argv: []string{"x"}, Timeout: time.Microsecond})
	if !strings.Contains(seen["wai_shell_exec"], `"timeout_ms":1`) {
		t.Errorf("a sub-millisecond timeout must not round to the default: %s", seen["wai_shell_exec"])
	}
	fi, err := FS.Stat("a")
	if err != nil || fi.Mode != 0o644 || fi.Kind != KindFile || fi.ModTime.Nanosecond() != 123000000 {
		t.Errorf("stat = %+v, %v", fi, err)
	}
	_, err = FS.Write(WriteRequest{Path: "a", Content: "x"})
	if !errors.Is(err, ErrExist) || KindOf(err) != KindExists || err.Error() != "fs.write a: exists" {
		t.Errorf("write error = %v (kind %s)", err, KindOf(err))
	}
	if _, err := FS.Read(ReadRequest{Path: "a"}); !errors.Is(err, ErrInternal) {
		t.Errorf("an unknown kind is internal: %v", err)
	}
	if err := Log(LevelInfo, "m", "k", 1, "odd"); !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "could not allocate") {
		t.Errorf("nil response: %v", err)
	}
	if !strings.Contains(seen["wai_log"], `"attrs":{"!BADKEY":"odd","k":1}`) {
		t.Errorf("log request = %s", seen["wai_log"])
	}
	env, err := Shell.Env()
	if v, ok := env.Get("PATH"); err != nil || !ok || v != "/bin" {
		t.Errorf("env = %+v, %v", env, err)
	}
	if _, ok := env.Get("B"); ok {
		t.Error("env.Get of an unset variable says set")
	}
	if _, err := FS.Glob(GlobRequest{Pattern: "*"}); !errors.Is(err, ErrInternal) {
		t.Errorf("unexpected call: %v", err)
	}
}

func TestOutsideWasm(t *testing.T) {
	_, err := Shell.Info()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "GOOS=wasip1") {
		t.Errorf("host function outside Wasm: %v", err)
	}
	testConfig["k"] = "v"
	defer delete(testConfig, "k")
	if v, ok := Config("k"); !ok || v != "v" {
		t.Errorf("Config = %q, %v", v, ok)
	}
}

func TestKindOf(t *testing.T) {
	wrapped := fmt.Errorf("context: %w", Errorf(KindNotFound, "gone"))
	if KindOf(wrapped) != KindNotFound || !errors.Is(wrapped, ErrNotFound) || errors.Is(wrapped, ErrExist) {
		t.Errorf("wrapped *Error: kind %s", KindOf(wrapped))
	}
	if KindOf(fmt.Errorf("x: %w", ErrPermission)) != KindPermission {
		t.Error("a wrapped sentinel keeps its kind")
	}
	if KindOf(errors.New("x")) != KindInternal || KindOf(&Error{Kind: "bogus"}) != KindInternal {
		t.Error("unknown errors are internal")
	}
	w := toWire(wrapped)
	if w.Kind != KindNotFound || w.Message != "context: gone" {
		t.Errorf("toWire = %+v", w)
	}
}
