package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/litellmconfig"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// minModelHealthInterval is the shortest --model-health-interval (0 aside: off). Each
// round is a real, billed request of every deployment from every serve process, and the
// state it reports (GET /health, the metrics, the alerts, the breakers) moves no faster
// than a deployment's outages do: a shorter interval only spends.
const minModelHealthInterval = 5 * time.Second

// serveConfig is everything `switchyard serve` reads from flags and the environment.
type serveConfig struct {
	Addr            string
	storeFlags      // --data, --store, --store-schema (storeflag.go)
	CleanupInterval time.Duration
	MaxBodyBytes    int64
	AllowLocalURLs  bool
	PublicURL       string
	ProposerModel   string
	ProvidersConfig string
	// ModelGroups is --model-groups: a JSON file of model names that stand for several
	// models (completions.ModelGroup).
	ModelGroups string
	// LiteLLMConfig is --litellm-config: a LiteLLM proxy config.yaml read in place of
	// --providers-config and --model-groups; litellm is what loadLiteLLM read of it, and
	// maxRetries its num_retries (completions.Options.DefaultMaxRetries; 0: the default).
	LiteLLMConfig string
	litellm       *litellmconfig.Config
	maxRetries    int
	// MaxBudgetUSD and BudgetDuration are --max-budget-usd and --budget-duration: the USD
	// every gateway request may spend together (server.Config.ProxyMaxBudgetUSD), and how
	// often that account starts afresh; a LiteLLM config's litellm_settings.max_budget and
	// budget_duration set them unless given.
	MaxBudgetUSD   float64
	BudgetDuration string
	// RefuseMocks is --refuse-mock-responses: LiteLLM's testing switches are refused
	// (completions.Options.RefuseMocks).
	RefuseMocks bool
	// Guardrails is --guardrails: a JSON file of guardrails (completions.GuardrailConfig).
	Guardrails string
	// MCP is the MCP gateway's flags: --mcp-servers, --mcp-call-timeout,
	// --mcp-health-timeout, --mcp-max-result-bytes.
	MCP             mcpFlags
	PricesFile      string
	Sandbox         string
	GCPercent       int
	ShutdownTimeout time.Duration
	// ShutdownDelay is --shutdown-delay: how long /healthz says draining before the
	// listener closes.
	ShutdownDelay time.Duration
	// SessionRetention is how long model selection sessions are kept (negative: forever).
	SessionRetention time.Duration
	// TradeoffMaxLoss is --tradeoff-max-loss: the quality a trained router's default
	// tradeoff tolerance may give up (trainer.WithMaxQualityLoss).
	TradeoffMaxLoss float64
	// ModelHealthTimeout is --model-health-timeout: how long GET /health waits for each
	// deployment (0: no bound but the request's own).
	ModelHealthTimeout time.Duration
	// ModelHealthConcurrency is --model-health-concurrency: deployments GET /health checks
	// at once.
	ModelHealthConcurrency int
	// ModelHealthInterval is --model-health-interval: how often the deployments are checked
	// in the background, GET /health answering the latest results (0: off).
	ModelHealthInterval time.Duration
	// DeploymentsPoll is --deployments-poll: how often the deployments other replicas
	// stored through POST /model/new are looked for.
	DeploymentsPoll time.Duration
	// ModelHealthBreaker is --model-health-breaker: a failed background check opens the
	// model's circuit breaker, a passing one closes it.
	ModelHealthBreaker bool
	// CORSOrigins is the comma-separated allow-list of browser origins (empty: CORS off).
	CORSOrigins string
	// Console serves the web console at /console/.
	Console bool
	// ConversationWrites is "through" or "behind"; runServe parses it into writes.
	ConversationWrites string
	writes             completions.ConversationWrites
	// Faults are the gateway's time budgets and circuit breaker.
	Faults gatewayFaults
	// Cache is the gateway's response cache (--cache and its companions).
	Cache cacheFlags
	// Responses says how /v1/responses answers are kept (--responses-store, --responses-ttl).
	Responses responsesFlags
	// Retention says how long conversations and daily spend totals are kept
	// (--conversation-retention, --openai-conversation-retention, --spend-retention).
	Retention retentionFlags
	// Conns are the HTTP server's own limits.
	Conns     connLimits
	LogLevel  string
	LogFormat string
	jobLimits                // per-key job limits and the download idle timeout (joblimits.go)
	Batches   batchFlags     // the Files and Batch APIs (batchflags.go)
	Backups   backupFlags    // the bbolt file's backups (backup_cmd.go)
	TLS       tlsFlags       // HTTPS on --addr (tlsflags.go)
	Telemetry telemetryFlags // metrics and traces (telemetry.go)
	Alerts    alertFlags     // webhook alerts (alerts.go)
}

