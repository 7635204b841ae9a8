//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"slices"
	"testing"
)

// Every place a Dockerfile names an image is found, however it is
// spelled (flags, continuations with blank and comment lines, the `
// escape, ONBUILD, ARG defaults); stages, their indexes and scratch are
// not images, but a number past the stages may be an ID prefix.
func TestDockerfileImageRefs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"from", "FROM --platform=linux/amd64 base:1 AS build\nFROM build\nFROM scratch\n", []string{"base:1"}},
		{"copy and add from", "FROM a AS s1\nCOPY --chown=1 --from=7cf3 /tmp/data /x\nADD --from=s1 /y /y\ncopy --from=0 /z /z\nCOPY --from=1 /w /w\n",
			[]string{"a", "7cf3", "1"}},
		{"run mount", "FROM a\nRUN --mount=type=bind,from=sha256:abcd,source=/tmp,target=/m cat /m/data\n", []string{"a", "sha256:abcd"}},
		{"continuation", "FROM a\nCOPY \\\n\n  # a comment\n  --from=7c /tmp/data /x\n", []string{"a", "7c"}},
		{"escape directive", "# escape=`\nFROM a\nCOPY `\n --from=7c /tmp/data /x\n", []string{"a", "7c"}},
		{"onbuild", "FROM a\nONBUILD COPY --from=7c /d /d\n", []string{"a", "7c"}},
		{"arg defaults", "ARG BASE=7cf3\nARG TAG\nFROM ${BASE}\nCOPY --from=$BASE /d /d\nFROM img:$TAG\n", []string{"7cf3", "7cf3", "img:$TAG"}},
		{"flags end at the first argument", "FROM a\nRUN echo --from=b\n", []string{"a"}},
	} {
		if got := dockerfileImageRefs(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
	}
}
