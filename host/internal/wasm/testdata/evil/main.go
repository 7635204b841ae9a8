// Command evil is a plugin that misbehaves on request, for the runtime's
// defence tests. It speaks the ABI with go-pdk directly (not wai's pdk,
// which recovers panics and validates what it sends) so that each
// misbehaviour reaches the host raw.
//
// Config "kind" makes it a "tool" (default) or "policy" plugin; "declare"
// lists the capabilities it declares (comma-separated); "describe" and
// "check" choose how those exports misbehave. wai_call does what its tool
// name says.
package main

import (
	"encoding/json"
	"os"
	"strings"
	"time"

	gopdk "github.com/extism/go-pdk"
)

//go:wasmimport extism:host/user wai_shell_exec
func waiShellExec(uint64) uint64

//go:wasmimport extism:host/env output_set
func outputSet(offset, length uint64)

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

var tools = []string{"work", "echo", "loop", "sleep", "membomb", "panic", "exit", "bigoutput", "lieoutput", "garbage", "errorset", "badptr", "shell", "escape"}

func config(key, def string) string {
	if v, ok := gopdk.GetConfig(key); ok {
		return v
	}
	return def
}

func out(v any) int32 {
	b, _ := json.Marshal(v)
	gopdk.Output(b)
	return 0
}

//go:wasmexport wai_describe
func describe() int32 {
	switch config("describe", "") {
	case "loop":
		spin()
	case "panic":
		panic("describe exploded")
	case "garbage":
		gopdk.OutputString("<html>not a description</html>")
		return 0
	case "error":
		// What the pdk answers for a plugin with no Declare (ABI §5).
		return out(map[string]any{"error": map[string]any{"kind": "invalid", "message": "no pdk.Declare in the plugin's init"}})
	case "abi2":
		return out(map[string]any{"abi": 2, "name": "evil", "kind": "tool"})
	}
	caps := []string{}
	if d := config("declare", ""); d != "" {
		caps = strings.Split(d, ",")
	}
	kind := config("kind", "tool")
	d := map[string]any{"abi": 1, "name": "evil", "version": "6.6.6", "kind": kind, "capabilities": caps}
	if kind == "tool" {
		var ts []map[string]any
		for _, t := range tools {
			ts = append(ts, map[string]any{"name": t, "description": "misbehaves: " + t, "input_schema": map[string]any{"type": "object"}})
		}
		d["tools"] = ts
	}
	return out(d)
}

var sink [][]byte

var counter int

func spin() {
	for {
		counter++
	}
}

type call struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params"`
}

//go:wasmexport wai_call
func callTool() int32 {
	var c call
	if err := json.Unmarshal(gopdk.Input(), &c); err != nil {
		return out(map[string]any{"error": map[string]any{"kind": "invalid", "message": err.Error()}})
	}
	switch c.Tool {
	case "echo":
		return out(map[string]any{"ok": true, "message": "echo", "value": c.Params})
	case "work":
		// Loop-heavy but finite: what interruptibility costs is measured on it.
		var p struct {
			N int `json:"n"`
		}
		json.Unmarshal(c.Params, &p)
		x := uint64(1)
		for i := 0; i < p.N; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		return out(map[string]any{"ok": true, "message": "worked", "value": x})
	case "loop":
		spin()
	case "sleep":
		time.Sleep(time.Hour)
		return out(map[string]any{"ok": true, "message": "slept"})
	case "membomb":
		// {"mb": N} holds N MiB and answers; without it, it never stops.
		var p struct {
			MB int `json:"mb"`
		}
		json.Unmarshal(c.Params, &p)
		for i := 0; p.MB == 0 || i < p.MB; i++ {
			sink = append(sink, make([]byte, 1<<20))
		}
		n := len(sink)
		sink = nil
		return out(map[string]any{"ok": true, "message": "held", "value": n})
	case "panic":
		panic("boom: the tool exploded")
	case "exit":
		os.Exit(3)
	case "bigoutput":
		var p struct {
			MB int `json:"mb"`
		}
		json.Unmarshal(c.Params, &p)
		msg := strings.Repeat("x", p.MB<<20)
		return out(map[string]any{"ok": true, "message": msg})
	case "lieoutput":
		// Claims a 1 GiB output at a real 16-byte block.
		outputSet(alloc(16), 1<<30)
		return 0
	case "garbage":
		gopdk.OutputString("this is not JSON")
		return 0
	case "errorset":
		gopdk.SetErrorString(`{"kind":"permission","message":"the guest refuses"}`)
		return 1
	case "badptr":
		return out(map[string]any{"ok": true, "message": "bad pointers", "value": badPointers()})
	case "escape":
		return out(map[string]any{"ok": true, "message": "escape", "value": escape()})
	case "shell":
		req := gopdk.AllocateString(`{"argv":["echo","hi"]}`)
		return out(map[string]any{"ok": true, "message": "shell", "value": json.RawMessage(response(waiShellExec(req.Offset())))})
	}
	return out(map[string]any{"error": map[string]any{"kind": "not_found", "message": "no tool " + c.Tool}})
}

// escape tries to reach the host system through WASI, and returns what
// each attempt gave: "ok", or its error.
func escape() map[string]string {
	res := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	got := map[string]string{}
	for _, path := range []string{"/etc/passwd", "/proc/self/environ", "etc/passwd"} {
		_, err := os.ReadFile(path)
		got["read "+path] = res(err)
	}
	for _, dir := range []string{"/", "."} {
		_, err := os.ReadDir(dir)
		got["list "+dir] = res(err)
	}
	got["write /tmp/wai-evil-escape"] = res(os.WriteFile("/tmp/wai-evil-escape", []byte("escaped"), 0o644))
	if env := os.Environ(); len(env) > 0 {
		got["environment"] = "ok: " + strings.Join(env, " ")
	} else {
		got["environment"] = "empty"
	}
	return got
}

// badPointers hands the host offsets that name no request, and returns
// what it answered to each.
func badPointers() []json.RawMessage {
	big := gopdk.Allocate(2 << 20) // over the host's request limit
	valid := gopdk.AllocateString(`{"argv":["echo"]}`)
	garbage := gopdk.AllocateString(`{"argv":`)
	var answers []json.RawMessage
	for _, off := range []uint64{0xdeadbeef, 1 << 40, valid.Offset() + 3, big.Offset(), garbage.Offset(), ^uint64(0)} {
		answers = append(answers, json.RawMessage(response(waiShellExec(off))))
	}
	return answers
}

func response(off uint64) []byte {
	if off == 0 {
		return []byte(`null`)
	}
	m := gopdk.FindMemory(off)
	return m.ReadBytes()
}

//go:wasmexport wai_check
func check() int32 {
	switch config("check", "allow") {
	case "loop":
		spin()
	case "panic":
		panic("policy exploded")
	case "garbage":
		return out(map[string]any{"decision": "maybe"})
	case "deny":
		var req struct {
			Command []string `json:"command"`
		}
		json.Unmarshal(gopdk.Input(), &req)
		return out(map[string]any{"decision": "deny", "reason": "evil denies " + strings.Join(req.Command, " ")})
	}
	return out(map[string]any{"decision": "allow"})
}

// noop does nothing: the benchmarks measure Extism's fixed cost per call on it.
//
//go:wasmexport noop
func noop() int32 { return 0 }

func main() {}