// connLimits are the serve flags that bound what one client can hold open.
type connLimits struct {
	IdleTimeout, BodyReadTimeout time.Duration
	MaxConnections               int
	// MaxConnectionsPerClient is --max-connections-per-client: how many of them one client
	// address (IPv6: /64) may hold; --trusted-proxies are exempt.
	MaxConnectionsPerClient int
	FailedAuthPerMinute     int
	RequestsPerMinutePerKey int
	// EndUsersPerKey is --end-users-per-key: how many end users one key may have.
	EndUsersPerKey int
	// LimitsSync is --limits-sync-interval: how often replicas on PostgreSQL share the
	// request and token rates they counted (0: each keeps its own).
	LimitsSync time.Duration
	// TrustedProxies is --trusted-proxies: comma-separated CIDRs (or addresses).
	TrustedProxies string
	// RealtimeCallIdle and RealtimeCallMax are --realtime-call-idle-timeout and
	// --realtime-call-max-duration: a realtime call silent, or lasting, that long is hung up
	// (0: no bound).
	RealtimeCallIdle, RealtimeCallMax time.Duration
	// RealtimeSessionIdle and RealtimeSessionMax are --realtime-session-idle-timeout and
	// --realtime-session-max-duration: a WebSocket realtime session silent either way, or
	// lasting, that long is closed (0: no bound).
	RealtimeSessionIdle, RealtimeSessionMax time.Duration
}

// gatewayFaults are the serve flags of the gateway's fault handling (completions.Options).
type gatewayFaults struct {
	FirstToken, StreamIdle, Attempt, Request time.Duration
	BreakerFailures                          int
	BreakerCooldown                          time.Duration
}

