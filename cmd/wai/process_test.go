package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// processWide are the parts of the process only main may touch: the tests
// run wai in process, in parallel, and a subcommand reaching any of these
// would leak into the others (or end the test binary). Subcommands use
// stdio's streams and getenv, and return a status.
var processWide = map[string]map[string]bool{
	"os":     {"Stdin": true, "Stdout": true, "Stderr": true, "Getenv": true, "LookupEnv": true, "Environ": true, "Setenv": true, "Unsetenv": true, "Exit": true, "Chdir": true},
	"signal": {"Notify": true, "NotifyContext": true, "Ignore": true, "Reset": true},
	"flag":   {"CommandLine": true, "Parse": true, "Args": true},
}

func TestOnlyMainTouchesTheProcess(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if name == "main.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && processWide[pkg.Name][sel.Sel.Name] {
				t.Errorf("%s: %s.%s: only main.go may touch the process; use stdio (streams, getenv) and return a status",
					fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
}
