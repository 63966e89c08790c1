package mcpgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is one configured server and its session, opened on first use.
type upstream struct {
	g       *Gateway
	cfg     ServerConfig
	headers map[string]string // resolved
	env     map[string]string // resolved
	// connecting is held (a token in it) while a session is being opened, and while one
	// whose opener gave up (its context ended) is still being closed; waiters select on it
	// and on their context.
	connecting chan struct{}

	mu      sync.Mutex
	session *mcp.ClientSession
	tools   []Tool // cached, allowed_tools applied; nil: not listed
	closed  bool
	health  health
}

func newUpstream(g *Gateway, cfg ServerConfig, headers, env map[string]string) *upstream {
	return &upstream{g: g, cfg: cfg, headers: headers, env: env, connecting: make(chan struct{}, 1)}
}

// connect returns the open session, opening one if there is none.
func (u *upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	if s, err := u.current(); s != nil || err != nil {
		return s, err
	}
	select {
	case u.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The token is given back when this call returns, unless a connection it gave up on
	// is still being closed: then once that is done (below), so that no second session,
	// and no second stdio child, is opened beside one still stopping.
	handedOff := false
	defer func() {
		if !handedOff {
			<-u.connecting
		}
	}()
	if s, err := u.current(); s != nil || err != nil {
		return s, err // another caller opened it meanwhile
	}
	client := mcp.NewClient(&mcp.Implementation{Name: u.g.opts.ClientName, Version: u.g.opts.ClientVersion}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { u.forgetTools() },
	})
	// The connection's context outlives this call (the SSE transport's event stream is
	// the session): ctx bounds the connecting only, and the context ends with the session.
	connCtx, endConn := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, endConn)
	type connected struct {
		s   *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	go func() {
		s, err := client.Connect(connCtx, u.transport(), nil)
		done <- connected{s, err}
	}()
	var s *mcp.ClientSession
	var err error
	select {
	case c := <-done:
		s, err = c.s, c.err
		if !stop() && err == nil {
			_ = s.Close()
			err = ctx.Err()
		}
	case <-ctx.Done():
		// The SDK, its initialize cut short, closes the half-open session and may wait
		// seconds for a server that does not answer: the caller does not wait with it, but
		// the next connection waits for it (the token is held until it is closed).
		handedOff = true
		go func() {
			defer func() { <-u.connecting }()
			if c := <-done; c.s != nil {
				_ = c.s.Close()
			}
		}()
		err = ctx.Err()
	}
	if err != nil {
		endConn()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s: connecting: %w", ErrUpstream, u.cfg.Name, err)
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		_ = s.Close()
		endConn()
		return nil, ErrClosed
	}
	u.session, u.tools = s, nil
	u.mu.Unlock()
	u.g.opts.Logger.Info("mcp server connected", "server", u.cfg.Name, "transport", u.cfg.Transport)
	go func() {
		// The session ends when the server goes away (a stdio child exits, a stream
		// breaks): forget it, so the next use opens a new one.
		err := s.Wait()
		defer endConn()
		if u.drop(s) {
			u.g.opts.Logger.Warn("mcp server session ended", "server", u.cfg.Name, "err", err)
		}
	}()
	return s, nil
}

// current is the open session (nil: none) or ErrClosed.
func (u *upstream) current() (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, ErrClosed
	}
	return u.session, nil
}

// drop forgets s (and the tool list) if it is the current session, and closes it; it
// reports whether s was current.
func (u *upstream) drop(s *mcp.ClientSession) bool {
	u.mu.Lock()
	current := u.session == s
	if current {
		u.session, u.tools = nil, nil
	}
	u.mu.Unlock()
	if current {
		_ = s.Close()
	}
	return current
}

// forgetTools drops the cached tool list.
func (u *upstream) forgetTools() {
	u.mu.Lock()
	u.tools = nil
	u.mu.Unlock()
}

// close ends the session (a stdio child is stopped).
func (u *upstream) close() error {
	u.mu.Lock()
	u.closed = true
	s := u.session
	u.session, u.tools = nil, nil
	u.mu.Unlock()
	if s == nil {
		return nil
	}
	if err := s.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("mcpgateway: closing %s: %w", u.cfg.Name, err)
	}
	return nil
}

// failed handles a request's failure on s: a failure of the session itself (not an error
// the server answered with, nor the caller's context) drops it, so the next use reconnects.
func (u *upstream) failed(ctx context.Context, s *mcp.ClientSession, err error) {
	var we *jsonrpc.Error
	if errors.As(err, &we) || ctx.Err() != nil {
		u.forgetTools()
		return
	}
	u.drop(s)
}

// retryable reports a failure that proves the server never handled the request: the
// server no longer knows the session (it restarted).
func retryable(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing)
}

// listTools returns the cached tool list, listing the tools when there is none.
// cachedTools is u's cached tool list; nil when none is cached or u is closed.
func (u *upstream) cachedTools() []Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil
	}
	return u.tools
}

func (u *upstream) listTools(ctx context.Context) ([]Tool, error) {
	u.mu.Lock()
	tools, closed := u.tools, u.closed
	u.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if tools != nil {
		return tools, nil
	}
	return u.freshTools(ctx)
}

