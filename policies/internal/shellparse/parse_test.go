package shellparse

import (
	"reflect"
	"strings"
	"testing"
)

// summary renders a script compactly: each command as its words joined by
// spaces, "@parent" when it is a substitution, and its redirections.
func summary(sc Script) []string {
	var out []string
	for _, c := range sc.Commands {
		s := strings.Join(c.Args, " ")
		for _, r := range c.Redirects {
			s += " " + r.Op + r.Target
		}
		if c.Parent >= 0 {
			s += " @" + sc.Commands[c.Parent].Args[0]
		}
		out = append(out, s)
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		complex bool
	}{
		{"ls -la", []string{"ls -la"}, false},
		{"a && b || c; d & e\nf", []string{"a", "b", "c", "d", "e", "f"}, false},
		{"echo 'a b' \"c d\" e\\ f", []string{"echo a b c d e f"}, false},
		{`echo "x \"y\" \$z"`, []string{`echo x "y" $z`}, false},
		{"echo $(whoami) `id`", []string{"echo $(whoami) `id`", "whoami @echo", "id @echo"}, false},
		{"bash <(curl x)", []string{"bash <(curl x)", "curl x @bash"}, false},
		{"X=1 Y=2 cmd", []string{"X=1 Y=2 cmd"}, false},
		{"echo x >/dev/sda 2>&1", []string{"echo x >/dev/sda >&1"}, false},
		{"> out.txt", []string{" >out.txt"}, false},
		{"(cd a && make)", []string{"cd a", "make"}, false},
		{"{ ls; }", []string{"ls"}, false},
		{"ls # a comment; rm -rf /", []string{"ls"}, false},
		{"echo \"$(echo \"$(id)\")\"", []string{"echo $(echo \"$(id)\")", "echo $(id) @echo", "id @echo"}, false},
		{"if true; then rm x; fi", []string{"true", "rm x"}, true},
		{"f() { ls; }", []string{"f", "ls"}, true},
		{"cat <<EOF\nhi\nEOF", []string{"cat <<EOF", "hi", "EOF"}, true},
		{"echo 'open", []string{"echo open"}, true},
		{"echo $((1+2))", []string{"echo $((1+2))", "1+2 @echo"}, true},
	} {
		sc := Parse(tc.in)
		if got := summary(sc); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if (len(sc.Complex) > 0) != tc.complex {
			t.Errorf("Parse(%q): complex %q, want complex=%v", tc.in, sc.Complex, tc.complex)
		}
	}
}

func TestPipelines(t *testing.T) {
	sc := Parse("a | b |& c; d | e")
	var got []string
	for _, c := range sc.Commands {
		got = append(got, c.Args[0]+":"+string(rune('0'+c.Pipeline))+string(rune('0'+c.Stage)))
	}
	if !sameShape(sc.Commands, [][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}}) {
		t.Fatalf("pipelines and stages: %v", got)
	}
}

// sameShape compares (pipeline, stage) pairs up to renumbering of
// pipelines.
func sameShape(cmds []Command, want [][2]int) bool {
	if len(cmds) != len(want) {
		return false
	}
	ids := map[int]int{}
	for i, c := range cmds {
		id, ok := ids[c.Pipeline]
		if !ok {
			id = len(ids)
			ids[c.Pipeline] = id
		}
		if id != want[i][0] || c.Stage != want[i][1] {
			return false
		}
	}
	return true
}

func TestLiteral(t *testing.T) {
	c := Parse(`$CMD "a" *.go '$x'`).Commands[0]
	if want := []bool{false, true, false, true}; !reflect.DeepEqual(c.Literal, want) {
		t.Fatalf("literal flags %v, want %v", c.Literal, want)
	}
}

func TestUnwrap(t *testing.T) {
	for _, tc := range []struct {
		words []string
		at    []int
		ok    bool
	}{
		{[]string{"ls"}, []int{0}, true},
		{[]string{"sudo", "-u", "root", "rm", "x"}, []int{0, 3}, true},
		{[]string{"env", "-i", "A=1", "B=2", "ls"}, []int{0, 4}, true},
		{[]string{"timeout", "-s", "KILL", "5", "sh", "-c", "x"}, []int{0, 4}, true},
		{[]string{"nice", "-n", "10", "xargs", "-I{}", "rm", "{}"}, []int{0, 3, 5}, true},
		{[]string{"stdbuf", "-oL", "grep", "x"}, []int{0, 2}, true},
		{[]string{"env"}, []int{0}, true},
		{[]string{"sudo", "-u"}, []int{0}, false},
		{[]string{"timeout"}, []int{0}, false},
		{[]string{"env", "-S", "whoami -a"}, []int{0}, false},
		{[]string{"env", "--split-string=whoami"}, []int{0}, false},
	} {
		at, ok := Unwrap(tc.words)
		if !reflect.DeepEqual(at, tc.at) || ok != tc.ok {
			t.Errorf("Unwrap(%q) = %v, %v; want %v, %v", tc.words, at, ok, tc.at, tc.ok)
		}
	}
}

func TestInlineScript(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		script string
		ok     bool
	}{
		{[]string{"-c", "ls"}, "ls", true},
		{[]string{"-ec", "ls"}, "ls", true},
		{[]string{"-e", "-c", "ls", "name"}, "ls", true},
		{[]string{"-o", "pipefail", "-c", "ls"}, "ls", true},
		{[]string{"-c", "--", "ls"}, "ls", true},
		{[]string{"script.sh"}, "", false},
		{[]string{"-x", "script.sh"}, "", false},
		{[]string{"-c"}, "", false},
	} {
		s, ok := InlineScript(tc.args)
		if s != tc.script || ok != tc.ok {
			t.Errorf("InlineScript(%q) = %q, %v; want %q, %v", tc.args, s, ok, tc.script, tc.ok)
		}
	}
}

// FuzzParse: any input parses without panicking, and every command it
// finds has as many literal flags as words and a valid parent.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"ls", "a|b", "$(a `b` $((c)))", "'x", "\"$(", "<(", "f(){ f|f& };f", "a\\\nb", "${x", "2>&1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc := Parse(s)
		for i, c := range sc.Commands {
			if len(c.Args) != len(c.Literal) {
				t.Fatalf("command %d: %d words, %d literal flags", i, len(c.Args), len(c.Literal))
			}
			if c.Parent >= i || c.Parent < -1 {
				t.Fatalf("command %d has parent %d", i, c.Parent)
			}
			Unwrap(c.Args)
			InlineScript(c.Args)
		}
	})
}
