package podman

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/wai-dev/wai/host/backend"
	recipefiles "github.com/wai-dev/wai/scripts/images"
)

// The image every recipe starts from; scripts/images/recipe.sh says the same.
const (
	recipeSuite   = "bookworm"
	recipeVariant = "minbase"
	// labelRecipe is the recipe hash an image was built from; labelPurpose
	// the purpose it serves. Both are set at import.
	labelRecipe  = "wai.recipe"
	labelPurpose = "wai.purpose" // also a managed container's purpose, may be ""
	// maxIncludeDepth bounds @include chains (and so include cycles).
	maxIncludeDepth = 4
)

// recipeBaseChanges is the config every image gets at import, before the
// recipe's own @env and @label lines.
var recipeBaseChanges = []string{
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"ENV LANG=C.UTF-8",
	`CMD ["/bin/sh"]`,
}

var (
	debianPackageName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	envName           = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	labelName         = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
)

// Recipe is what an image is built from: Debian packages on top of
// bookworm minbase, and the config changes (ENV, LABEL, CMD) applied when
// the root filesystem is imported.
type Recipe struct {
	Purpose  string
	Suite    string
	Variant  string
	Packages []string
	Changes  []string
}

// Hash is the recipe's identity: 16 hex digits of the SHA-256 of the suite,
// the variant, the packages in order and the changes, one per line. It is
// the image's tag and wai.recipe label, so an image built from another
// recipe is never mistaken for this one.
func (r Recipe) Hash() string {
	h := sha256.New()
	for _, l := range append(append([]string{r.Suite, r.Variant}, r.Packages...), r.Changes...) {
		h.Write([]byte(l + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ImageName is the local image the recipe builds: localhost/wai-PURPOSE:HASH.
func (r Recipe) ImageName() string {
	return "localhost/wai-" + r.Purpose + ":" + r.Hash()
}

// Purposes are the purposes wai has an image recipe for, sorted.
func Purposes() []string {
	names, _ := fs.Glob(recipefiles.Files, "wai-*.packages")
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "wai-"), ".packages"))
	}
	sort.Strings(out)
	return out
}

// PurposeRecipe reads the recipe of a purpose from the recipes built into
// wai (scripts/images/wai-PURPOSE.packages).
func PurposeRecipe(purpose string) (Recipe, error) {
	known := Purposes()
	if i := sort.SearchStrings(known, purpose); i == len(known) || known[i] != purpose {
		return Recipe{}, backend.Errorf(backend.ErrInvalid, "image", purpose,
			"unknown purpose %q: the purposes with an image are %s", purpose, strings.Join(known, ", "))
	}
	return parseRecipe(recipefiles.Files, "wai-"+purpose+".packages", purpose)
}

// parseRecipe reads a recipe file of fsys (format: scripts/images/embed.go).
func parseRecipe(fsys fs.FS, name, purpose string) (Recipe, error) {
	r := Recipe{Purpose: purpose, Suite: recipeSuite, Variant: recipeVariant,
		Changes: append([]string(nil), recipeBaseChanges...)}
	if err := r.read(fsys, name, 0); err != nil {
		return Recipe{}, backend.Errorf(backend.ErrInvalid, "image recipe", name, "%v", err)
	}
	if len(r.Packages) == 0 {
		return Recipe{}, backend.Errorf(backend.ErrInvalid, "image recipe", name, "lists no packages")
	}
	return r, nil
}

func (r *Recipe) read(fsys fs.FS, name string, depth int) error {
	if depth > maxIncludeDepth {
		return fmt.Errorf("@include nested deeper than %d at %s", maxIncludeDepth, name)
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if err := r.item(fsys, name, line, depth); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	return sc.Err()
}

func (r *Recipe) item(fsys fs.FS, name, line string, depth int) error {
	directive, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch directive {
	case "@include":
		return r.read(fsys, path.Join(path.Dir(name), arg), depth+1)
	case "@env", "@label":
		key, value, ok := strings.Cut(arg, "=")
		valid := envName
		if directive == "@label" {
			valid = labelName
		}
		if !ok || !valid.MatchString(key) || strings.ContainsAny(value, "\n\r") {
			return fmt.Errorf("%s wants KEY=VALUE, got %q", directive, arg)
		}
		if directive == "@label" && (key == labelRecipe || key == labelPurpose) {
			return fmt.Errorf("label %s is set by wai itself", key)
		}
		r.Changes = append(r.Changes, strings.ToUpper(directive[1:])+" "+arg)
		return nil
	}
	if strings.HasPrefix(line, "@") {
		return fmt.Errorf("unknown directive %q (known: @include, @env, @label)", directive)
	}
	if !debianPackageName.MatchString(line) {
		return fmt.Errorf("%q is not a Debian package name", line)
	}
	r.Packages = append(r.Packages, line)
	return nil
}
