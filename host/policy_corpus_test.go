package host

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wai-dev/wai/host/backend"
	"github.com/wai-dev/wai/internal/plugbuild"
)

// The policy corpus lives with the policies; this runner lives here
// because only host may reach the Wasm runtime.
const corpusPath = "../policies/testdata/corpus.json"

type corpusFile struct {
	Doc      string                     `json:"doc"`
	Policies map[string]json.RawMessage `json:"policies"`
	Cases    []corpusCase               `json:"cases"`
}

type corpusCase struct {
	Name        string            `json:"name"`
	Action      string            `json:"action"`
	Argv        []string          `json:"argv"`
	Shell       string            `json:"shell"`
	Script      string            `json:"script"`
	Interpreter string            `json:"interpreter"`
	EnvKeys     []string          `json:"env_keys"`
	Path        string            `json:"path"`
	Pad         int               `json:"pad"`
	Expect      map[string]string `json:"expect"`
	Why         string            `json:"why"`
	Reason      map[string]string `json:"reason"`
	Container   *ContainerCheck   `json:"container"`
}

// request builds the check the kernel would make for the case.
func (c corpusCase) request() CheckRequest {
	r := CheckRequest{Action: c.Action, EnvKeys: c.EnvKeys, Path: c.Path, Session: "corpus", Container: c.Container}
	if r.Action == "" {
		r.Action = ActionShellExec
	}
	switch {
	case c.Container != nil:
	case r.Action == ActionShellScript:
		r.Command, r.Script = []string{c.Interpreter}, c.Script
	case c.Shell != "":
		r.Command, r.Shell = backend.ExecRequest{Shell: c.Shell}.Command(), c.Shell
	default:
		r.Command = append([]string{}, c.Argv...)
	}
	if c.Pad > 0 {
		r.Command = append(r.Command, strings.Repeat("a", c.Pad))
	}
	return r
}

func loadCorpus(t *testing.T) corpusFile {
	t.Helper()
	data, err := os.ReadFile(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	var f corpusFile
	if err := backend.DecodeStrict(data, &f); err != nil {
		t.Fatalf("%s: %v", corpusPath, err)
	}
	for _, name := range BundledPolicies() {
		if _, ok := f.Policies[name]; !ok {
			t.Errorf("the corpus has no config for bundled policy %s: every bundled policy needs one", name)
		}
	}
	seen := map[string]bool{}
	for i, c := range f.Cases {
		switch {
		case c.Name == "" || seen[c.Name]:
			t.Errorf("case %d: name %q is empty or repeated", i, c.Name)
		case c.Why == "":
			t.Errorf("case %q: says no why", c.Name)
		}
		seen[c.Name] = true
		for p := range f.Policies {
			if e, ok := c.Expect[p]; !ok {
				t.Errorf("case %q has no expectation for policy %s", c.Name, p)
			} else if e != "allow" && e != "deny" {
				t.Errorf("case %q: expectation %q for %s is neither allow nor deny", c.Name, e, p)
			}
		}
		for p := range c.Expect {
			if _, ok := f.Policies[p]; !ok {
				t.Errorf("case %q expects a decision of unknown policy %s", c.Name, p)
			}
		}
		for p := range c.Reason {
			if c.Expect[p] != "deny" {
				t.Errorf("case %q gives a deny reason for %s, which it expects to allow", c.Name, p)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return f
}

// corpusPolicies returns every bundled policy twice: in-process, and as
// its Wasm plugin loaded through the kernel like any [[policies]] entry.
func corpusPolicies(t *testing.T, f corpusFile) map[string]Policy {
	t.Helper()
	ctx := context.Background()
	out := map[string]Policy{}
	names := slices.Sorted(maps.Keys(f.Policies))
	cfg := testConfig(t)
	cfg.StateDir = SharedStateDir
	cfg.DefaultPolicies = []string{}
	dir := t.TempDir()
	for _, name := range names {
		raw := f.Policies[name]
		native, err := bundledPolicy(ctx, name, raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name+"/native"] = native

		path := filepath.Join(dir, name+".wasm")
		if err := os.WriteFile(path, plugbuild.Build(t, "policies/"+name), 0o644); err != nil {
			t.Fatal(err)
		}
		var conf map[string]any
		if err := json.Unmarshal(raw, &conf); err != nil {
			t.Fatal(err)
		}
		cfg.Policies = append(cfg.Policies, PolicyConfig{Path: path, Config: conf})
	}
	k := kernelOn(t, cfg, newFake("fake", true))
	for i, name := range names {
		p := k.chain.policies[i]
		if p.Name() != name {
			t.Fatalf("the Wasm plugin built from policies/%s calls itself %s", name, p.Name())
		}
		out[name+"/wasm"] = p
	}
	return out
}

func TestPolicyCorpus(t *testing.T) {
	f := loadCorpus(t)
	policies := corpusPolicies(t, f)
	impls := slices.Sorted(maps.Keys(policies))
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			req := c.request()
			for _, impl := range impls {
				policy, _, _ := strings.Cut(impl, "/")
				chain := &policyChain{policies: []Policy{policies[impl]}, timeout: DefaultConfig().PolicyTimeout, log: discardLogger()}
				err := chain.check(context.Background(), req, nil)
				got := "allow"
				if err != nil {
					if !errors.Is(err, backend.ErrPermission) {
						t.Errorf("%s: not a decision: %v", impl, err)
						continue
					}
					got = "deny"
				}
				if want := c.Expect[policy]; got != want {
					t.Errorf("%s: %s, want %s (%s); error: %v", impl, got, want, c.Why, err)
					continue
				}
				if r := c.Reason[policy]; r != "" && !strings.Contains(err.Error(), r) {
					t.Errorf("%s: the reason %q does not mention %q", impl, err, r)
				}
			}
		})
	}
}
