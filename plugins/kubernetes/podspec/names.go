package podspec

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Labels on every object the backend creates: `wai gc` and `wai ps` find
// them by these, as they find Podman containers by the same keys.
// Kubernetes label values are at most 63 characters of [A-Za-z0-9_.-]
// starting and ending with a letter or digit, which not every session or
// user name is: such a value is replaced by a hash (labelValue), and the
// exact names are kept in annotations.
const (
	LabelManaged = "wai.managed" // "true"
	LabelSession = "wai.session" // labelValue(session)
	LabelUser    = "wai.user"    // labelValue(user), "" for none
	LabelKeep    = "wai.keep"    // "true" when the session was opened with Keep
	LabelPod     = "wai.pod"     // the pod's own name, for selectors

	AnnotationSession = "wai.dev/session" // the exact session name
	AnnotationUser    = "wai.dev/user"    // the exact user name
)

// labelValue returns v when it is a valid label value, else "h-" and a
// hash of it: the same name always maps to the same value, so a selector
// finds it.
func labelValue(v string) string {
	if len(content.IsLabelValue(v)) == 0 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "h-" + hex.EncodeToString(sum[:12])
}

// PodName is the pod of a user's session: the prefix, the session name
// folded to what a DNS-1123 label allows, and a hash of the exact user
// and session names (so "A" and "a", or two users' "s", get two pods).
// It is a valid DNS-1123 label of at most 63 characters.
func PodName(prefix, user, session string) string {
	sum := sha256.Sum256([]byte(user + "\x00" + session))
	hash := hex.EncodeToString(sum[:5])
	room := 63 - len(prefix) - len(hash) - 2
	folded := fold(session, room)
	if folded == "" {
		return prefix + "-" + hash
	}
	return prefix + "-" + folded + "-" + hash
}

// fold lower-cases s, turns what a DNS label may not hold into '-',
// squeezes runs of '-', and trims it to n characters without a '-' at
// either end.
func fold(s string, n int) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > n {
		out = out[:max(n, 0)]
	}
	return strings.Trim(out, "-")
}
