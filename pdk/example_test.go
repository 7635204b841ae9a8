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

// noCurl is a policy's check function: it refuses curl and allows the
// rest. A shell string arrives as ["/bin/sh","-c",STRING] with STRING in
// r.Shell, so Command[0] is the shell: this example refuses what it cannot
// read; a real policy reads the string with package
// github.com/wai-dev/wai/policies/shellcmd (see the package doc). Judging
// base names is a seatbelt: a copy of curl under another name passes.
func noCurl(r pdk.CheckRequest) pdk.Decision {
	if r.Shell != "" {
		return pdk.Deny("this policy judges argv commands only: give the command as an argv")
	}
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

	for _, r := range []pdk.CheckRequest{
		{Action: pdk.ActionShellExec, Command: []string{"/usr/bin/curl", "https://example.com"}},
		{Action: pdk.ActionShellExec, Command: []string{"ls", "-l"}},
		{Action: pdk.ActionShellExec, Command: []string{"/bin/sh", "-c", "curl x"}, Shell: "curl x"},
	} {
		d := noCurl(r)
		fmt.Printf("%s: allow=%v reason=%q\n", r.Command[0], d.Allow, d.Reason)
	}
	// Output:
	// /usr/bin/curl: allow=false reason="curl is not allowed here: fetch files with the tools instead"
	// ls: allow=true reason=""
	// /bin/sh: allow=false reason="this policy judges argv commands only: give the command as an argv"
}
