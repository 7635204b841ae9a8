package backend

import (
	"errors"
	"reflect"
	"testing"
)

var hostEnv = map[string]string{
	"OPENAI_API_KEY": "sk-1", "GH_TOKEN": "gh", "ANTHROPIC_MODEL": "m", "HTTPS_PROXY": "p",
	"PATH": "/bin", "HOME": "/root", "EDITOR": "vi", "SSH_AUTH_SOCK": "/s", "MY_API_KEYS": "no",
	"WAI_MCP_TOKEN": "wai-bearer", "WAI_PLUGIN_DIR": "/p",
}

func TestPassthroughEnvModes(t *testing.T) {
	cases := []struct {
		name     string
		p        EnvPassthrough
		patterns []string
		explicit map[string]string
		want     map[string]string
	}{
		// No patterns configured: credentials are opt-in, nothing passes.
		{"auto without patterns passes nothing", EnvPassthrough{Mode: EnvPassAuto}, nil, nil, map[string]string{}},
		{"auto matches the patterns", EnvPassthrough{Mode: EnvPassAuto}, []string{"*_API_KEY", "*_TOKEN", "ANTHROPIC_*", "HTTPS_PROXY"}, nil,
			map[string]string{"OPENAI_API_KEY": "sk-1", "GH_TOKEN": "gh", "ANTHROPIC_MODEL": "m", "HTTPS_PROXY": "p"}},
		// wai's own variables never pass, whatever the mode names.
		{"auto never wai's own", EnvPassthrough{Mode: EnvPassAuto}, []string{"*"}, nil,
			map[string]string{"OPENAI_API_KEY": "sk-1", "GH_TOKEN": "gh", "ANTHROPIC_MODEL": "m", "HTTPS_PROXY": "p", "EDITOR": "vi", "MY_API_KEYS": "no"}},
		{"list never wai's own", EnvPassthrough{Names: []string{"WAI_MCP_TOKEN", "EDITOR"}}, nil, nil, map[string]string{"EDITOR": "vi"}},
		{"empty mode is auto", EnvPassthrough{}, []string{"ED*"}, nil, map[string]string{"EDITOR": "vi"}},
		{"auto no match", EnvPassthrough{Mode: EnvPassAuto}, []string{"NOPE_*"}, nil, map[string]string{}},
		{"fnmatch classes", EnvPassthrough{Mode: EnvPassAuto}, []string{"[EG]?_*", "EDIT?R"}, nil,
			map[string]string{"GH_TOKEN": "gh", "EDITOR": "vi"}},
		{"all but never-passthrough", EnvPassthrough{Mode: EnvPassAll}, nil, nil,
			map[string]string{"OPENAI_API_KEY": "sk-1", "GH_TOKEN": "gh", "ANTHROPIC_MODEL": "m", "HTTPS_PROXY": "p", "EDITOR": "vi", "MY_API_KEYS": "no"}},
		{"none keeps only explicit", EnvPassthrough{Mode: EnvPassNone}, nil, map[string]string{"A": "1"}, map[string]string{"A": "1"}},
		{"explicit list", EnvPassthrough{Names: []string{"EDITOR", "MISSING"}}, nil, nil, map[string]string{"EDITOR": "vi"}},
		{"explicit env overrides auto", EnvPassthrough{Mode: EnvPassAuto}, []string{"*_API_KEY"}, map[string]string{"OPENAI_API_KEY": "mine"},
			map[string]string{"OPENAI_API_KEY": "mine"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, names, err := PassthroughEnv(hostEnv, c.p, c.patterns, c.explicit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if len(names) != len(c.want) {
				t.Errorf("names %v do not match %v", names, c.want)
			}
		})
	}
}

func TestPassthroughEnvRejects(t *testing.T) {
	if _, _, err := PassthroughEnv(hostEnv, EnvPassthrough{Mode: "some"}, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown mode: %v, want ErrInvalid", err)
	}
	if _, _, err := PassthroughEnv(hostEnv, EnvPassthrough{Mode: EnvPassAuto}, []string{"[oops"}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad pattern: %v, want ErrInvalid", err)
	}
	if _, _, err := PassthroughEnv(hostEnv, EnvPassthrough{Mode: EnvPassNone}, nil, map[string]string{"A=B": "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad name: %v, want ErrInvalid", err)
	}
}
