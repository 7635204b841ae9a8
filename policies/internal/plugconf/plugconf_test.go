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
	for _, bad := range []string{`{"command": ["ls"]}`, `{"commands": []} {}`, `[`} {
		if err := Decode([]byte(bad), &c); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
