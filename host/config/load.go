package config

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/wai-dev/wai/host/backend"
)

// Load reads a configuration file over Default and validates it. With path "", it reads ./wai.toml, else
// $XDG_CONFIG_HOME/wai/config.toml (~/.config when unset), else returns the
// defaults. A path that is given must exist. It is LoadIn with the
// process's environment and working directory.
//
// Unknown keys are errors naming the key and its line: a misspelt limit
// silently left at its default is exactly the mistake a sandbox config must
// not allow.
func Load(path string) (File, error) { return LoadIn(path, Env{}) }

// LoadIn is Load with the variables and working directory of env: the
// file is looked for, and a relative path taken, from env.Dir, and the
// File keeps env for what it resolves later (PluginDirs, the default
// state directory).
func LoadIn(path string, env Env) (File, error) {
	if path == "" {
		for _, p := range env.configPaths() {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			f := Default()
			f.env = env
			return f, f.Validate()
		}
	} else {
		path = env.path(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, backend.Errorf(backend.ErrNotFound, "config", path, "no such file: check --config, or remove it to use ./wai.toml or the defaults")
		}
		return File{}, backend.Errorf(backend.ErrInvalid, "config", path, "cannot read: %v", err)
	}
	f, err := Parse(data)
	if err != nil {
		return File{}, relabel(err, path)
	}
	f.Path = path
	f.env = env
	return f, nil
}

// relabel puts the file name into a config error that was built without it.
func relabel(err error, path string) error {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		if _, isBackendErr := err.(*backend.Error); !isBackendErr {
			var out []error
			for _, e := range joined.Unwrap() {
				out = append(out, relabel(e, path))
			}
			return errors.Join(out...)
		}
	}
	var be *backend.Error
	if errors.As(err, &be) && be.Path == "" {
		cp := *be
		cp.Path = path
		return &cp
	}
	return err
}

// Parse decodes TOML over Default and validates the result.
func Parse(data []byte) (File, error) {
	def := Default()
	fc := fromFile(def)
	md, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(&fc)
	if err != nil {
		return File{}, backend.Errorf(backend.ErrInvalid, "config", "", "%v%s", err, tomlAdvice(err))
	}
	var errs []error
	for _, k := range topUndecoded(backendKeysDecoded(md.Undecoded())) {
		errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", "",
			"unknown key %q%s: %s", k.String(), atLine(data, md, k), unknownKeyAdvice(k)))
	}
	for _, k := range md.Keys() {
		if isDurationKey(k) && md.Type(k...) != "String" {
			errs = append(errs, backend.Errorf(backend.ErrInvalid, "config", "",
				"%s%s must be a duration string such as \"30s\" or \"15m\", %s", k.String(), atLine(data, md, k), durationTypeAdvice(data, md, k)))
		}
	}
	if len(errs) > 0 {
		return File{}, errors.Join(errs...)
	}
	f := fc.toFile()
	f.backendLines = backendKeyLines(data, md)
	return f, f.Validate()
}

// backendKeysDecoded drops the keys inside a [backends.NAME] table from the
// undecoded ones. The decoder reports every key below a table decoded into
// a free-form map (env = { FOO = "bar" }, [[backends.podman.host_mounts]])
// as undecoded, though the map holds it: the table goes to its backend
// whole, and the backend's own parser rejects the keys it does not know.
func backendKeysDecoded(keys []toml.Key) []toml.Key {
	var out []toml.Key
	for _, k := range keys {
		if len(k) >= 3 && k[0] == "backends" {
			continue
		}
		out = append(out, k)
	}
	return out
}

// topUndecoded drops keys below an unknown table: reporting [foo] once is
// clearer than reporting every key in it.
func topUndecoded(keys []toml.Key) []toml.Key {
	var out []toml.Key
	for _, k := range keys {
		covered := false
		for _, p := range out {
			if len(p) < len(k) && reflect.DeepEqual([]string(p), []string(k[:len(p)])) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, k)
		}
	}
	return out
}

func isDurationKey(k toml.Key) bool {
	switch {
	case len(k) == 1:
		return k[0] == "session_idle_timeout" || k[0] == "policy_timeout"
	case len(k) == 2 && k[0] == "limits":
		return strings.HasSuffix(k[1], "_timeout")
	case len(k) == 2 && k[0] == "tool_timeouts":
		return true
	case len(k) == 3 && k[0] == "soft_timeouts":
		return k[2] != "unattended"
	}
	return false
}
