package plugconf

import "testing"

func TestDecode(t *testing.T) {
	type config struct {
		Commands []string `json:"commands"`
	}
	c := config{Commands: []string{"default"}}
	for _, empty := range []string{"", "null"} {
		if err := Decode([]byte(empty), &c); err != nil || len(c.Commands) != 1 || c.Commands[0] != "default" {
			t.Fatalf("%q: %+v, %v; want the defaults kept", empty, c, err)
		}
	}
	if err := Decode([]byte(`{"commands": ["ls"]}`), &c); err != nil || c.Commands[0] != "ls" {
		t.Fatalf("a good config: %+v, %v", c, err)
	}
	for _, bad := range []string{`{"command": ["ls"]}`, `{"commands": []} {}`, `{"commands": []}}`, `{"commands": []}]`, `[`} {
		if err := Decode([]byte(bad), &c); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// Rules hands parse the config as one object and build what parse made;
// a parse error stops before build.
func TestRules(t *testing.T) {
	type config struct {
		Commands []string `json:"commands"`
	}
	get := func(k string) (string, bool) {
		if k == "commands" {
			return `["ls","git"]`, true
		}
		return "", false
	}
	parse := func(raw []byte) (config, error) {
		var c config
		return c, Decode(raw, &c)
	}
	built := 0
	build := func(c config) (int, error) { built++; return len(c.Commands), nil }
	n, err := Rules([]string{"commands", "ask"}, get, parse, build)
	if err != nil || n != 2 || built != 1 {
		t.Fatalf("Rules = %d, %v after %d builds; want 2 commands, built once", n, err, built)
	}
	bad := func(string) (string, bool) { return `{"x":1}`, true }
	if _, err := Rules([]string{"commands"}, bad, parse, build); err == nil || built != 1 {
		t.Errorf("a config parse refuses: err %v, %d builds; want an error and no build", err, built)
	}
}
