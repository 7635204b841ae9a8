//go:build !wasip1

package pdk_test

import (
	"fmt"
	"path"
	"strings"

	"github.com/wai-dev/wai/pdk"
)

// shoutParams are the shout tool's params: its input schema is derived
// from them, and each call's params arrive decoded into them.
type shoutParams struct {
	Text  string `json:"text" jsonschema:"what to shout"`
	Times int    `json:"times,omitempty" minimum:"1" maximum:"3" default:"1"`
}

// shout is the tool's handler. It needs no host function, so it runs
// anywhere; one that does reaches the session through pdk.Shell or pdk.FS.
func shout(_ *pdk.Call, p shoutParams) (pdk.Result, error) {
	if strings.TrimSpace(p.Text) == "" {
		return pdk.Fail("text is empty: give the words to shout"), nil
	}
	words := make([]string, max(p.Times, 1))
	for i := range words {
		words[i] = strings.ToUpper(p.Text)
	}
	return pdk.OK(strings.Join(words, " "), map[string]int{"times": len(words)}), nil
}

// A tool plugin declares itself and its tools; in a plugin the first two
// calls are its init function, built with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
func ExampleTool() {
	pdk.Declare("shout", "1.0.0") // no capabilities: it touches no workspace
	pdk.Tool("shout", "Shouts the text back in capitals.", shout, pdk.ReadOnly(), pdk.Idempotent())

	// What the model is shown of the params, and what a call answers.
	schema, err := pdk.Schema[shoutParams]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(schema))
	res, _ := shout(&pdk.Call{Tool: "shout"}, shoutParams{Text: "hello", Times: 2})
	fmt.Println(res.OK, res.Message)
	res, _ = shout(&pdk.Call{Tool: "shout"}, shoutParams{})
	fmt.Println(res.OK, res.Message)
	// Output:
	// {"type":"object","properties":{"text":{"type":"string","description":"what to shout"},"times":{"type":"integer","minimum":1,"maximum":3,"default":1}},"required":["text"],"additionalProperties":false}
	// true HELLO HELLO
	// false text is empty: give the words to shout
}

// noCurl is a policy's check function: it refuses curl, however the
// command names it, and allows the rest.
func noCurl(r pdk.CheckRequest) pdk.Decision {
	if len(r.Command) > 0 && path.Base(r.Command[0]) == "curl" {
		return pdk.Deny("curl is not allowed here: fetch files with the tools instead")
	}
	return pdk.Allow()
}

// A policy plugin registers a check function for the actions it judges;
// the kernel asks it before each one, and a Deny's reason reaches the
// caller.
func ExamplePolicy() {
	pdk.Declare("no-curl", "1.0.0") // in a plugin: from init, as Policy
	pdk.Policy(noCurl, pdk.ActionShellExec)

	for _, argv := range [][]string{{"/usr/bin/curl", "https://example.com"}, {"ls", "-l"}} {
		d := noCurl(pdk.CheckRequest{Action: pdk.ActionShellExec, Command: argv})
		fmt.Printf("%s: allow=%v reason=%q\n", argv[0], d.Allow, d.Reason)
	}
	// Output:
	// /usr/bin/curl: allow=false reason="curl is not allowed here: fetch files with the tools instead"
	// ls: allow=true reason=""
}
