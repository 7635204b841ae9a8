package backend

import "context"

// ContainerJobs is implemented by Containers backends that run background
// jobs in managed containers, on the same machinery as a session's jobs
// (JobRunner): a job started in one call is polled and cancelled in later
// ones. Find it by type assertion on a Backend that implements
// Containers.
//
// The runner returned belongs to one container of ref's owner: a
// container of another user, or one that does not exist, is ErrNotFound
// as for every Containers operation; a container that cannot run jobs
// (created without what the backend needs for them) is ErrUnavailable
// saying what to do. A container's jobs go with it: once it is
// destroyed, its jobs are not found.
//
// The caller (the kernel) applies the policy chain and its own limits
// (runtime cap, jobs per container) before StartJob, as for a session's
// jobs; the backend enforces the per-stream output budget and the
// runtime it is given.
type ContainerJobs interface {
	ContainerJobs(ctx context.Context, ref ContainerRef) (JobRunner, error)
}
