package shellparse

import (
	"reflect"
	"strings"
	"testing"
)

// summary renders an analysis compactly: each run as its name, "<wrapper"
// when a wrapper runs it and "!" when it runs code no policy sees; then
// the kinds of the problems found.
func summary(a *Analysis) (runs []string, problems []ProblemKind) {
	for _, r := range a.Runs {
		s := r.Name()
		if r.Via != "" {
			s += "<" + r.Via
		}
		if r.Opaque != "" {
			s += "!"
		}
		runs = append(runs, s)
	}
	for _, p := range a.Problems {
		problems = append(problems, p.Kind)
	}
	return runs, problems
}

// The problem kinds, short, for the table below.
const (
	U = Unreadable
	C = DynamicCommand
	A = DynamicArgs
	S = Unsupported
)

// analyzeShellCases are command lines read as sh, with the runs they
// must yield (space-separated, as summary renders them) and the kinds of
// the problems found.
var analyzeShellCases = []struct {
	in       string
	runs     string
	problems []ProblemKind
}{
	{"ls -la", "ls", nil},
	{"a && b || c; d & e\nf", "a b c d e f", nil},
	{"a | b |& c", "", []ProblemKind{U}}, // |& is bash
	{"echo $(whoami) `id`", "echo whoami id", nil},
	{"echo `echo \\$(whoami)`", "echo echo whoami", nil},
	{"echo $(echo a # )\nwhoami\n)", "echo echo whoami", nil},
	{"echo ${x:-$(a)} $(( $(b) )) \"${y#$(c)}\"", "echo a b c", nil},
	{"case $(a) in $(b)) c;; esac", "a b c", nil},
	{"x=$(a) y=`b`", "a b", nil},
	{"cat <<EOF\n$(a)\nEOF\n", "cat a", nil},
	{"cat <<'EOF'\n$(a)\nEOF\n", "cat", nil},
	{"ls > $(a)", "ls a", nil},
	{"f() { a; }; f", "a f", nil},
	{"{ a; }; (b); ! c", "a b c", nil},
	{"for i in $(a); do b; done; while c; do d; done; if e; then f; fi", "a b c d e f", nil},
	{"who\\\nami", "whoami", nil},
	{"ls &>/dev/null touch x", "", []ProblemKind{U}},
	{"echo a\r# x; whoami", "", []ProblemKind{U}},
	{"ls\x00x", "", []ProblemKind{U}},
	{"ls \xff", "", []ProblemKind{U}},
	{"echo 'open", "", []ProblemKind{U}},
	{"ls #\\\nwhoami", "", []ProblemKind{U}}, // dash runs whoami; mvdan saw a comment
	{"ls \\\n-la # x\nid", "ls id", nil},
	{"cat <(a)", "", []ProblemKind{U}},
	{"$CMD x", "$CMD", []ProblemKind{C}},
	{"[w]hoami", "[w]hoami", []ProblemKind{C}},
	{"$'a'", "$a", nil},     // dash has no $'…'
	{"$\"a\"", "$a", nil},   // nor $"…"
	{"sh +c a", "sh!", nil}, // +c: a is a script file
	{"hash -p /bin/a b; b", "hash b", []ProblemKind{S}},
	{"hash -r", "hash", nil},
	{"alias ls=x\nls", "alias ls", []ProblemKind{S}},
	{"alias", "alias", nil},
	{"sudo -u root env -i A=1 nice -n 5 timeout -s KILL 5 stdbuf -oL ls", "sudo env<sudo nice<env timeout<nice stdbuf<timeout ls<stdbuf", nil},
	{"env -u X -C /tmp ls", "env ls<env", nil},
	{"env -S 'a b'", "env", []ProblemKind{S}},
	{"env --split-string='a b'", "env", []ProblemKind{S}},
	{"env $o ls", "env", []ProblemKind{A}},
	{"env \"A=$x\" ls", "env ls<env", nil},
	{"nice -10 a; nice --adjustment=3 b", "nice a<nice nice b<nice", nil},
	{"nohup a", "nohup a<nohup", nil},
	{"timeout --sig=KILL 5 a; timeout -k1 5 b; timeout 5", "timeout a<timeout timeout b<timeout timeout", nil},
	{"timeout --bogus 5 a", "timeout", []ProblemKind{S}},
	{"timeout $t a", "timeout", []ProblemKind{A}},
	{"timeout \"$t\" a", "timeout", []ProblemKind{A}}, // "$t" could be -k
	{"setsid -f a; doas -u x b; ionice -c 3 c; taskset 3 d; chrt -f 1 e", "setsid a<setsid doas b<doas ionice c<ionice taskset d<taskset chrt e<chrt", nil},
	{"chroot /x a; chroot /x", "chroot a<chroot chroot!", nil},
	{"time -p a", "time a<time", nil},
	{"command -v a; command -p b; exec -a n c; builtin d", "command command b<command exec c<exec builtin d<builtin", nil},
	{"busybox rm x", "busybox rm<busybox", nil},
	{"sh -c 'a; sh -c b'", "sh a sh b", nil},
	{"sh -ec a; bash -o pipefail -c b; sh -c -- c", "sh a bash b sh c", nil},
	{"sh x.sh; echo | bash", "sh! echo bash!", nil},
	{"sh -c \"$x\"", "sh", []ProblemKind{C}},
	{"zsh -c a", "zsh", []ProblemKind{U}},
	{"eval 'a; b'", "eval a b", nil},
	{"eval \"$x\"", "eval", []ProblemKind{C}},
	{"trap 'a' EXIT; trap - INT", "trap a trap", nil},
	{"watch -n1 'a | b'; watch -x c d", "watch a b watch c<watch", nil},
	{"flock /l -c a; flock -w 1 /l b", "flock a flock b<flock", nil},
	{". ./x; source y", ".! source!", nil},
	{"ls | xargs", "ls xargs echo<xargs", nil},
	{"ls | xargs -i a {}", "ls xargs a<xargs", nil},
	{"ls | xargs -e a", "ls xargs a<xargs", nil},
	{"ls | xargs -l a", "ls xargs a<xargs", nil},
	{"ls | xargs -I x a x", "ls xargs a<xargs", nil},
	{"ls | xargs -n 1 -P 4 -0 a", "ls xargs a<xargs", nil},
	{"ls | xargs --replace a {}", "ls xargs a<xargs", nil},
	{"ls | xargs -I{} {}", "ls xargs {}<xargs", []ProblemKind{C}},
	{"ls | xargs find", "ls xargs find<xargs", []ProblemKind{A}},
	{"ls | xargs env", "ls xargs env<xargs", []ProblemKind{A}},
	{"ls | xargs sh -c", "ls xargs sh<xargs", []ProblemKind{A}},
	{"ls | xargs sh -c 'a \"$@\"' _", "ls xargs sh<xargs a", nil},
	{"ls | xargs -I{} sh -c 'a {}'", "ls xargs sh<xargs", []ProblemKind{C}},
	{"find . -exec a {} \\; -execdir b {} + -ok c \\; -okdir d \\;", "find a<find -exec b<find -execdir c<find -ok d<find -okdir", nil},
	{"find . -exec a + b {} +", "find a<find -exec", nil},
	{"find -L . -name '*.go' -newer x -fprintf f '%p' -delete", "find", nil},
	{"find . -name \"$p\"", "find", nil},
	{"find . -name $p", "find", []ProblemKind{A}},
	{"find $d -name x", "find", []ProblemKind{A}},
	{"find ~ ~/src -name x", "find", nil},
	{"HOME=-exec; find ~ a \\;", "find", []ProblemKind{A}},
	{"a=-exec; find . $a b \\;", "find", []ProblemKind{A}},
	{"find . -exec {} \\;", "find {}<find -exec", []ProblemKind{C}},
	{"find . -exec sh -c 'a {}' \\;", "find sh<find -exec", []ProblemKind{C}},
	{"find . -exec sh -c 'a \"$1\"' _ {} \\;", "find sh<find -exec a", nil},
	{"t=';'; find . -exec a \"$t\" -exec b \\;", "find", []ProblemKind{A}},
	{"find . -exec a \"x$t\" {} +", "find", []ProblemKind{A}},
	{"find . -exec a \"--$t\" {} +", "find a<find -exec", nil},
	{"find . -newermt \"$d\" -delete", "find", nil},
	{"sudo A=1 b", "sudo b<sudo", nil},
	{"flock -c \"$x\" /l", "flock", []ProblemKind{C}},
	{"flock -c a /l", "flock a", nil}, // -c CMD before the lock file
}

