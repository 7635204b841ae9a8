package host

import (
	"context"
	"strings"

	"github.com/wai-dev/wai/host/backend"
)

// listContainers lists the session's containers and the user's
// persistent ones from other sessions: a model that reconnects (a new
// MCP session) must find the containers it made to outlive the last one,
// which status, exec and create by name already reach. Another user's are
// never listed. allSessions (wai containers ls) lists every container of
// the user.
func (s *Session) listContainers(ctx context.Context, c backend.Containers, owner backend.ContainerOwner, allSessions bool) (ContainerResponse, error) {
	var resp ContainerResponse
	mine := owner.Session
	owner.Session = ""
	ls, err := c.ListContainers(ctx, owner)
	if err != nil {
		return resp, err
	}
	var earlier []string
	for _, ci := range ls {
		switch {
		case ci.Session == mine || allSessions:
		case ci.Persistent:
			ci.EarlierSession = true
			earlier = append(earlier, ci.Name)
		default:
			continue
		}
		resp.Containers = append(resp.Containers, ci)
	}
	if len(earlier) > 0 && !allSessions {
		resp.Notes = append(resp.Notes, strings.Join(earlier, ", ")+" outlived the session that made it (persistent): "+
			"exec, copy_in and copy_out work on it as on yours; this session's /workspace is not mounted in it, and destroy removes it for good")
	}
	return resp, nil
}

// containerStatus describes one container and lists its background jobs:
// an exec_poll with a lost job id needs somewhere to find it again (the
// session's job_list does not list a container's jobs).
func (s *Session) containerStatus(ctx context.Context, c backend.Containers, ref backend.ContainerRef, healthCheck bool) (ContainerResponse, error) {
	var resp ContainerResponse
	info, err := c.ContainerStatus(ctx, ref, healthCheck)
	resp.Container = &info
	if err != nil || !info.Running {
		return resp, err
	}
	cj, ok := c.(backend.ContainerJobs)
	if !ok {
		return resp, nil
	}
	jobs, err := containerJobList(ctx, cj, ref)
	if err != nil {
		// Said, not dropped: an empty list would claim it runs none.
		resp.Notes = append(resp.Notes, "its background jobs could not be listed: "+err.Error())
		return resp, nil
	}
	resp.Jobs = jobs
	return resp, nil
}

func containerJobList(ctx context.Context, cj backend.ContainerJobs, ref backend.ContainerRef) ([]ContainerJob, error) {
	jr, err := cj.ContainerJobs(ctx, ref)
	if err != nil {
		return nil, err
	}
	ls, err := jr.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	out := []ContainerJob{}
	for _, j := range ls {
		out = append(out, *toContainerJob(ref.Name, j))
	}
	return out, nil
}
