package depcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Target is a platform and tag set to list the module for.
type Target struct {
	GOOS, GOARCH string // empty means the go command's default
	Tags         string // space-separated build tags
}

func (t Target) String() string {
	s := t.GOOS + "/" + t.GOARCH
	if t.GOOS == "" {
		s = "native"
	}
	if t.Tags != "" {
		s += " tags=" + strings.ReplaceAll(t.Tags, " ", ",")
	}
	return s
}

// List runs `go list -deps` over every package of the module in dir for
// target and returns the module path and the packages.
func List(ctx context.Context, dir string, target Target) (string, []Package, error) {
	modCmd := exec.CommandContext(ctx, "go", "list", "-m")
	modCmd.Dir = dir
	mod, err := modCmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m in %s: %w%s", dir, err, stderrOf(err))
	}
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Standard,Imports,Deps"}
	if target.Tags != "" {
		args = append(args, "-tags", target.Tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./...")...)
	cmd.Dir = dir
	cmd.Env = cmd.Environ()
	if target.GOOS != "" {
		cmd.Env = append(cmd.Env, "GOOS="+target.GOOS)
	}
	if target.GOARCH != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+target.GOARCH)
	}
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list for %s in %s: %w%s", target, dir, err, stderrOf(err))
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", nil, fmt.Errorf("decoding go list output for %s: %w", target, err)
		}
		pkgs = append(pkgs, p)
	}
	return strings.TrimSpace(string(mod)), pkgs, nil
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// Interface guards
var _ fmt.Stringer = Target{}
