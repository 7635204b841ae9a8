//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
)

// agentSlot is the agent of one container: started on the first command,
// restarted when it died, and left alone for a while (commands then take
// the Podman exec path) when it cannot be started.
type agentSlot struct {
	mu       sync.Mutex
	conn     *agentConn
	starts   int       // agents started in this container
	failures int       // failed starts in a row
	retryAt  time.Time // no start before this after a failure
}

// Backoff after a failed agent start: doubling from agentRetryBase to
// agentRetryMax, so a container whose agent cannot run (an image without
// the mount, a noexec surprise) costs one failed exec now and then, not
// one per command.
const (
	agentRetryBase = time.Second
	agentRetryMax  = time.Minute
)

// agentFor returns st's running agent, starting one when there is none;
// nil when the command must take the Podman exec path. A managed
// container's commands always do: its workspace lives for one call, and
// an agent started for it would outlive the call unowned.
func (w *Workspace) agentFor(ctx context.Context, st *ctrState) *agentConn {
	b := w.b
	if b.agentBin == "" || w.managed {
		return nil
	}
	s := &st.agent
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.conn.alive() {
		return s.conn
	}
	if old := s.conn; old != nil {
		s.conn = nil
		go w.stopAgent(st, old, "it died: "+firstLine(old.deadErr.Error()))
	}
	if time.Now().Before(s.retryAt) {
		return nil
	}
	conn, err := b.startAgent(ctx, st.id)
	if err != nil {
		s.failures++
		s.retryAt = time.Now().Add(min(agentRetryBase<<min(s.failures-1, 16), agentRetryMax))
		b.event(ctx, "runtime.podman.agent_failed", w, "container_id", short(st.id), "error", err.Error(),
			"retry_in", time.Until(s.retryAt).Round(time.Millisecond))
		return nil
	}
	s.failures = 0
	s.starts++
	s.conn = conn
	if s.starts > 1 {
		b.event(ctx, "runtime.podman.agent_restarted", w, "container_id", short(st.id), "pid", conn.pid)
	}
	return conn
}

// dropAgent takes conn out of service (a wedged agent, or one whose
// command had to be killed from outside) and stops it.
func (w *Workspace) dropAgent(st *ctrState, conn *agentConn, why string) {
	st.agent.mu.Lock()
	if st.agent.conn == conn {
		st.agent.conn = nil
	}
	st.agent.mu.Unlock()
	w.stopAgent(st, conn, why)
}

// stopAgent ends an agent's connection and kills its process from
// outside: a wedged agent reads no EOF. What it still ran dies with it or
// was killed by the caller.
func (w *Workspace) stopAgent(st *ctrState, conn *agentConn, why string) {
	conn.fail(errAgentDead)
	ctx, cancel := context.WithTimeout(context.Background(), killScriptBudget)
	defer cancel()
	if conn.pid > 1 {
		_, _, _ = w.b.execSimple(ctx, st.id, []string{"/bin/sh", "-c", "kill -KILL " + strconv.Itoa(conn.pid) + " 2>/dev/null; true"}, nil)
	}
	w.b.event(ctx, "runtime.podman.agent_stopped", w, "container_id", short(st.id), "pid", conn.pid, "reason", why)
}

// closeAgent ends st's agent, if any, when the container is kept after
// this process lets go of it: its stdin ends and it exits, killing
// nothing (nothing of this process's runs any more).
func (s *ctrState) closeAgent() {
	s.agent.mu.Lock()
	conn := s.agent.conn
	s.agent.conn = nil
	s.agent.mu.Unlock()
	if conn != nil {
		conn.fail(errAgentDead)
	}
}

// containerRunning reports whether the service says container id runs
// (false when it cannot tell).
func (b *Backend) containerRunning(ctx context.Context, id string) bool {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cctx, err := b.svc.ctx(ictx)
	if err != nil {
		return false
	}
	data, err := containers.Inspect(cctx, id, nil)
	return err == nil && data.State != nil && data.State.Running
}
