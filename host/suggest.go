package host

import "github.com/wai-dev/wai/host/backend"

// nearest is backend.Nearest: the kernel computes suggestions, not the
// CLI, so a model calling over MCP gets the same "did you mean" a person
// at the terminal does.
func nearest(s string, candidates []string) string { return backend.Nearest(s, candidates) }

// didYouMean is nearest's answer as a clause to append to a message.
func didYouMean(s string, candidates []string) string {
	if n := nearest(s, candidates); n != "" {
		return "; did you mean " + quote(n) + "?"
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }
