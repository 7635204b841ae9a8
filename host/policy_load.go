package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	allowrules "github.com/wai-dev/wai/policies/allowlist/rules"
	blockrules "github.com/wai-dev/wai/policies/blocklist/rules"
	containergates "github.com/wai-dev/wai/policies/container_safety/gates"

	"github.com/wai-dev/wai/host/backend"
)

// loadPolicies builds the chain: default_policies first, then [[policies]]
// in order.
func (k *Kernel) loadPolicies(ctx context.Context) ([]Policy, error) {
	cfg := k.cfg
	var out []Policy
	for _, name := range cfg.DefaultPolicies {
		p, err := bundledPolicy(ctx, name, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for i, pc := range cfg.Policies {
		if pc.Path != "" {
			p, err := k.loadPolicyPlugin(ctx, i, pc)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
			continue
		}
		var raw json.RawMessage
		if pc.Config != nil {
			var err error
			if raw, err = json.Marshal(pc.Config); err != nil {
				return nil, backend.Errorf(backend.ErrInvalid, "config", "", "policies[%d] (%s): config cannot be passed on as JSON: %v", i, pc.Name, err)
			}
		}
		p, err := bundledPolicy(ctx, pc.Name, raw)
		if err != nil {
			return nil, fmt.Errorf("policies[%d]: %w", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// configured builds a policy's rules from its raw config: parse, then
// build, either failing as the config's ErrInvalid.
func configured[C, R any](raw json.RawMessage, parse func([]byte) (C, error), build func(C) (R, error)) (R, error) {
	var r R
	c, err := parse(raw)
	if err == nil {
		r, err = build(c)
	}
	if err != nil {
		var zero R
		return zero, backend.Errorf(backend.ErrInvalid, "config", "", "%v", err)
	}
	return r, nil
}

// bundledPolicy builds a bundled policy from the same Go rules its Wasm
// plugin wraps.
func bundledPolicy(_ context.Context, name string, raw json.RawMessage) (Policy, error) {
	switch name {
	case "blocklist":
		b, err := configured(raw, blockrules.ParseConfig, blockrules.New)
		if err != nil {
			return nil, err
		}
		return funcPolicy{name: name, check: func(r CheckRequest) (bool, string) {
			return b.Check(blockrules.Request{Action: r.Action, Command: r.Command, Shell: r.Shell, Script: r.Script})
		}}, nil
	case "allowlist":
		a, err := configured(raw, allowrules.ParseConfig, allowrules.New)
		if err != nil {
			return nil, err
		}
		return decidingPolicy{name: name, decide: func(r CheckRequest) Decision {
			v := a.Judge(allowrules.Request{Action: r.Action, Command: r.Command, Shell: r.Shell, Script: r.Script, EnvKeys: r.EnvKeys})
			d := Decision{Allow: v.Allow, Ask: v.Ask, Reason: v.Reason}
			if !v.Allow {
				d.ConfigKey = allowrules.ConfigKey
			}
			return d
		}}, nil
	case "container_safety":
		c, err := containergates.ParseConfig(raw)
		if err != nil {
			return nil, backend.Errorf(backend.ErrInvalid, "config", "", "%v", err)
		}
		isContainers := func(a string) bool { return strings.HasPrefix(a, ActionContainersPrefix) }
		return decidingPolicy{name: name, only: isContainers, decide: func(r CheckRequest) Decision {
			if !isContainers(r.Action) {
				return Decision{Allow: true}
			}
			if r.Container == nil {
				return Decision{Reason: "a containers action without its description"}
			}
			ch := r.Container
			v := c.Check(containergates.Request{Operation: ch.Operation, Network: ch.Network, MountPaths: ch.MountPaths,
				EnvPassthrough: ch.EnvPassthrough, ForwardSSH: ch.ForwardSSH, ForwardGh: ch.ForwardGh, GPU: ch.GPU, Count: ch.Count, DotfilesRepo: ch.DotfilesRepo,
				Egress: ch.Egress, DockerfileBuild: ch.DockerfileBuild})
			d := Decision{Allow: v.Allow, Ask: v.Ask, Reason: v.Reason}
			if !v.Allow {
				d.ConfigKey = v.ConfigKey
			}
			return d
		}}, nil
	}
	return nil, backend.Errorf(backend.ErrInvalid, "config", "", "%q is not a bundled policy (%v)", name, BundledPolicies())
}

// funcPolicy is a policy decided by Go code in the host process.
type funcPolicy struct {
	name  string
	check func(CheckRequest) (bool, string)
	// only, when not nil, is the action prefix the policy judges; the
	// chain does not ask it about the others.
	only func(action string) bool
}

// judges reports whether the policy is asked about action.
func (p funcPolicy) judges(action string) bool { return p.only == nil || p.only(action) }

func (p funcPolicy) Name() string { return p.name }

func (p funcPolicy) Check(_ context.Context, req CheckRequest) (Decision, error) {
	ok, reason := p.check(req)
	return Decision{Allow: ok, Reason: reason}, nil
}

// decidingPolicy is a policy decided by Go code that may also ask.
type decidingPolicy struct {
	name   string
	decide func(CheckRequest) Decision
	// only, when not nil, is the action prefix the policy judges.
	only func(action string) bool
}

// judges reports whether the policy is asked about action.
func (p decidingPolicy) judges(action string) bool { return p.only == nil || p.only(action) }

func (p decidingPolicy) Name() string { return p.name }

func (p decidingPolicy) Check(_ context.Context, req CheckRequest) (Decision, error) {
	return p.decide(req), nil
}

// Interface guards
var (
	_ Policy = funcPolicy{}
	_ Policy = decidingPolicy{}
)
