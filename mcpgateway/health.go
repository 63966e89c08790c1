package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is a server's health as the gateway last saw it (LiteLLM's MCP server status).
type Status string

// The statuses.
const (
	// StatusUnknown: the server has not been listed, called or checked yet.
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

// CheckHealth probes server now, whether or not it was used: it lists its tools on its
// session (opening one, MCP's initialize, when it has none or its session broke), within
// Options.HealthCheckTimeout and ctx, and records what that says as a listing does (the
// list read replaces the cached one). It returns the server's health after the probe. A
// server that fails the probe is no error (its ServerInfo says unhealthy and why); the
// errors are ErrUnknownServer, ErrClosed, and ctx's own when the caller went away (nothing
// is then recorded).
func (g *Gateway) CheckHealth(ctx context.Context, server string) (ServerInfo, error) {
	u, err := g.server(server)
	if err != nil {
		return ServerInfo{}, err
	}
	tctx, cancel := context.WithTimeout(ctx, g.opts.HealthCheckTimeout)
	defer cancel()
	_, err = u.freshTools(tctx)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ServerInfo{}, fmt.Errorf("mcpgateway: health check of %s: %w", server, ctx.Err())
	case errors.Is(err, ErrClosed):
		return ServerInfo{}, err
	case tctx.Err() != nil:
		err = fmt.Errorf("%w: %s: no answer to the health check within %s: %w", ErrTimeout, server, g.opts.HealthCheckTimeout, redactURLs(err))
	default:
		err = g.classify(tctx, u, "", err)
	}
	u.observeHealth(ctx, err)
	si := ServerInfo{Name: u.cfg.Name, Description: u.cfg.Description, Transport: u.cfg.Transport}
	u.healthInfo(&si)
	return si, nil
}
