//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// A Dockerfile names images a build reads (FROM, COPY --from, RUN
// --mount=from=): a build from another user's snapshot would hand its
// files to whoever wrote the Dockerfile, as a create from it would. So each
// is resolved on the service before the build, as guardImage does for a
// create.

// escapeDirectiveRE finds the parser directive that makes ` the escape
// (and continuation) character; directives come first, before any
// instruction or other comment.
var escapeDirectiveRE = regexp.MustCompile("^(?:[ \t]*#[ \t]*[a-zA-Z]+[ \t]*=[^\n]*\n)*[ \t]*#[ \t]*(?i:escape)[ \t]*=[ \t]*`")

var dockerfileVarRE = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?[-+][^}]*)?\}?`)

// dockerfileImageRefs lists the image references of a Dockerfile: FROM's
// image, COPY and ADD --from=, RUN --mount=...,from= (in ONBUILD too);
// earlier stages' names and indexes, and scratch, are no images. ARG
// defaults are expanded (wai passes no build arguments); a reference still
// holding a variable is returned as it is, for the caller to refuse.
func dockerfileImageRefs(text string) []string {
	args, stages, nstages := map[string]string{}, map[string]bool{}, 0
	var refs []string
	add := func(ref string) {
		ref = dockerfileVarRE.ReplaceAllStringFunc(ref, func(v string) string {
			if val, ok := args[dockerfileVarRE.FindStringSubmatch(v)[1]]; ok {
				return val
			}
			return v
		})
		// A number is a stage's index only if that stage exists; else
		// it may be an image ID's prefix.
		if n, err := strconv.Atoi(ref); err == nil && n >= 0 && n < nstages || ref == "" || ref == "scratch" || stages[strings.ToLower(ref)] {
			return
		}
		refs = append(refs, ref)
	}
	for _, line := range dockerfileInstructions(text) {
		f := strings.Fields(line)
		if len(f) > 1 && strings.EqualFold(f[0], "ONBUILD") {
			f = f[1:]
		}
		switch strings.ToUpper(f[0]) {
		case "ARG":
			for _, a := range f[1:] {
				if k, v, ok := strings.Cut(a, "="); ok {
					args[k] = strings.Trim(v, `"'`)
				}
			}
		case "FROM":
			rest := dropFlags(f[1:])
			if len(rest) > 0 {
				add(rest[0])
			}
			if len(rest) >= 3 && strings.EqualFold(rest[1], "AS") {
				stages[strings.ToLower(rest[2])] = true
			}
			nstages++
		case "COPY", "ADD", "RUN":
			for _, a := range f[1:] {
				if !strings.HasPrefix(a, "--") {
					break
				}
				if v, ok := strings.CutPrefix(a, "--from="); ok {
					add(v)
				}
				for _, kv := range strings.Split(strings.TrimPrefix(a, "--mount="), ",") {
					if v, ok := strings.CutPrefix(kv, "from="); ok && strings.HasPrefix(a, "--mount=") {
						add(v)
					}
				}
			}
		}
	}
	return refs
}

// dockerfileInstructions are a Dockerfile's instructions, continuation
// lines joined, comments and blank lines dropped (inside a continuation
// too, as the builder does), with the escape directive's character.
func dockerfileInstructions(text string) []string {
	var out []string
	cur, escape := "", `\`
	if escapeDirectiveRE.MatchString(text) {
		escape = "`"
	}
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") || t == "" {
			continue
		}
		if c, ok := strings.CutSuffix(t, escape); ok {
			cur += c + " "
			continue
		}
		if cur += t; strings.TrimSpace(cur) != "" {
			out = append(out, strings.TrimSpace(cur))
		}
		cur = ""
	}
	if strings.TrimSpace(cur) != "" {
		out = append(out, strings.TrimSpace(cur))
	}
	return out
}

func dropFlags(f []string) []string {
	for len(f) > 0 && strings.HasPrefix(f[0], "--") {
		f = f[1:]
	}
	return f
}

// guardDockerfile refuses a build whose Dockerfile reads another user's
// snapshot, or an image it cannot name (a variable without a default).
func (b *Backend) guardDockerfile(ctx context.Context, owner backend.ContainerOwner, dockerfile string) error {
	const op = "containers.create"
	text, err := os.ReadFile(dockerfile)
	if err != nil {
		return backend.Errorf(backend.ErrInvalid, op, dockerfile, "cannot read the Dockerfile: %v", err)
	}
	for _, ref := range dockerfileImageRefs(string(text)) {
		if strings.Contains(ref, "$") {
			return backend.Errorf(backend.ErrInvalid, op, ref,
				"the Dockerfile names an image through a variable without a default (no build arguments are passed): give the image, or an ARG default")
		}
		if _, err := b.guardImage(ctx, owner, ref); err != nil {
			return err
		}
	}
	return nil
}
