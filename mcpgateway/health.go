package mcpgateway

import (
	"context"
	"errors"
	"time"
)

// Status is a server's health as the gateway last saw it (LiteLLM's MCP server status).
type Status string

// The statuses.
const (
	// StatusUnknown: the server has not been listed or called yet.
	StatusUnknown Status = "unknown"
	// StatusHealthy: the server answered its last listing or call.
	StatusHealthy Status = "healthy"
	// StatusUnhealthy: the server could not be reached, failed the request or did not
	// answer in time; ServerInfo.LastError says how.
	StatusUnhealthy Status = "unhealthy"
)

// health is an upstream's Status, guarded by upstream.mu.
type health struct {
	status  Status
	checked time.Time
	lastErr string
}

// observeHealth records what a listing or call of u (err nil: it answered) says of the
// server: ErrUpstream and ErrTimeout make it unhealthy; an answer, or a failure the server
// answered with (an unknown tool, a result over the cap), healthy. The caller's own
// failures (bad arguments, its context ending) say nothing. A change of status is logged
// once: a warning when the server turns unhealthy, a line when it is healthy again.
func (u *upstream) observeHealth(ctx context.Context, err error) {
	status := StatusHealthy
	switch {
	case errors.Is(err, ErrClosed), errors.Is(err, ErrInvalidArguments):
		return
	case ctx.Err() != nil && err != nil:
		return // the caller went away, or its own deadline passed (ctx is the caller's)
	case errors.Is(err, ErrTimeout):
		status = StatusUnhealthy
	case errors.Is(err, ErrUpstream):
		status = StatusUnhealthy
	}
	u.mu.Lock()
	prev := u.health.status
	u.health.status, u.health.checked, u.health.lastErr = status, time.Now().UTC(), ""
	if status == StatusUnhealthy {
		u.health.lastErr = err.Error()
	}
	u.mu.Unlock()
	switch {
	case status == StatusUnhealthy && prev != StatusUnhealthy:
		u.g.opts.Logger.WarnContext(ctx, "mcp server unhealthy", "server", u.cfg.Name, "err", err)
	case status == StatusHealthy && prev == StatusUnhealthy:
		u.g.opts.Logger.InfoContext(ctx, "mcp server healthy again", "server", u.cfg.Name)
	}
}

// healthInfo fills si's Status, LastChecked and LastError.
func (u *upstream) healthInfo(si *ServerInfo) {
	u.mu.Lock()
	h := u.health
	u.mu.Unlock()
	si.Status, si.LastError = h.status, h.lastErr
	if si.Status == "" {
		si.Status = StatusUnknown
	}
	if !h.checked.IsZero() {
		t := h.checked
		si.LastChecked = &t
	}
}
