// Command stateful is a test tool plugin that keeps state in Go globals,
// as a real plugin may (a cache, a counter): the runtime must never let
// one session's calls see what another session's calls left there.
//
//   - remember stores its value and answers the one stored before it;
//   - hold runs the command "hold" through the shell, which the test's
//     fake shell answers only when the test lets it: a call that stays
//     busy for as long as the test wants, without burning CPU;
//   - grow keeps mib more MiB of guest memory alive.
package main

import "github.com/wai-dev/wai/pdk"

// last is the value the previous remember call on this instance stored.
var last string

// kept holds what grow allocated, so the guest's memory stays grown.
var kept [][]byte

type rememberParams struct {
	Value string `json:"value"`
}

type growParams struct {
	MiB int `json:"mib"`
}

func init() {
	pdk.Declare("stateful", "1.0.0", pdk.CapShell)
	pdk.Tool("remember", "Stores value and answers the one stored before it.", func(c *pdk.Call, p rememberParams) (pdk.Result, error) {
		prev := last
		last = p.Value
		return pdk.OK(prev, map[string]string{"previous": prev}), nil
	})
	pdk.Tool("hold", "Runs the command hold and answers its output.", func(c *pdk.Call, _ struct{}) (pdk.Result, error) {
		res, err := pdk.Shell.Exec(pdk.ExecRequest{Argv: []string{"hold"}})
		if err != nil {
			return pdk.Result{}, err
		}
		return pdk.OK(res.Stdout, nil), nil
	})
	pdk.Tool("grow", "Keeps mib more MiB of memory alive.", func(c *pdk.Call, p growParams) (pdk.Result, error) {
		for i := 0; i < p.MiB; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			kept = append(kept, b)
		}
		return pdk.OK("grown", map[string]int{"mib": len(kept)}), nil
	})
}

func main() {}
