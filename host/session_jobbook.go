package host

import (
	"slices"
	"sync"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// maxJobRecords bounds a session's job book: backends keep ended jobs for
// the workspace's life, so the book keeps its records for the session's
// life, the latest ones (a session runs at most limits.max_jobs at once).
const maxJobRecords = 256

// jobBook is a session's record of its jobs, so that a job its backend
// forgot (its sandbox stopped, removed or recreated: a container's job
// records go with it) is reported lost, with why and when, rather than
// "no such job". It holds the jobs started through the session and the
// ones a stop ended; the backend's word on a job it still has wins.
type jobBook struct {
	mu   sync.Mutex
	jobs []backend.JobInfo // oldest first: running as started, or lost
}

func stopNote(at time.Time) string {
	return "the workspace's sandbox was stopped at " + at.UTC().Format(time.TimeOnly) +
		" UTC; jobs end with it, and their output went with it"
}

func goneNote(at time.Time) string {
	return "its record went with its sandbox, removed or recreated since wai last saw the job running (found gone at " +
		at.UTC().Format(time.TimeOnly) + " UTC: an idle or max_uptime cleanup, or the container died); a job still running then ended with it, and its output went with it"
}

// endedNote is a job the backend forgot after wai saw it end.
const endedNote = "its record and output went with its sandbox, removed or recreated since it ended; this is how it ended"

// seen records jobs as the backend just described them.
func (b *jobBook) seen(jobs ...backend.JobInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, j := range jobs {
		if i := b.index(j.ID); i >= 0 {
			j.Command = b.jobs[i].Command
			b.jobs[i] = j
		} else {
			b.add(j)
		}
	}
}

// ended records the jobs a stop at at ended as lost, adding those another
// process of a kept session started.
func (b *jobBook) ended(jobs []backend.JobInfo, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, j := range jobs {
		i := b.index(j.ID)
		if i < 0 {
			b.add(j)
			i = len(b.jobs) - 1
		}
		b.lose(i, at, stopNote(at))
	}
}

// add appends a record, dropping the oldest past maxJobRecords. The
// caller holds b.mu.
func (b *jobBook) add(info backend.JobInfo) {
	info.Command = slices.Clone(info.Command)
	b.jobs = append(b.jobs, info)
	if n := len(b.jobs) - maxJobRecords; n > 0 {
		b.jobs = slices.Delete(b.jobs, 0, n)
	}
}

// index is the position of job id in the book, -1 if absent. The caller
// holds b.mu.
func (b *jobBook) index(id string) int {
	return slices.IndexFunc(b.jobs, func(j backend.JobInfo) bool { return j.ID == id })
}

// lose makes record i, if still running, lost (a job seen ended keeps how
// it ended, with a note) and returns it. The caller holds b.mu.
func (b *jobBook) lose(i int, at time.Time, note string) backend.JobInfo {
	switch j := &b.jobs[i]; {
	case j.Running():
		j.State, j.ExitCode, j.Signal, j.EndedAt, j.Note = backend.JobLost, -1, 0, at.UTC(), note
	case j.Note == "":
		j.Note = endedNote
	}
	return b.jobs[i]
}

// gone is the record of id if the book knows the backend forgot it.
func (b *jobBook) gone(id string) (backend.JobInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := b.index(id); i >= 0 && b.jobs[i].Note != "" {
		return b.jobs[i], true
	}
	return backend.JobInfo{}, false
}

// forgotten answers a job the backend says it does not have: one the
// session started is lost from now on.
func (b *jobBook) forgotten(id string) (backend.JobInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := b.index(id)
	if i < 0 {
		return backend.JobInfo{}, false
	}
	now := time.Now()
	return b.lose(i, now, goneNote(now)), true
}

// merge adds to the backend's list the book's jobs it no longer has, as
// lost, oldest first.
func (b *jobBook) merge(list []backend.JobInfo) []backend.JobInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	for i, j := range b.jobs {
		if !slices.ContainsFunc(list, func(l backend.JobInfo) bool { return l.ID == j.ID }) {
			list = append(list, b.lose(i, now, goneNote(now)))
		}
	}
	slices.SortStableFunc(list, func(a, b backend.JobInfo) int { return a.StartedAt.Compare(b.StartedAt) })
	return list
}
