package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	// DefaultCallTimeout bounds a call when Options.CallTimeout is 0.
	DefaultCallTimeout = 60 * time.Second
	// DefaultMaxResultBytes caps a result when Options.MaxResultBytes is 0: 4 MiB.
	DefaultMaxResultBytes = 4 << 20
	// DefaultHealthCheckTimeout bounds a health check (CheckHealth) when
	// Options.HealthCheckTimeout is 0.
	DefaultHealthCheckTimeout = 10 * time.Second
)

// Options configure New. The zero value is ready to use.
type Options struct {
	// CallTimeout bounds one tool call or tool listing, connecting included (default
	// DefaultCallTimeout).
	CallTimeout time.Duration
	// MaxResultBytes caps a tool result's content, as JSON (default DefaultMaxResultBytes).
	MaxResultBytes int
	// HealthCheckTimeout bounds one health check (CheckHealth), connecting included
	// (default DefaultHealthCheckTimeout, and never past CallTimeout).
	HealthCheckTimeout time.Duration
	// Logger receives one line per tool call (never its arguments) and connection events
	// (nil discards them, as the other packages' loggers do: no global state).
	Logger *slog.Logger
	// Observer is told of every tool call (nil: none).
	Observer Observer
	// LookupEnv reads "os.environ/NAME" values (default os.LookupEnv).
	LookupEnv func(name string) (string, bool)
	// HTTPClient makes the http and sse transports' requests (default a client of its own
	// on http.DefaultTransport); the configured headers are added to each request.
	HTTPClient *http.Client
	// ClientName and ClientVersion identify the gateway to upstream servers (default
	// "switchyard" and "dev").
	ClientName, ClientVersion string
	// StopTimeout is how long Close waits for a stdio child after closing its stdin before
	// it is terminated (default 5s).
	StopTimeout time.Duration
}

// ServerInfo describes a configured server.
type ServerInfo struct {
	// Name is the server's configured name.
	Name string `json:"name"`
	// Description is the configured description.
	Description string `json:"description,omitempty"`
	// Transport is http, sse or stdio.
	Transport Transport `json:"transport"`
	// Status is the server's health as its last listing, call or health check
	// (CheckHealth) showed it.
	Status Status `json:"status"`
	// LastChecked is when the server was last listed, called or checked (nil: never).
	LastChecked *time.Time `json:"last_checked,omitempty"`
	// LastError is the failure that made the server unhealthy ("" when it is not).
	LastError string `json:"last_error,omitempty"`
}

// Tool is a tool of an upstream server, as the server describes it.
type Tool struct {
	// Name is the tool's name on its server.
	Name string `json:"name"`
	// Description is the server's description of the tool.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the tool's arguments.
	InputSchema json.RawMessage `json:"inputSchema"`
	// Annotations are the server's hints about the tool (MCP's ToolAnnotations); nil when none.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Result is a tool's answer.
type Result struct {
	// Content is the MCP content array, as the server sent it.
	Content json.RawMessage `json:"content"`
	// Text is the content's text parts, joined by newlines.
	Text string `json:"text"`
	// IsError is the tool's own report of a failure (the content says what failed).
	IsError bool `json:"isError,omitempty"`
	// StructuredContent is the tool's structured result, when it sent one.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}

// Gateway holds the upstream MCP servers. Create it with New; it is safe for concurrent
// use. The zero value has no servers.
type Gateway struct {
	opts    Options
	servers []*upstream
	byName  map[string]*upstream
	mu      sync.Mutex
	closed  bool
}

// New checks servers and returns a gateway for them; nothing is connected until a server is
// first used. Header and env values "os.environ/NAME" are read now: a variable not set is an
// error naming the field.
func New(servers []ServerConfig, opts Options) (*Gateway, error) {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.HealthCheckTimeout <= 0 {
		opts.HealthCheckTimeout = DefaultHealthCheckTimeout
	}
	opts.HealthCheckTimeout = min(opts.HealthCheckTimeout, opts.CallTimeout)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport}
	}
	if opts.ClientName == "" {
		opts.ClientName = "switchyard"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 5 * time.Second
	}
	g := &Gateway{opts: opts, byName: map[string]*upstream{}}
	for i, sc := range servers {
		field := fmt.Sprintf("servers[%d]", i)
		if sc.Name != "" {
			field = "mcp_servers." + sc.Name
		}
		if err := sc.check(field); err != nil {
			return nil, err
		}
		if _, dup := g.byName[sc.Name]; dup {
			return nil, fmt.Errorf("%w: %s.name: %q is configured twice", ErrConfig, field, sc.Name)
		}
		headers := make(map[string]string, len(sc.Headers))
		for k, v := range sc.Headers {
			r, err := resolveEnv(v, field+".headers."+k, opts.LookupEnv)
			if err != nil {
				return nil, err
			}
			headers[k] = r
		}
		env := make(map[string]string, len(sc.Env))
		for k, v := range sc.Env {
			r, err := resolveEnv(v, field+".env."+k, opts.LookupEnv)
			if err != nil {
				return nil, err
			}
			env[k] = r
		}
		u := newUpstream(g, sc, headers, env)
		g.servers = append(g.servers, u)
		g.byName[sc.Name] = u
	}
	return g, nil
}

