package backend

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestProgressWithoutReporterIsNoop(t *testing.T) {
	ctx := context.Background()
	ReportProgress(ctx, Progress{Stage: "x"}) // must not panic
	StartProgress(ctx, "x")()
	if n := testing.AllocsPerRun(100, func() { StartProgress(ctx, "pulling image")() }); n != 0 {
		t.Errorf("StartProgress without a reporter allocates %v times per call", n)
	}
	// A nil reporter set explicitly removes an outer one.
	var got []Progress
	outer := WithProgress(ctx, func(p Progress) { got = append(got, p) })
	ReportProgress(WithProgress(outer, nil), Progress{Stage: "hidden"})
	if len(got) != 0 {
		t.Errorf("a nil reporter still passed reports on: %+v", got)
	}
}

func TestProgressReachesReporterThroughDerivedContexts(t *testing.T) {
	var (
		mu  sync.Mutex
		got []Progress
	)
	ctx := WithProgress(context.Background(), func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	// The deadline and values a kernel adds on the way down keep it.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ctx = context.WithValue(ctx, struct{ k int }{1}, "v")

	done := StartProgress(ctx, "starting container wai-s1")
	ReportProgress(ctx, Progress{Stage: "pulling image img"})
	done()
	want := []Progress{
		{Stage: "starting container wai-s1"},
		{Stage: "pulling image img"},
		{Stage: "starting container wai-s1", Done: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("reports = %+v, want %+v", got, want)
	}

	// Concurrent requests share one reporter; run with -race.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { StartProgress(ctx, "stage")() })
	}
	wg.Wait()
	if len(got) != 3+16 {
		t.Errorf("got %d reports from 8 concurrent stages, want 16 more than 3", len(got))
	}
}
