package backend

import "context"

// Progress is one step of long work a backend does on the caller's behalf:
// pulling an image, starting a container, filling a workspace. A front end
// (the CLI's status line, an MCP progress notification) shows Stage while
// it runs, so a first command that takes thirty seconds says why.
type Progress struct {
	// Stage says what is happening in a few lower-case words a person
	// reads, e.g. "pulling image docker.io/library/python:3.12-slim".
	Stage string
	// Done marks the end of Stage (whether it worked or not: the error,
	// if any, reaches the caller as the request's own result). A report
	// without Done starts Stage.
	Done bool
}

// ProgressFunc receives progress reports. Backends call it on their own
// goroutines, in the middle of requests, possibly from several requests at
// once: it must be safe for concurrent use and return at once (record the
// report, never block on a terminal or a network peer).
type ProgressFunc func(Progress)

type progressKey struct{}

// WithProgress returns a context whose requests report their slow steps to
// fn. The reporter travels with the request through the kernel, policies
// and plugins to the backend, like a deadline does, so a front end sees the
// progress of exactly the calls it made. A nil fn removes the reporter.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress hands p to the context's reporter, if it has one. Without
// one it costs a context lookup, so backends call it unconditionally.
func ReportProgress(ctx context.Context, p Progress) {
	if fn, _ := ctx.Value(progressKey{}).(ProgressFunc); fn != nil {
		fn(p)
	}
}

// StartProgress reports that stage begins and returns the function that
// reports it done, for use as
//
//	defer backend.StartProgress(ctx, "starting container "+name)()
func StartProgress(ctx context.Context, stage string) (done func()) {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	if fn == nil {
		return noop
	}
	fn(Progress{Stage: stage})
	return func() { fn(Progress{Stage: stage, Done: true}) }
}

func noop() {}