// freshTools asks the server for its tools (opening a session when there is none: MCP's
// initialize), whatever is cached, and caches what it answers.
func (u *upstream) freshTools(ctx context.Context) ([]Tool, error) {
	for attempt := 0; ; attempt++ {
		s, err := u.connect(ctx)
		if err != nil {
			return nil, err
		}
		tools, err := u.fetchTools(ctx, s)
		if err == nil {
			u.mu.Lock()
			if u.session == s {
				u.tools = tools
			}
			u.mu.Unlock()
			return tools, nil
		}
		u.failed(ctx, s, err)
		// Listing is safe to repeat: once more on a new session after a broken one.
		if attempt > 0 || ctx.Err() != nil || !u.isGone(s) {
			return nil, err
		}
	}
}

// isGone reports whether s is no longer the current session.
func (u *upstream) isGone(s *mcp.ClientSession) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.session != s && !u.closed
}

// fetchTools lists s's tools, every page, keeping the allowed ones.
func (u *upstream) fetchTools(ctx context.Context, s *mcp.ClientSession) ([]Tool, error) {
	ctx, cancel := clean(ctx)
	defer cancel()
	out := []Tool{}
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if len(u.cfg.AllowedTools) > 0 && !slices.Contains(u.cfg.AllowedTools, t.Name) {
			continue
		}
		tool := Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(`{"type":"object"}`)}
		if t.InputSchema != nil {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("tool %s: its input schema: %w", t.Name, err)
			}
			tool.InputSchema = b
		}
		if t.Annotations != nil {
			b, err := json.Marshal(t.Annotations)
			if err != nil {
				return nil, fmt.Errorf("tool %s: its annotations: %w", t.Name, err)
			}
			tool.Annotations = b
		}
		out = append(out, tool)
	}
	return out, nil
}

// checkTool returns ErrUnknownTool unless tool is among the server's tools; a name missing
// from the cached list is looked for once more in a fresh one.
func (u *upstream) checkTool(ctx context.Context, tool string) error {
	for attempt := 0; attempt < 2; attempt++ {
		tools, err := u.listTools(ctx)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == tool }) {
			return nil
		}
		if len(u.cfg.AllowedTools) > 0 && !slices.Contains(u.cfg.AllowedTools, tool) {
			break // not allowed: no listing will change that
		}
		u.forgetTools()
	}
	return fmt.Errorf("%w: server %s has no tool %q", ErrUnknownTool, u.cfg.Name, tool)
}

// call calls a tool; a call that failed because the session was already gone (the server
// never saw it) is made once more on a new session.
func (u *upstream) call(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	for attempt := 0; ; attempt++ {
		s, err := u.connect(ctx)
		if err != nil {
			return nil, err
		}
		cctx, cancel := clean(ctx)
		res, err := s.CallTool(cctx, params)
		cancel()
		if err == nil {
			return res, nil
		}
		u.failed(ctx, s, err)
		if attempt > 0 || ctx.Err() != nil || !retryable(err) {
			return nil, err
		}
	}
}

// transport builds the MCP transport of the server's configuration.
func (u *upstream) transport() mcp.Transport {
	switch u.cfg.Transport {
	case TransportStdio:
		cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
		cmd.Env = childEnv(u.env)
		cmd.Stderr = &stderrLog{u: u}
		return &stdioTransport{cmd: cmd, terminate: u.g.opts.StopTimeout, limit: wireLimit(u.g.opts.MaxResultBytes)}
	case TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: u.httpClient(), MaxEventSize: u.maxEventSize()}
	default:
		return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: u.httpClient(), MaxEventSize: u.maxEventSize()}
	}
}

// maxEventSize is the SDK's bound of an event: past capTransport's (which each event is
// cut at), so that the SDK's fixed default (16 MiB) does not end a session on an event
// the result cap allows.
func (u *upstream) maxEventSize() int {
	return int(wireLimit(u.g.opts.MaxResultBytes)) + 64<<10
}

// httpClient is the gateway's client adding the server's headers to each request and
// bounding what is read of each message it answers (capTransport).
func (u *upstream) httpClient() *http.Client {
	c := *u.g.opts.HTTPClient
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if len(u.headers) > 0 {
		base = &headerTransport{base: base, headers: u.headers}
	}
	c.Transport = &capTransport{base: base, limit: wireLimit(u.g.opts.MaxResultBytes)}
	return &c
}

// headerTransport adds fixed headers to each request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// inheritedEnv are the gateway's environment variables a stdio child gets.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "LANG"}

// childEnv is a stdio child's environment: inheritedEnv, then the configured env. It is
// never nil: exec.Cmd's nil Env is the gateway's whole environment.
func childEnv(env map[string]string) []string {
	out := []string{}
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, set := env[k]; !set {
				out = append(out, k+"="+v)
			}
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// stderrLog logs a stdio child's standard error, a line at a time.
type stderrLog struct {
	u   *upstream
	buf []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.u.g.opts.Logger.Debug("mcp server stderr", "server", w.u.cfg.Name, "line", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.u.g.opts.Logger.Debug("mcp server stderr", "server", w.u.cfg.Name, "line", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// clean is a context without ctx's values that ends when ctx does. The SDK reads its own
// values from a request's context (the protocol version of the MCP request being served,
// when the gateway is called from an MCP server of the same SDK): they must not reach the
// upstream's requests.
func clean(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(context.Background())
	if d, ok := ctx.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		c, cancelDeadline = context.WithDeadline(c, d)
		prev := cancel
		cancel = func(err error) { cancelDeadline(); prev(err) }
	}
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return c, func() { stop(); cancel(context.Canceled) }
}
