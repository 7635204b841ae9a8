package podman

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wai-dev/wai/host/backend"
)

func TestRecipeParse(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"common.packages": {Data: []byte("# shared\ngit\njq  # inline comment\n\n")},
		"wai-x.packages":  {Data: []byte("python3\n@include common.packages\n@env GOTOOLCHAIN=local\n@label org.example.team=dev tools\n")},
	}
	r, err := parseRecipe(fsys, "wai-x.packages", "x")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"python3", "git", "jq"}; !slices.Equal(r.Packages, want) {
		t.Errorf("packages = %q, want %q", r.Packages, want)
	}
	want := append(slices.Clone(recipeBaseChanges), "ENV GOTOOLCHAIN=local", "LABEL org.example.team=dev tools")
	if !slices.Equal(r.Changes, want) {
		t.Errorf("changes = %q, want %q", r.Changes, want)
	}
	if r.ImageName() != "localhost/wai-x:"+r.Hash() || len(r.Hash()) != 16 {
		t.Errorf("ImageName = %q, Hash = %q", r.ImageName(), r.Hash())
	}
}

// TestRecipeHash: everything that shapes the image changes the hash, and
// nothing else does.
func TestRecipeHash(t *testing.T) {
	t.Parallel()
	base := Recipe{Purpose: "p", Suite: "bookworm", Variant: "minbase", Packages: []string{"git", "jq"},
		Changes: slices.Clone(recipeBaseChanges)}
	h := base.Hash()
	if h != base.Hash() {
		t.Fatal("hash is not deterministic")
	}
	other := base
	other.Purpose = "q"
	if other.Hash() != h {
		t.Error("the purpose name changed the hash; it does not shape the image")
	}
	variants := map[string]func(r *Recipe){
		"suite":         func(r *Recipe) { r.Suite = "trixie" },
		"variant":       func(r *Recipe) { r.Variant = "apt" },
		"package added": func(r *Recipe) { r.Packages = append(slices.Clone(r.Packages), "curl") },
		"package order": func(r *Recipe) { r.Packages = []string{"jq", "git"} },
		"env":           func(r *Recipe) { r.Changes = append(slices.Clone(r.Changes), "ENV A=1") },
		"label":         func(r *Recipe) { r.Changes = append(slices.Clone(r.Changes), "LABEL a=1") },
		// One line per item: "gitjq" must not collide with "git","jq".
		"boundaries": func(r *Recipe) { r.Packages = []string{"gitjq"} },
	}
	for name, change := range variants {
		r := base
		change(&r)
		if r.Hash() == h {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

func TestRecipeParseErrors(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"empty":          "# nothing\n",
		"bad package":    "Python3\n",
		"shell":          "git; rm -rf /\n",
		"bad env":        "git\n@env 1A=x\n",
		"env without =":  "git\n@env A\n",
		"reserved label": "git\n@label wai.recipe=forged\n",
		"unknown":        "git\n@run make\n",
		"missing file":   "git\n@include nope.packages\n",
		"cycle":          "git\n@include wai-x.packages\n",
	} {
		_, err := parseRecipe(fstest.MapFS{"wai-x.packages": {Data: []byte(text)}}, "wai-x.packages", "x")
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// TestPurposeRecipes: every purpose of the issue has a recipe with its
// tool chain and the common tools.
func TestPurposeRecipes(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"python":  {"python3", "python3-pip", "python3-venv", "python3-pytest"},
		"node":    {"nodejs", "npm"},
		"go":      {"golang"},
		"rust":    {"rustc", "cargo"},
		"general": {"build-essential"},
	}
	if got := Purposes(); !slices.Equal(got, []string{"general", "go", "node", "python", "rust"}) {
		t.Errorf("Purposes() = %q", got)
	}
	common := []string{"ca-certificates", "git", "curl", "jq", "tree", "vim-tiny", "less", "make"}
	for p, pkgs := range want {
		r, err := PurposeRecipe(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, pkg := range append(pkgs, common...) {
			if !slices.Contains(r.Packages, pkg) {
				t.Errorf("%s recipe lacks %s", p, pkg)
			}
		}
	}
	_, err := PurposeRecipe("cobol")
	if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "general, go, node, python, rust") {
		t.Errorf("unknown purpose: %v", err)
	}
}
