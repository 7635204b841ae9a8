package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func TestDotfilesConfig(t *testing.T) {
	cfg, err := Parse([]byte("[dotfiles]\nrepo = \"git@github.com:me/dots.git\"\nbranch = \"main\"\nscript = \"bin/install\"\ntarget = \"~/.dots\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := host.DotfilesConfig{Repo: "git@github.com:me/dots.git", Branch: "main", Script: "bin/install", Target: "~/.dots"}
	if cfg.Dotfiles != want {
		t.Errorf("parsed %+v, want %+v", cfg.Dotfiles, want)
	}
	for toml, msg := range map[string]string{
		`repoo = "x"`:                              "repoo",
		`repo = "ext::sh -c id"`:                   "[dotfiles]",
		`repo = "dots"` + "\n" + `target = "../x"`: "no ..",
	} {
		if _, err := Parse([]byte("[dotfiles]\n" + toml + "\n")); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), msg) {
			t.Errorf("[dotfiles] %s: %v, want an error saying %q", toml, err, msg)
		}
	}
}