func TestAnalyzeShell(t *testing.T) {
	for _, tc := range analyzeShellCases {
		runs, problems := summary(AnalyzeShell(tc.in, POSIX))
		if got := strings.Join(runs, " "); got != tc.runs || !reflect.DeepEqual(problems, tc.problems) {
			t.Errorf("%q:\n runs %q, want %q\n problems %v, want %v\n %v", tc.in, got, tc.runs, problems, tc.problems, AnalyzeShell(tc.in, POSIX).Problems)
		}
	}
}

func TestBash(t *testing.T) {
	for _, tc := range []struct {
		in      string
		runs    string
		problem bool
	}{
		{"ls &>/dev/null", "ls", false},
		{"cat <(a) >(b)", "cat a b", false},
		{"$'\\x72m' x", "rm", false},
		{"{a,b}", "{a,b}", true},
		{"declare x=$(a); local y; export PATH=/x", "declare a local export", false},
		{"x='a[$(id)]'; echo $((x))", "echo", true},
		{"echo $((1 + 2))", "echo", false},
		{"echo ${x@P}", "echo", true},
		{"[[ $x -eq 1 ]]", "", true},
		{"time a", "a", false},
		{"function f { a; }", "a", false},
	} {
		a := AnalyzeShell(tc.in, Bash)
		runs, problems := summary(a)
		if got := strings.Join(runs, " "); got != tc.runs || (len(problems) > 0) != tc.problem {
			t.Errorf("%q: runs %q, want %q; problems %v, want some=%v", tc.in, got, tc.runs, a.Problems, tc.problem)
		}
	}
}