// Servers describes the configured servers, in configuration order, each with its health
// as its last listing or call showed it.
func (g *Gateway) Servers() []ServerInfo {
	if g == nil {
		return nil
	}
	out := make([]ServerInfo, len(g.servers))
	for i, u := range g.servers {
		out[i] = ServerInfo{Name: u.cfg.Name, Description: u.cfg.Description, Transport: u.cfg.Transport}
		u.healthInfo(&out[i])
	}
	return out
}

// HasServer reports whether a server of that name is configured.
func (g *Gateway) HasServer(name string) bool {
	if g == nil {
		return false
	}
	_, ok := g.byName[name]
	return ok
}

// server returns the upstream called name, or ErrUnknownServer.
func (g *Gateway) server(name string) (*upstream, error) {
	if g == nil {
		return nil, fmt.Errorf("%w %q: no MCP servers are configured", ErrUnknownServer, name)
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	u, ok := g.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	return u, nil
}

// ListTools returns server's tools, as the server names them, allowed_tools applied; the
// list is cached until the server says it changed or a call to it fails.
func (g *Gateway) ListTools(ctx context.Context, server string) ([]Tool, error) {
	u, err := g.server(server)
	if err != nil {
		return nil, err
	}
	if tools := u.cachedTools(); tools != nil {
		return tools, nil // the server was not asked: its health stays as last seen
	}
	tctx, cancel := context.WithTimeout(ctx, g.opts.CallTimeout)
	defer cancel()
	tools, err := u.listTools(tctx)
	if err != nil {
		err = g.classify(tctx, u, "", err)
	}
	u.observeHealth(ctx, err)
	return tools, err
}

// CallTool calls server's tool with arguments (a JSON object; empty for none) and returns
// its result. A tool's own failure is a Result with IsError, not an error.
func (g *Gateway) CallTool(ctx context.Context, server, tool string, arguments json.RawMessage) (Result, error) {
	start := time.Now()
	u, err := g.server(server)
	if err != nil {
		return Result{}, err
	}
	rec := CallRecord{Server: server, Tool: tool}
	res, err := g.callTool(ctx, u, tool, arguments, &rec)
	rec.Duration, rec.Err = time.Since(start), err
	u.observeHealth(ctx, err)
	switch {
	case err == nil && res.IsError:
		rec.Outcome = OutcomeToolError
	case err == nil:
		rec.Outcome = OutcomeOK
	case errors.Is(err, ErrTimeout):
		rec.Outcome = OutcomeTimeout
	case errors.Is(err, ErrResultTooLarge):
		rec.Outcome = OutcomeTooLarge
	case errors.Is(err, ErrUnknownTool):
		rec.Outcome = OutcomeUnknownTool
	case errors.Is(err, ErrInvalidArguments):
		rec.Outcome = OutcomeInvalidArguments
	case ctx.Err() != nil:
		rec.Outcome = OutcomeCancelled
	default:
		rec.Outcome = OutcomeUpstreamError
	}
	attrs := []any{"server", server, "tool", tool, "outcome", rec.Outcome, "duration_ms", rec.Duration.Milliseconds(), "result_bytes", rec.ResultBytes}
	if err != nil {
		g.opts.Logger.WarnContext(ctx, "mcp tool call", append(attrs, "err", err)...)
	} else {
		g.opts.Logger.InfoContext(ctx, "mcp tool call", attrs...)
	}
	if g.opts.Observer != nil {
		g.opts.Observer.ObserveToolCall(ctx, rec)
	}
	return res, err
}

func (g *Gateway) callTool(ctx context.Context, u *upstream, tool string, arguments json.RawMessage, rec *CallRecord) (Result, error) {
	var args any
	if len(strings.TrimSpace(string(arguments))) > 0 && string(arguments) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(arguments, &obj); err != nil || obj == nil {
			return Result{}, fmt.Errorf("%w: %s/%s: arguments must be a JSON object", ErrInvalidArguments, u.cfg.Name, tool)
		}
		args = json.RawMessage(arguments)
	}
	ctx, cancel := context.WithTimeout(ctx, g.opts.CallTimeout)
	defer cancel()
	if err := u.checkTool(ctx, tool); err != nil {
		return Result{}, g.classify(ctx, u, tool, err)
	}
	res, err := u.call(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return Result{}, g.classify(ctx, u, tool, err)
	}
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s/%s: its content: %w", ErrUpstream, u.cfg.Name, tool, err)
	}
	out := Result{Content: raw, IsError: res.IsError}
	if res.StructuredContent != nil {
		if out.StructuredContent, err = json.Marshal(res.StructuredContent); err != nil {
			return Result{}, fmt.Errorf("%w: %s/%s: its structured content: %w", ErrUpstream, u.cfg.Name, tool, err)
		}
	}
	size := len(out.Content) + len(out.StructuredContent)
	if size > g.opts.MaxResultBytes {
		return Result{}, fmt.Errorf("%w: %s/%s answered %d bytes, over the cap of %d bytes (%s)", ErrResultTooLarge, u.cfg.Name, tool, size, g.opts.MaxResultBytes, humanBytes(g.opts.MaxResultBytes))
	}
	rec.ResultBytes = size
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	return out, nil
}