func serveFlags(fs *flag.FlagSet) *serveConfig {
	c := &serveConfig{}
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	c.storeFlags.register(fs)
	c.storeFlags.registerJobs(fs)
	fs.DurationVar(&c.CleanupInterval, "cleanup-interval", 7*24*time.Hour, "how often the router model lifecycle runs (archive after a year unused, remove 7 days later); it also runs at start-up; 0 turns it off (switchyard cleanup runs it by hand)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "request body limit in bytes")
	fs.BoolVar(&c.AllowLocalURLs, "allow-local-urls", false, "let dataset and bundle URLs point at loopback/private addresses and file://")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL clients reach this server at, for artifact links (default http://<listen address>, https:// with --tls-cert)")
	fs.StringVar(&c.ProposerModel, "proposer-model", "openai/gpt-4o-mini", "provider/model that proposes prompts in optimization jobs")
	fs.StringVar(&c.ProvidersConfig, "providers-config", "", "JSON file configuring LLM providers (default: from environment variables); read again at SIGHUP")
	fs.StringVar(&c.ModelGroups, "model-groups", "", `JSON file of model groups: names clients send as their model that stand for several models, tried in order or routed per request ({"smart": {"models": ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"], "route": true}}); read again at SIGHUP`)
	fs.StringVar(&c.LiteLLMConfig, "litellm-config", "", "LiteLLM proxy config.yaml to serve: its model_list, routing strategy, fallbacks, retries, timeout and master_key configure providers and model groups (not with --providers-config or --model-groups; see switchyard litellm-config check FILE); read again at SIGHUP")
	fs.StringVar(&c.Guardrails, "guardrails", "", `JSON file of guardrails run on chat requests before the upstream call or on the answer, default_on or named per request in "guardrails" ([{"name": "pii", "kind": "pii", "mode": "pre_call", "default_on": true}]; kinds moderation, secrets, pii, banned_words, regex)`)
	fs.StringVar(&c.MCP.Servers, "mcp-servers", "", `JSON or YAML file of upstream MCP servers served at /mcp (LiteLLM's form: {"mcp_servers": {"github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer os.environ/GITHUB_TOKEN"}}}}; transport http, sse or stdio with command, args and env)`)
	fs.DurationVar(&c.MCP.CallTimeout, "mcp-call-timeout", mcpgateway.DefaultCallTimeout, "how long one MCP tool call (or tool listing) may take, connecting included")
	fs.DurationVar(&c.MCP.HealthTimeout, "mcp-health-timeout", mcpgateway.DefaultHealthCheckTimeout, "how long a health check of an MCP server (GET /v1/mcp/server/health) may take, connecting included (never past --mcp-call-timeout)")
	fs.IntVar(&c.MCP.MaxResultBytes, "mcp-max-result-bytes", mcpgateway.DefaultMaxResultBytes, "cap on an MCP tool result's content, as JSON (a larger one is an error naming the cap)")
	fs.StringVar(&c.PricesFile, "prices-file", "", "LiteLLM-format JSON price file overriding the embedded catalogue")
	fs.StringVar(&c.Sandbox, "sandbox", "auto", "sandbox backend for optimization jobs: auto, process (bubblewrap) or wasm (WASI CPython)")
	fs.IntVar(&c.GCPercent, "gc-percent", 400, "Go GC target percentage when GOGC is not set; higher trades memory for fewer pauses on the request path")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", 0, "at SIGINT/SIGTERM, answer /healthz with 503 (draining) this long while still serving, before closing the listener, so a load balancer stops sending traffic first (0: close at once)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish at shutdown (then they are cut); background work (jobs handed over, queued conversation writes) gets as long again")
	fs.StringVar(&c.ConversationWrites, "conversation-writes", "through", "through: commit each conversation turn before answering; behind: answer first and commit queued turns in the background (faster; a crash loses the turns still queued)")
	fs.DurationVar(&c.SessionRetention, "session-retention", routing.DefaultSessionRetention, "how long model selection sessions are kept (expired hourly; a negative value keeps them forever)")
	fs.Float64Var(&c.TradeoffMaxLoss, "tradeoff-max-loss", trainer.MaxQualityLoss, "validation mean score (0-1; 0.01 is one point) a trained router's default tradeoff tolerance may give up against its no-tradeoff pick; larger buys cheaper default picks (see a router's frontier)")
	fs.DurationVar(&c.ModelHealthTimeout, "model-health-timeout", server.DefaultModelHealthTimeout, "how long LiteLLM's model health check (GET /health) waits for each deployment's answer before counting it unhealthy (0: no bound but the request's own)")
	fs.IntVar(&c.ModelHealthConcurrency, "model-health-concurrency", server.DefaultModelHealthConcurrency, "deployments GET /health checks at once")
	fs.DurationVar(&c.DeploymentsPoll, "deployments-poll", deployments.DefaultPoll, "how often the deployments stored through LiteLLM's POST /model/new by other replicas on the same store are looked for and applied (the replica that stores one applies it at once)")
	fs.DurationVar(&c.ModelHealthInterval, "model-health-interval", 0, "check every model group member in the background at start-up and then this often (±10% jitter; at least 5s), GET /health answering the latest results at once (?fresh=true checks now); each check is one tiny real, billed request, made by every serve process (0: off)")
	fs.BoolVar(&c.ModelHealthBreaker, "model-health-breaker", false, "with --model-health-interval: a background check that fails as an outage would (rate limit, 5xx, timeout, connection) opens the model's circuit breaker at once, so requests skip it until its cooldown probe or a passing check, which closes it at once; the breaker's alerts are then the outage's (one deployment_down, one deployment_recovered)")
	fs.BoolVar(&c.Console, "console", true, "serve the web console at /console/ (static files; the page asks for an API key); --console=false turns it off (the usage API stays)")
	fs.StringVar(&c.CORSOrigins, "cors-origins", "", "comma-separated browser origins allowed to call the API (e.g. https://app.example.com; * for any); empty turns CORS off")
	fs.DurationVar(&c.Faults.FirstToken, "first-token-timeout", 20*time.Second, "how long a streamed attempt may wait for its response and first fragment before the next model is tried (requests may set first_token_timeout)")
	fs.DurationVar(&c.Faults.StreamIdle, "stream-idle-timeout", 30*time.Second, "how long a stream may stay silent between fragments (requests may set stream_idle_timeout)")
	fs.DurationVar(&c.Faults.Attempt, "attempt-timeout", 120*time.Second, "how long one non-streamed upstream call may take")
	fs.DurationVar(&c.Faults.Request, "request-timeout", 5*time.Minute, "deadline of a whole completion request, retries and fallbacks included (requests may set timeout)")
	fs.IntVar(&c.Faults.BreakerFailures, "breaker-failures", 5, "consecutive failures of a model that open its circuit breaker (negative: no breaker)")
	fs.DurationVar(&c.Faults.BreakerCooldown, "breaker-cooldown", 30*time.Second, "how long an open circuit breaker skips its model before one request probes it (±20% jitter)")
	fs.DurationVar(&c.Conns.IdleTimeout, "idle-timeout", 60*time.Second, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&c.Conns.BodyReadTimeout, "body-read-timeout", server.DefaultBodyReadTimeout, "how long a client may take to send a request body (responses and streams are not affected)")
	fs.IntVar(&c.Conns.MaxConnections, "max-connections", 4096, "connections served at once; more wait in the listen backlog (0: no bound)")
	fs.IntVar(&c.Conns.MaxConnectionsPerClient, "max-connections-per-client", 1024, "connections one client address (IPv6: its /64) may hold at once; one more gets 429 and is closed, so one client cannot take every --max-connections slot. It bounds a client's requests in flight too (over HTTP/2, with --tls-cert, one connection carries many at once): one more gets 429 on its own stream. --trusted-proxies are exempt (their connections carry many clients): behind a reverse proxy, list it there. The default, a quarter of the default --max-connections, is far above one real client's needs (0: no bound)")
	fs.IntVar(&c.Conns.FailedAuthPerMinute, "failed-auth-per-minute", server.DefaultFailedAuthPerMinute, "failed authentications one client address may make per minute before it gets 429 (negative: no bound)")
	fs.IntVar(&c.Conns.EndUsersPerKey, "end-users-per-key", server.DefaultMaxEndUsersPerKey, "end users (LiteLLM's customers) one API key may have; past it a request naming a new one is refused with 400 (negative: no bound)")
	fs.BoolVar(&c.RefuseMocks, "refuse-mock-responses", false, "refuse LiteLLM's testing switches in chat requests (mock_response, which answers without a model, and mock_testing_fallbacks and its kin, which fail the model asked to test its fallbacks) with a 400 naming the field, for a production server (default: taken, as LiteLLM takes them)")
	fs.Float64Var(&c.MaxBudgetUSD, "max-budget-usd", 0, "USD every gateway request of every key (the operator's too) may spend together before they are refused with a 429 (LiteLLM's litellm_settings.max_budget; one account in the store, shared by the replicas; 0: no bound)")
	fs.StringVar(&c.BudgetDuration, "budget-duration", "", "with --max-budget-usd: how often that account starts afresh from its first use (30d, 1h, 1mo; LiteLLM's budget_duration; empty: never)")
	fs.IntVar(&c.Conns.RequestsPerMinutePerKey, "requests-per-minute-per-key", 0, "POST requests one API key may make per minute before it gets 429 with Retry-After (0: no bound); with a postgres --store, across the replicas (see --limits-sync-interval)")
	fs.DurationVar(&c.Conns.LimitsSync, "limits-sync-interval", time.Second, "with a postgres --store: how often each replica shares the requests and tokens it counted against per-key rates (--requests-per-minute-per-key, virtual keys' requests_per_minute and tokens_per_minute, model group members' rpm and tpm) and the requests it has in flight (keys' and teams' max_parallel_requests; a replica gone stops counting after three intervals), so the bounds hold across replicas give or take this much of their traffic; 0 keeps each replica's count its own")
	fs.DurationVar(&c.Conns.RealtimeCallIdle, "realtime-call-idle-timeout", server.DefaultRealtimeCallIdleTimeout, "a realtime call (POST /v1/realtime/calls) whose sideband brings no event for this long is hung up by the gateway, freeing the key's max_parallel_requests slot it holds (0: no bound)")
	fs.DurationVar(&c.Conns.RealtimeCallMax, "realtime-call-max-duration", server.DefaultRealtimeCallMaxDuration, "a realtime call lasting this long is hung up by the gateway (OpenAI ends its sessions at 60 minutes itself; 0: no bound)")
	fs.DurationVar(&c.Conns.RealtimeSessionIdle, "realtime-session-idle-timeout", server.DefaultRealtimeSessionIdleTimeout, "a WebSocket realtime session (/v1/realtime) with no message either way for this long is closed by the gateway (1008, an error event saying why), freeing the key's max_parallel_requests slot it holds (0: no bound)")
	fs.DurationVar(&c.Conns.RealtimeSessionMax, "realtime-session-max-duration", server.DefaultRealtimeSessionMaxDuration, "a WebSocket realtime session lasting this long is closed by the gateway (1008; OpenAI ends its sessions at 60 minutes itself; 0: no bound)")
	fs.StringVar(&c.Conns.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs or addresses of reverse proxies in front of serve: behind them the client address (failed-auth limit, access log) is read from X-Forwarded-For, and they are exempt from --max-connections-per-client (empty: the header is ignored)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	c.jobLimits.register(fs)
	c.Batches.register(fs)
	c.Backups.register(fs)
	c.TLS.register(fs)
	c.Telemetry.register(fs)
	c.Alerts.register(fs)
	c.Cache.register(fs)
	c.Responses.register(fs)
	c.Retention.register(fs)
	return c
}

func newLogger(c *serveConfig, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.LogFormat {
	case "text":
		return slog.New(server.RequestIDHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(server.RequestIDHandler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, got %q", c.LogFormat)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return serveOrWork(ctx, false, args, stdout, stderr)
}

// runWorker is `switchyard worker`: serve's store, queue and job services without the
// HTTP API — it runs jobs others accepted. It needs a PostgreSQL --store (bbolt is one
// process). Sandboxed agents of optimization jobs reach this process's gateway on a
// loopback-only listener.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return serveOrWork(ctx, true, args, stdout, stderr)
}

func serveOrWork(ctx context.Context, worker bool, args []string, stdout, stderr io.Writer) error {
	name := "serve"
	if worker {
		name = "worker"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = serveUsage(fs)
	if worker {
		fs.Usage = workerUsage(fs)
	}
	c := serveFlags(fs)
	if err := parseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	c.Backups.noteGiven(fs)
	if worker && !inArgs(args, "tls-cert") && !inArgs(args, "tls-key") {
		// An environment shared with serve (SWITCHYARD_TLS_CERT, as the worker's usage
		// advises serve's configuration) does not apply to a worker, as SWITCHYARD_ADDR does
		// not; given on its command line it is refused (checkFlags).
		c.TLS.Cert, c.TLS.Key = "", ""
		if !inArgs(args, "metrics-tls") {
			c.Telemetry.MetricsTLS = false // SWITCHYARD_METRICS_TLS goes with serve's pair
		}
	}
	if err := c.checkFlags(worker); err != nil {
		return &usageError{err: err}
	}
	if worker {
		// A worker answers no GET /health: the serve replicas check (a shared environment
		// may set SWITCHYARD_MODEL_HEALTH_INTERVAL for both).
		c.ModelHealthInterval, c.ModelHealthBreaker = 0, false
	}
	log, err := newLogger(c, stderr)
	if err != nil {
		return &usageError{err: err}
	}
	// Parsed before the data directory is touched, so a bad value leaves nothing behind.
	if err := c.loadLiteLLM(fs, log); err != nil {
		return err
	}
	if c.writes, err = completions.ParseConversationWrites(c.ConversationWrites); err != nil {
		return &usageError{err: fmt.Errorf("--conversation-writes: %w", err)}
	}
	if err := c.checkValues(); err != nil {
		return &usageError{err: err}
	}
	if c.TLS.enabled() {
		leaf, err := c.TLS.load()
		if err != nil {
			return err
		}
		log.Info("tls: serving HTTPS", describe(leaf)...)
	}
	proxies, err := parsePrefixes(c.Conns.TrustedProxies)
	if err != nil {
		return &usageError{err: fmt.Errorf("--trusted-proxies: %w", err)}
	}
	// The listen addresses too (a worker listens on a loopback port of its own): a typo exits
	// 2 naming the flag before the store is opened, not 1 after.
	addrName := addrFlag(args, "addr", os.Getenv)
	if !worker {
		if err := checkListenAddr(ctx, addrName, c.Addr); err != nil {
			return err
		}
	}
	if c.Telemetry.MetricsAddr != "" {
		if err := checkListenAddr(ctx, addrFlag(args, "metrics-addr", os.Getenv), c.Telemetry.MetricsAddr); err != nil {
			return err
		}
	}
	if os.Getenv("GOGC") == "" && c.GCPercent != 0 {
		// The live heap is small (price catalogue, cached router models), so Go's default of
		// 100 collects every few thousand requests; a higher target halves the gateway's
		// latency tail (BENCHMARKS.md) for a few more MiB of heap.
		debug.SetGCPercent(c.GCPercent)
	}
	obs, err := newObservability(ctx, c.Telemetry, log)
	if err != nil {
		return err
	}
	defer obs.tracing.Shutdown(context.WithoutCancel(ctx))
	be, err := c.storeFlags.open(ctx, obs.wrapStore, log)
	if errors.Is(err, store.ErrLocked) {
		// One process per bbolt file: usually a server already running on this --data.
		return fmt.Errorf("%w; is a switchyard server already running with --data %s? (processes share a store only on PostgreSQL: --store postgres://…)", err, c.DataDir)
	}
	if err != nil {
		return err
	}
	defer be.Close()
	st := be.store
	if be.bolt != nil {
		// Deferred after the store's Close, so it runs first: a backup under way ends
		// before the file closes.
		var reg prometheus.Registerer
		if obs.metrics != nil {
			reg = obs.metrics.Registry()
		}
		defer c.Backups.startBackups(ctx, be.bolt, c.DataDir, log, reg)()
	}

	var keys []string
	for _, k := range strings.Split(os.Getenv("SWITCHYARD_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if c.litellm != nil && c.litellm.MasterKey != "" {
		keys = append(keys, c.litellm.MasterKey) // general_settings.master_key
	}
	// Listen first: sandboxed agents reach this server's own gateway at the real address.
	// A worker listens on loopback only, for its agents.
	addr := c.Addr
	if worker {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if worker {
			return fmt.Errorf("listening on loopback for the agents' gateway: %w", err)
		}
		return listenError(addrName, addr, err)
	}
	defer ln.Close()
	if c.PublicURL == "" {
		// A worker serves no links: artifact URLs are built by the replica that answers.
		c.PublicURL = map[bool]string{false: "http://", true: "https://"}[c.TLS.enabled()] + publicAddr(ln.Addr())
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	agentsLn := ln
	if c.TLS.enabled() {
		// Sandboxed agents call the gateway in plain HTTP, which they need no certificate
		// to trust: on a loopback listener of their own.
		if agentsLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		defer agentsLn.Close()
	}
	wiring := &wiring{cfg: c, store: st, queue: be.queue, log: log, gatewayURL: "http://" + loopbackAddr(agentsLn.Addr()) + "/v1", obs: obs}
	if c.postgres() && c.Conns.LimitsSync > 0 {
		// Replicas share their per-key rates; bbolt serves one process, which needs none.
		wiring.limits = store.NewCounters(st, "limits")
	}
	opts, err := wiring.options(ctx)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Store:        st,
		APIKeys:      keys,
		MaxBodyBytes: c.MaxBodyBytes,
		Logger:       log,
		Version:      version,
		CORSOrigins:  splitList(c.CORSOrigins),
		// Flags say 0 for "no bound"; the server's Config says negative.
		BodyReadTimeout:            noBoundIfZero(c.Conns.BodyReadTimeout),
		FailedAuthPerMinute:        c.Conns.FailedAuthPerMinute,
		RequestsPerMinutePerKey:    c.Conns.RequestsPerMinutePerKey,
		MaxEndUsersPerKey:          c.Conns.EndUsersPerKey,
		ModelHealthTimeout:         noBoundIfZero(c.ModelHealthTimeout),
		ModelHealthConcurrency:     c.ModelHealthConcurrency,
		SharedLimits:               wiring.limits,
		TrustedProxies:             proxies,
		Middleware:                 obs.middleware(),
		RejectClientTags:           c.litellm != nil && c.litellm.RejectClientTags, // general_settings.reject_clientside_metadata_tags
		ProxyMaxBudgetUSD:          c.MaxBudgetUSD,
		ProxyBudgetDuration:        c.BudgetDuration,
		RealtimeCallIdleTimeout:    noBoundIfZero(c.Conns.RealtimeCallIdle),
		RealtimeCallMaxDuration:    noBoundIfZero(c.Conns.RealtimeCallMax),
		RealtimeSessionIdleTimeout: noBoundIfZero(c.Conns.RealtimeSessionIdle),
		RealtimeSessionMaxDuration: noBoundIfZero(c.Conns.RealtimeSessionMax),
	}, opts...)
	if err != nil {
		return err
	}
	has, err := srv.Auth().HasKeys(ctx)
	if err != nil {
		return err
	}
	if !has && !worker {
		key, err := srv.Auth().CreateKey(ctx, "created on first start")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "No API key was configured, so one was created. It is shown only this once; keep it:\n\n    %s\n\n", key)
	}
	if obs.metrics != nil && c.Telemetry.MetricsAddr != "" {
		var metricsTLS *tls.Config
		switch {
		case c.Telemetry.MetricsTLS:
			// The pair in force at each handshake: a SIGHUP's reload reaches it too.
			metricsTLS = c.TLS.config()
		case c.TLS.enabled() && c.Telemetry.MetricsToken != "":
			log.Warn("--metrics-addr serves plain HTTP though --tls-cert is set: a scraper's --metrics-token travels in the clear; set --metrics-tls to serve it over HTTPS",
				"metrics_addr", c.Telemetry.MetricsAddr)
		}
		stop, err := obs.serveMetrics(ctx, c.Telemetry, metricsTLS, log)
		if err != nil {
			srv.Close(context.Background())
			return err
		}
		defer stop()
	}
	// Runs before the deferred Close of the store (deferred earlier), on every return once
	// start launched the deployments poller and the background health checks: a poll or a
	// round under way stops, and nothing of them touches the store after.
	defer func() {
		if wiring.health != nil {
			wiring.health.Close()
		}
		if wiring.stopPolling != nil {
			wiring.stopPolling()
		}
	}()
	if err := wiring.start(ctx); err != nil {
		srv.Close(context.Background())
		return err
	}
	// SIGHUP reads --litellm-config, or --providers-config and --model-groups, again
	// (reload.go), one at a time. Not on Windows, which has no SIGHUP (signals_other.go).
	hup := make(chan os.Signal, 1)
	notifyReload(hup)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := wiring.reloadConfig(ctx); err != nil {
					log.Error("reload", "err", err)
				}
				if c.TLS.enabled() {
					if leaf, err := c.TLS.load(); err != nil {
						log.Error("reload: the certificate in force is kept", "err", err)
					} else {
						log.Info("tls: certificate reloaded", describe(leaf)...)
					}
				}
			}
		}
	}()

	// Requests outlive the signal (they get --shutdown-timeout to finish), not the cut at
	// its end: their contexts end then (cause server.ErrShuttingDown: a 503 to retry, or an
	// error event ending a stream), and with them their upstream calls.
	reqCtx, cutRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cutRequests(nil)
	inflight := &inflightHandlers{h: srv}
	hs := &http.Server{
		Handler:           inflight,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       c.Conns.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		HTTP2:             c.TLS.http2(),
	}
	// Realtime sessions (WebSockets, which Shutdown does not wait for) close with 1001 as
	// the shutdown begins, each recorded with what it was billed.
	hs.RegisterOnShutdown(srv.CloseRealtimeSessions)
	if worker {
		log.Info("switchyard worker running", "store", be.where, "workers", c.Workers, "agents_gateway", wiring.gatewayURL, "version", version)
	} else {
		attrs := []any{"addr", ln.Addr().String(), "store", be.where, "workers", c.Workers, "version", version}
		if c.TLS.enabled() {
			attrs = append(attrs, "tls", true, "agents_gateway", wiring.gatewayURL)
		}
		log.Info("switchyard listening", attrs...)
	}
	if c.Console && !worker {
		log.Info("web console", "url", c.PublicURL+"/console/")
	}
	limits := server.LimitListenerConfig{
		Max:       c.Conns.MaxConnections,
		PerClient: c.Conns.MaxConnectionsPerClient,
		Exempt:    func(a netip.Addr) bool { return inPrefixes(proxies, a) },
		Logger:    log,
	}
	if worker {
		// A worker's loopback listener serves only its own agents, all from one address: a
		// per-client bound would only be a lower global one that refuses instead of queueing.
		limits.PerClient = 0
	}
	errc := make(chan error, 1)
	if c.TLS.enabled() {
		hs.TLSConfig = c.TLS.config()
		limits.TLS = hs.TLSConfig // a refused connection's 429 is written over TLS too
		// Made (its copy of the configuration taken) before either Serve starts: the first
		// to start sets HTTP/2 up in hs.TLSConfig.
		tlsLn := server.LimitListenerWith(ln, limits)
		// Over HTTP/2 a connection carries many requests at once: the per-client bound
		// counts them too (the agents' listener is not counted).
		server.LimitRequestsPerClient(hs, tlsLn)
		go func() { errc <- hs.ServeTLS(tlsLn, "", "") }()
		go hs.Serve(agentsLn) // ends with hs.Shutdown
	} else {
		plainLn := server.LimitListenerWith(ln, limits)
		server.LimitRequestsPerClient(hs, plainLn)
		go func() { errc <- hs.Serve(plainLn) }()
	}
	select {
	case err := <-errc:
		srv.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	if c.ShutdownDelay > 0 {
		srv.Drain()
		log.Info("draining: /healthz answers 503 before the listener closes", "delay", c.ShutdownDelay.String())
		time.Sleep(c.ShutdownDelay)
	}
	log.Info("shutting down", "timeout", c.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	// Stop accepting and let in-flight requests finish, then stop background workers; the
	// deferred Close of the store runs last.
	switch err := hs.Shutdown(sctx); {
	case errors.Is(err, context.DeadlineExceeded):
		log.Warn("in-flight requests did not finish within --shutdown-timeout: cutting them", "timeout", c.ShutdownTimeout.String())
		cutRequests(server.ErrShuttingDown)
		// The cut requests answer (a 503 to retry, or an error event ending a stream) on
		// connections still open, then the stragglers' connections close.
		gctx, gcancel := context.WithTimeout(context.Background(), cutGrace)
		if hs.Shutdown(gctx) != nil {
			hs.Close()
		}
		gcancel()
	case err != nil:
		log.Warn("http shutdown", "err", err)
	}
	if wiring.stopSharing != nil {
		wiring.stopSharing() // the requests admitted while draining reach the other replicas
	}
	// The background work (jobs handed over, queued conversation writes committed) gets a
	// budget of its own: the requests may have used all of the first.
	wctx, wcancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer wcancel()
	sctx = wctx
	// Every handler has returned (a cut one too) before the services and the store close:
	// their last writes (request history, spend) land.
	if !inflight.wait(sctx) {
		log.Warn("requests still running after the cut: closing the store under them")
	}
	if err := srv.Close(sctx); err != nil {
		log.Warn("stopping workers", "err", err)
	}
	// The services have interrupted their jobs (left for the next worker); now stop
	// taking jobs from the shared queue.
	if be.queue != nil {
		if err := be.queue.Stop(sctx); err != nil {
			log.Warn("stopping the job queue", "err", err)
		}
	}
	log.Info("stopped")
	return nil
}

// noBoundIfZero maps a flag's 0 ("no bound") to the negative value Config uses for it.
func noBoundIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// loopbackAddr turns a wildcard listen address into one this host can dial.
// publicAddr is the host:port of links the server hands out (artifact URLs) when no
// --public-url is set: "localhost" for a wildcard listen address (":8080" would give
// "[::]:8080", which no client can open).
func publicAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("localhost", fmt.Sprint(tcp.Port))
}

func loopbackAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// inPrefixes reports whether a is in one of ps.
func inPrefixes(ps []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parsePrefixes reads a comma-separated list of CIDRs or single addresses.
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range splitList(list) {
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR nor an address", item)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// checkFlags checks the flags read before anything else (the store and the process's
// role); a refusal is a command line error (exit 2).
func (c *serveConfig) checkFlags(worker bool) error {
	if err := c.storeFlags.check(); err != nil {
		return err
	}
	if worker && !c.postgres() {
		return errors.New("a worker needs a shared PostgreSQL store (--store postgres://… or SWITCHYARD_STORE): with the bbolt file in --data, jobs run inside `switchyard serve` (bbolt is one process; set serve --workers there)")
	}
	if worker && c.Workers == 0 {
		return errors.New("--workers must be at least 1 for switchyard worker")
	}
	if err := c.TLS.check(worker); err != nil {
		return err
	}
	switch {
	case !c.Telemetry.MetricsTLS:
	case worker:
		return errors.New("--metrics-tls: a worker takes no --tls-cert (its metrics are plain HTTP): set it on serve")
	case !c.TLS.enabled():
		return errors.New("--metrics-tls needs --tls-cert and --tls-key (the certificate it serves)")
	case c.Telemetry.MetricsAddr == "":
		return errors.New("--metrics-tls needs --metrics-addr: without it /metrics is on the API's listener, which --tls-cert serves over HTTPS already")
	}
	return nil
}

// checkValues checks the values of the flags (after a --litellm-config filled those it
// sets): numbers out of range and unknown words are refused naming the flag, before the data
// directory is touched. A refusal is a command line error (exit 2).
func (c *serveConfig) checkValues() error {
	backups := func() error { return c.Backups.check(c.postgres()) }
	for _, check := range []func() error{c.Cache.check, c.Responses.check, c.Retention.check, c.Alerts.check, c.Batches.check, backups} {
		if err := check(); err != nil {
			return err
		}
	}
	if c.ModelHealthInterval != 0 && c.ModelHealthInterval < minModelHealthInterval {
		return fmt.Errorf("--model-health-interval must be 0 (off) or at least %s (each check is a real, billed request of every deployment), got %s", minModelHealthInterval, c.ModelHealthInterval)
	}
	if c.ModelHealthBreaker && c.ModelHealthInterval == 0 {
		return errors.New("--model-health-breaker needs --model-health-interval: without background checks nothing opens the breakers")
	}
	if c.MaxBodyBytes <= 0 {
		// server.Config's zero means its default; a flag set to 0 or less is a typo, not that.
		return fmt.Errorf("--max-body-bytes must be at least 1, got %d", c.MaxBodyBytes)
	}
	if c.ModelHealthConcurrency < 1 {
		return fmt.Errorf("--model-health-concurrency must be at least 1, got %d", c.ModelHealthConcurrency)
	}
	if c.MCP.MaxResultBytes < 1 {
		return fmt.Errorf("--mcp-max-result-bytes must be at least 1, got %d", c.MCP.MaxResultBytes)
	}
	if !(c.MaxBudgetUSD >= 0) { // NaN too
		return fmt.Errorf("--max-budget-usd must be 0 (no bound) or positive, got %g", c.MaxBudgetUSD)
	}
	for _, n := range []struct {
		flag string
		v    int
	}{
		{"--max-connections", c.Conns.MaxConnections},
		{"--max-connections-per-client", c.Conns.MaxConnectionsPerClient},
		{"--requests-per-minute-per-key", c.Conns.RequestsPerMinutePerKey},
	} {
		if n.v < 0 {
			return fmt.Errorf("%s must be 0 (no bound) or positive, got %d", n.flag, n.v)
		}
	}
	// Durations whose 0 has a meaning of its own (off, no bound, at once) or none here; a
	// negative one is a typo.
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--limits-sync-interval", c.Conns.LimitsSync},
		{"--cleanup-interval", c.CleanupInterval},
		{"--shutdown-delay", c.ShutdownDelay},
		{"--shutdown-timeout", c.ShutdownTimeout},
		{"--model-health-timeout", c.ModelHealthTimeout},
		{"--deployments-poll", c.DeploymentsPoll},
		{"--mcp-call-timeout", c.MCP.CallTimeout},
		{"--mcp-health-timeout", c.MCP.HealthTimeout},
		{"--first-token-timeout", c.Faults.FirstToken},
		{"--stream-idle-timeout", c.Faults.StreamIdle},
		{"--attempt-timeout", c.Faults.Attempt},
		{"--request-timeout", c.Faults.Request},
		{"--breaker-cooldown", c.Faults.BreakerCooldown},
		{"--idle-timeout", c.Conns.IdleTimeout},
		{"--body-read-timeout", c.Conns.BodyReadTimeout},
		{"--realtime-call-idle-timeout", c.Conns.RealtimeCallIdle},
		{"--realtime-call-max-duration", c.Conns.RealtimeCallMax},
		{"--realtime-session-idle-timeout", c.Conns.RealtimeSessionIdle},
		{"--realtime-session-max-duration", c.Conns.RealtimeSessionMax},
	} {
		if d.v < 0 {
			return fmt.Errorf("%s must be 0 or positive, got %s", d.flag, d.v)
		}
	}
	if !(c.TradeoffMaxLoss > 0 && c.TradeoffMaxLoss < 1) {
		return fmt.Errorf("--tradeoff-max-loss must be between 0 and 1 (0.01 is one point of score), got %g", c.TradeoffMaxLoss)
	}
	switch c.Sandbox {
	case "auto", "process", "wasm":
	default: // a typo; a backend that does not work here is only a warning (see sandboxRunner)
		return fmt.Errorf("--sandbox must be auto, process or wasm, got %q", c.Sandbox)
	}
	return nil
}