func TestWords(t *testing.T) {
	a := AnalyzeShell(`e 'a b' "c $x d" e\ f ~/g *.go "$y" $z "\$q" $(h) r\m "r\m"`, POSIX)
	want := []Word{
		{Value: "e", Literal: true, Fixed: 1},
		{Value: "a b", Literal: true, Fixed: 3},
		{Value: "c $x d", Fixed: 4},
		{Value: "e f", Literal: true, Fixed: 3},
		{Value: "~/g", Tilde: true, Fixed: 3},
		{Value: "*.go", Split: true, Fixed: 4},
		{Value: "$y"},
		{Value: "$z", Split: true},
		{Value: "$q", Literal: true, Fixed: 2},
		{Value: "$(h)", Split: true},
		// Outside quotes a backslash escapes any byte; inside double
		// quotes it escapes only $ ` " \ and newline: "r\m" is not rm.
		{Value: "rm", Literal: true, Fixed: 2},
		{Value: `r\m`, Literal: true, Fixed: 3},
	}
	if got := a.Commands[0].Words; !reflect.DeepEqual(got, want) {
		t.Fatalf("words\n%+v\nwant\n%+v", got, want)
	}
}

func TestSetVars(t *testing.T) {
	a := AnalyzeShell("A=1 ls; export B=2 C; read D; for E in x; do :; done; env F=3 ls", POSIX)
	if want := []string{"A", "B", "C", "D", "E", "F"}; !reflect.DeepEqual(a.SetVars, want) {
		t.Fatalf("SetVars %v, want %v", a.SetVars, want)
	}
}

func TestStagesAndParents(t *testing.T) {
	a := AnalyzeShell("a | { b; c | d; } ; sh -c \"$(e)\"", POSIX)
	stage := func(i int) []Stage { return a.Commands[i].Stages }
	if len(stage(0)) != 1 || stage(0)[0].Index != 0 || len(stage(1)) != 1 || stage(1)[0].Index != 1 {
		t.Fatalf("a, b stages: %v %v", stage(0), stage(1))
	}
	if len(stage(3)) != 2 || stage(3)[0].Index != 1 || stage(3)[1] != stage(1)[0] {
		t.Fatalf("d is stage 1 of the inner pipeline and in stage 1 of the outer: %v", stage(3))
	}
	if sh, e := a.Commands[4], a.Commands[5]; sh.Words[0].Value != "sh" || e.Parent != 4 {
		t.Fatalf("e's parent: %+v", e)
	}
}

func TestHomeFromTheRequest(t *testing.T) {
	if a := AnalyzeShell("find ~ -name x", POSIX, "HOME"); len(a.Problems) == 0 {
		t.Fatal("~ was taken as a path although the request sets HOME (HOME=-exec makes it an action)")
	}
	if a := AnalyzeShell("find ~ -name x", POSIX, "LANG"); len(a.Problems) != 0 {
		t.Fatalf("problems: %v", a.Problems)
	}
}

func TestAnalyzeArgv(t *testing.T) {
	runs, problems := summary(AnalyzeArgv([]string{"sudo", "-u", "x", "sh", "-c", "a $(b)"}))
	if got := strings.Join(runs, " "); got != "sudo sh<sudo a b" || problems != nil {
		t.Fatalf("runs %q problems %v", got, problems)
	}
	if a := AnalyzeArgv(nil); len(a.Runs) != 0 {
		t.Fatal("empty argv runs something")
	}
}

func TestDepthBounded(t *testing.T) {
	// Each eval reads its arguments as a new script: 40 levels deep.
	s := strings.Repeat("eval ", 40) + "a"
	if a := AnalyzeShell(s, POSIX); len(a.Problems) == 0 {
		t.Fatal("40 nested sh -c were followed without a problem")
	}
}
