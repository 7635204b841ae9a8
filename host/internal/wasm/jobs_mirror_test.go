package wasm

import (
	"reflect"
	"testing"

	"github.com/wai-dev/wai/internal/wiremirror"
	"github.com/wai-dev/wai/pdk"
)

// The jobs host functions' JSON is spelled here and again in pdk/jobs.go
// (a guest cannot import the host; RATIONALE.md, "Deliberate
// repetition"), and sdk-tests/abitest does not drive jobs: this keeps the
// two spellings one. Answers must match both ways (the pdk reads every
// field), requests one way (the host decodes strictly, so every field the
// pdk sends must be one it knows).
func TestJobsWireMirrorsPDK(t *testing.T) {
	for _, c := range []struct {
		name     string
		host, pd reflect.Type
	}{
		{"job info", reflect.TypeFor[jobInfo](), reflect.TypeFor[pdk.JobInfo]()},
		{"job status", reflect.TypeFor[jobStatus](), reflect.TypeFor[pdk.JobStatus]()},
		{"job list", reflect.TypeFor[jobList](), reflect.TypeFor[struct {
			Jobs []pdk.JobInfo `json:"jobs"`
		}]()},
	} {
		wiremirror.Check(t, "pdk "+c.name, c.pd, c.host)
		wiremirror.Check(t, "host "+c.name, c.host, c.pd)
	}
	// The pdk sends max_runtime_ms beside these (from MaxRuntime, in a
	// wrapper of its own); the ids and offsets of the other calls are
	// checked by tools/jobs' tests, which run through the kernel.
	wiremirror.Check(t, "pdk job start", reflect.TypeFor[pdk.JobRequest](), reflect.TypeFor[jobStartRequest]())
}