// classify wraps a failure of u (tool "" for a listing) in the package's errors.
func (g *Gateway) classify(ctx context.Context, u *upstream, tool string, err error) error {
	what := u.cfg.Name
	if tool != "" {
		what += "/" + tool
	}
	err = redactURLs(err)
	switch {
	case isCut(err) || errors.Is(err, ErrResultTooLarge):
		// Its answer was cut off while read (messageCap): too large for the cap.
		return fmt.Errorf("%w: %s answered over %d bytes, over the cap of %d bytes (%s)", ErrResultTooLarge, what,
			wireLimit(g.opts.MaxResultBytes), g.opts.MaxResultBytes, humanBytes(g.opts.MaxResultBytes))
	case errors.Is(err, ErrUnknownTool), errors.Is(err, ErrUpstream), errors.Is(err, ErrClosed), errors.Is(err, ErrInvalidArguments):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return fmt.Errorf("%w: %s: no answer within %s (--mcp-call-timeout): %w", ErrTimeout, what, g.opts.CallTimeout, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUpstream, what, err)
}

// urlPattern matches a URL in an error's text.
var urlPattern = regexp.MustCompile(`(?i)\b(?:https?|wss?)://[^\s"'<>]+`)

// redactedError is an error whose text has its URLs left out; it wraps the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactURLs leaves the URLs out of err's text (an upstream's URL may be its credential,
// and the gateway's errors reach its callers); the errors it wraps stay comparable.
func redactURLs(err error) error {
	msg := err.Error()
	red := urlPattern.ReplaceAllString(msg, "(the server's URL)")
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

// humanBytes writes n bytes as MiB or KiB when it is a whole number of them.
func humanBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Close ends every session and stops the stdio children (each gets Options.StopTimeout
// after its stdin is closed, then is terminated). Later calls fail with ErrClosed.
func (g *Gateway) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(g.servers))
	for i, u := range g.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = u.close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
