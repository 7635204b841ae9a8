package main

import (
	"flag"
	"slices"
	"testing"
)

// wai serve --token-env NAME puts NAME among wai's own secrets
// (host.Config.SecretEnv) beside the config's [mcp] token_env: that token
// opens the server, so no container the agent creates may be given it
// (host's TestContainersKernelPath proves SecretEnv keeps it out). The
// flags are wai serve's own registration, read as the command reads them.
func TestServeTokenEnvIsASecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "[mcp]\ntoken_env = \"CONFIG_TOKEN\"\n")
	for _, tc := range []struct {
		flags     []string
		want, not []string
	}{
		{flags: nil, want: []string{"CONFIG_TOKEN"}, not: []string{"FLAG_TOKEN"}},
		{flags: []string{"--token-env", "FLAG_TOKEN"}, want: []string{"CONFIG_TOKEN", "FLAG_TOKEN"}},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		var o serveOptions
		o.register(fs)
		if err := fs.Parse(append([]string{"--config", e.config}, tc.flags...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := o.config(stdio{getenv: e.getenv})
		if err != nil {
			t.Fatal(err)
		}
		got := cfg.Kernel().SecretEnv
		for _, name := range tc.want {
			if !slices.Contains(got, name) {
				t.Errorf("serve %q: the kernel's SecretEnv %q lacks %s", tc.flags, got, name)
			}
		}
		for _, name := range tc.not {
			if slices.Contains(got, name) {
				t.Errorf("serve %q: the kernel's SecretEnv %q holds %s, which no flag named", tc.flags, got, name)
			}
		}
	}
}
