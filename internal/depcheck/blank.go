package depcheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CallsBackends returns every import of a backend package (plugins/*) by
// the commands under dir (cmd/*) that is not blank, as "file: path". `go
// list` does not tell `import _` from a named import, so this reads the
// source: a command links backends, and reaches them only through the
// optional interfaces of host/backend, so that a new backend gets every
// command by implementing them, never by the CLI learning its API.
// Test files are skipped (a test may wire anything together); files of
// every build tag are read.
func CallsBackends(dir, module string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if !strings.HasPrefix(p, module+"/plugins/") {
				continue
			}
			if imp.Name == nil || imp.Name.Name != "_" {
				rel, _ := filepath.Rel(dir, path)
				out = append(out, rel+": "+p)
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}
