package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/litellmconfig"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/auto"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/telemetry"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// wiring builds the capabilities `serve` plugs into the server and starts their workers.
type wiring struct {
	cfg   *serveConfig
	store *store.Store
	// limits are the per-key rates shared with the other replicas (PostgreSQL); nil keeps
	// them per process. stopSharing (set by start) ends their exchange after a last one.
	limits      *store.Counters
	stopSharing func()
	// stopPolling (set by start) stops the deployments poller and waits for it: serve calls
	// it before the store is closed.
	stopPolling func()
	// queue is the job queue shared by every process (PostgreSQL store); nil with bbolt.
	queue *riverqueue.Queue
	log   *slog.Logger
	// gatewayURL is this server's own OpenAI-compatible base URL, reachable from this host
	// (sandboxed agents call it).
	gatewayURL string

	registry  *providers.Registry
	catalog   *providers.Catalog
	gateway   *completions.Gateway
	trainer   *trainer.Service
	optimizer *optimizer.Service
	// batches runs OpenAI-style batches through the gateway (its files included).
	batches  *batch.Service
	selector *routing.Selector
	// mcp is the MCP gateway of --mcp-servers (nil without it).
	mcp *mcpgateway.Gateway
	// health checks the deployments in the background (--model-health-interval; nil: off).
	health *completions.HealthMonitor
	// obs is the process's metrics and tracer (telemetry.go); nil fields are off.
	obs *observability
	// usage records recent requests and per-model spend for the usage API and the console.
	usage *usagelog.Recorder
	// spend keeps each key's daily spend per tag and model in the store.
	spend *usagelog.Rollup
	// history keeps every request in the store (/spend/logs, /api/v1/usage/requests).
	history *usagelog.History
	// stored applies the deployments of LiteLLM's POST /model/new kept in the store.
	stored *deployments.Service
	// popts are the options the registry's providers are made with (reload.go).
	popts providers.Options
	// providersFile is the --providers-config in force (nil: none).
	providersFile *providers.FileConfig
	// groupsFile are the --model-groups in force (nil: none).
	groupsFile map[string]completions.ModelGroup
	// litellmInForce is the --litellm-config a reload last applied (nil: the one of start,
	// cfg.litellm).
	litellmInForce *litellmconfig.Config
}

func (w *wiring) options(ctx context.Context) (_ []server.Option, err error) {
	defer func() {
		if err != nil && w.spend != nil {
			// No server will close it: stop its writer (nothing was observed yet).
			w.spend.Close(context.Background())
			w.spend = nil
		}
		if err != nil && w.history != nil {
			w.history.Close(context.Background())
			w.history = nil
		}
	}()
	// One pooled client for every upstream: the default transport keeps only 2 idle
	// connections per host, which under load reopens connections to a provider constantly.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 128
	var upstream http.RoundTripper = transport
	if w.obs != nil {
		// With tracing on, each upstream call is a client span and carries its traceparent.
		upstream = w.obs.tracing.Transport(transport)
	}
	popts := providers.Options{Logger: w.log, HTTPClient: &http.Client{Transport: upstream}}
	w.popts = popts
	// The file is read once: for the registry, and for naming its providers without a key.
	var fc *providers.FileConfig
	if err = providers.CheckEnv(os.Getenv); err != nil {
		return nil, err
	}
	w.registry = providers.FromEnv(os.Getenv, popts)
	if w.cfg.ProvidersConfig != "" {
		if fc, err = providers.LoadConfig(w.cfg.ProvidersConfig); err == nil {
			err = w.registry.Configure(fc, os.Getenv, popts)
		}
		w.providersFile = fc
		if err != nil {
			return nil, fmt.Errorf("--providers-config: %w", err)
		}
	}
	if lc := w.cfg.litellm; lc != nil {
		fc = &lc.Providers
		if err = w.registry.Configure(fc, os.Getenv, popts); err != nil {
			return nil, fmt.Errorf("--litellm-config: %w", err)
		}
	}
	w.reportProviders(fc)
	if w.obs != nil {
		// Spans name providers as the GenAI conventions do, custom entries by what they call.
		w.obs.tracing.NameProviders(w.registry.GenAIName)
	}
	if w.cfg.PricesFile != "" {
		w.catalog, err = providers.LoadCatalog(w.cfg.PricesFile)
		if err != nil {
			return nil, fmt.Errorf("--prices-file: %w", err)
		}
	} else {
		w.catalog = providers.DefaultCatalog()
	}
	baseCatalog := w.catalog // without the config's own prices: the stored deployments' add to it with them
	if lc := w.cfg.litellm; lc != nil && len(lc.Prices) > 0 {
		// The deployments' own prices are the most specific: they win over --prices-file's
		// for their members, whose rates fill what they leave unset.
		w.catalog = w.catalog.WithOwnPrices(lc.Prices)
		w.log.Info("litellm config: deployments' own prices", "models", strings.Join(slices.Sorted(maps.Keys(lc.Prices)), ","), "over_prices_file", w.cfg.PricesFile != "")
	}
	// Model selection and training price models as the gateway does now: the dynamic
	// deployments (POST /model/new, /model/update, /model/delete, --deployments-poll) swap its
	// catalogue (completions.Gateway.SetRoutes) with their own prices. Before the gateway is
	// made, the catalogue above (the trainer's workers may already run then, hence atomic).
	var pricing atomic.Pointer[completions.Gateway]
	livePrices := routing.LiveProvidersCatalog(func() *providers.Catalog {
		if g := pricing.Load(); g != nil {
			if c, ok := g.Prices().(*providers.Catalog); ok && c != nil {
				return c
			}
		}
		return w.catalog
	})
	fetcher := &fetch.Fetcher{AllowLocal: w.cfg.AllowLocalURLs, IdleTimeout: w.cfg.FetchIdleTimeout}
	topts := []trainer.Option{trainer.WithWorkers(w.cfg.Workers)}
	oopts := []optimizer.Option{optimizer.WithWorkers(w.cfg.Workers)}
	if w.obs != nil && w.obs.tracing != nil {
		// Job stages as spans (OTEL_EXPORTER_OTLP_ENDPOINT set).
		topts = append(topts, trainer.WithTracer(w.obs.tracing.Tracer()))
		oopts = append(oopts, optimizer.WithTracer(w.obs.tracing.Tracer()))
	}
	if w.obs != nil && w.obs.metrics != nil {
		// Run times observed by the process that ran each job (sums across replicas).
		topts = append(topts, trainer.WithJobEnded(w.obs.metrics.JobEnded("training")))
		oopts = append(oopts, optimizer.WithJobEnded(w.obs.metrics.JobEnded("optimization")))
	}
	if w.queue != nil {
		topts = append(topts, trainer.WithQueue(w.queue))
		oopts = append(oopts, optimizer.WithQueue(w.queue))
	}
	w.trainer, err = trainer.New(w.store, append(topts,
		trainer.WithFetcher(fetcher),
		trainer.WithLogger(w.log),
		trainer.WithVersion(version),
		trainer.WithJobsPerOwner(w.cfg.TrainJobsPerKey),
		// The spec's weekly cleanup of inactive router models (archive after a year unused),
		// at start-up and then every --cleanup-interval.
		trainer.WithCleanupInterval(w.cfg.CleanupInterval),
		trainer.WithMaxQualityLoss(w.cfg.TradeoffMaxLoss),
		// Prices for the tradeoff frontier measured on each trained router.
		trainer.WithPrices(routing.CatalogPrice(livePrices)),
	)...)
	if err != nil {
		return nil, err
	}

	selector := routing.NewSelector(routing.Options{
		Store:            w.store,
		SessionRetention: w.cfg.SessionRetention,
		Catalog:          livePrices,
		CustomModels:     routing.TrainerModels(w.trainer),
		Logger:           w.log,
		// tradeoff: latency ranks by how fast the models answered this server's requests
		// (the gateway is made below, before anything is served).
		Latency: func(model string) (float64, bool) {
			if w.gateway == nil {
				return 0, false
			}
			return w.gateway.Latency(model)
		},
	})
	w.selector = selector

	w.usage = usagelog.New(usagelog.Options{})
	w.spend = usagelog.NewRollup(w.store, usagelog.RollupOptions{Logger: w.log, Retention: libraryRetention(w.cfg.Retention.Spend)})
	// The request history in the store: every replica's requests, kept across restarts.
	w.history = usagelog.NewHistory(w.store, usagelog.HistoryOptions{Logger: w.log, Retention: libraryRetention(w.cfg.Retention.Requests)})
	var groups map[string]completions.ModelGroup
	if w.cfg.ModelGroups != "" {
		if groups, err = completions.LoadModelGroups(w.cfg.ModelGroups); err != nil {
			return nil, fmt.Errorf("--model-groups: %w", err)
		}
		w.log.Info("model groups", "names", strings.Join(slices.Sorted(maps.Keys(groups)), ","))
		w.groupsFile = groups
	}
	var deploymentIDs map[string]string
	var wildcards []completions.Wildcard
	var listed []string
	var deploymentNames map[string][]completions.NamedDeployment
	if w.cfg.litellm != nil {
		listed = w.cfg.litellm.Listed // what /v1/models lists beside the groups
		// A deployment's own litellm_params.model, served as LiteLLM's router serves it.
		deploymentNames = w.cfg.litellm.DeploymentNames
		groups = w.cfg.litellm.ModelGroups
		wildcards = w.cfg.litellm.Wildcards           // model_name "*", "openai/*"
		deploymentIDs = w.cfg.litellm.DeploymentIDs() // its model_info.ids
	}
	var guardrails []completions.GuardrailConfig
	if w.cfg.Guardrails != "" {
		if guardrails, err = completions.LoadGuardrails(w.cfg.Guardrails); err != nil {
			return nil, fmt.Errorf("--guardrails: %w", err)
		}
		names := make([]string, len(guardrails))
		for i, g := range guardrails {
			names[i] = g.Name
		}
		w.log.Info("guardrails", "names", strings.Join(names, ","))
	}
	var metrics *telemetry.Metrics
	if w.obs != nil {
		metrics = w.obs.metrics
	}
	alerts, err := newAlerts(w.cfg.Alerts, metrics, w.log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && alerts != nil {
			_ = alerts.alerter.Close(context.Background()) // no server to close it
		}
	}()
	gopts := completions.Options{
		Guardrails: guardrails,
		// The console's recorder, metrics and traces see every request.
		Observer:           w.observer(),
		TraceAttempt:       w.traceAttempt(),
		ConversationWrites: w.cfg.writes,
		Providers:          w.registry,
		Prices:             w.catalog,
		Store:              w.store,
		Ranker:             routing.CompletionsRanker{Selector: selector},
		ModelGroups:        groups,
		DeploymentIDs:      deploymentIDs,
		Wildcards:          wildcards,
		ListConfigured:     w.cfg.litellm != nil,
		RefuseMocks:        w.cfg.RefuseMocks,
		Listed:             listed,
		DeploymentNames:    deploymentNames,
		DefaultMaxRetries:  w.cfg.maxRetries,
		Ledger:             completions.LogLedger{Logger: w.log},
		Logger:             w.log,
		FirstTokenTimeout:  w.cfg.Faults.FirstToken,
		StreamIdleTimeout:  w.cfg.Faults.StreamIdle,
		AttemptTimeout:     w.cfg.Faults.Attempt,
		RequestTimeout:     w.cfg.Faults.Request,
		Breaker:            completions.BreakerOptions{Failures: w.cfg.Faults.BreakerFailures, Cooldown: w.cfg.Faults.BreakerCooldown},
		Cache:              w.cfg.Cache.options(w.store),
		StoredResponses:    w.cfg.Responses.options(w.cfg.MaxBodyBytes),
		// --conversation-retention, --openai-conversation-retention (0: forever).
		ConversationRetention:       libraryRetention(w.cfg.Retention.Conversations),
		OpenAIConversationRetention: libraryRetention(w.cfg.Retention.OpenAIConversations),
		SharedLimits:                w.limits,
	}
	if w.cfg.litellm != nil {
		// context_window_fallbacks set: a prompt too long without an entry ends the request.
		gopts.ContextWindowFallbacksSet = w.cfg.litellm.ContextWindowFallbacksSet
	}
	alerts.hook(&gopts)
	// --mcp-servers: served at /mcp, and the tools of OpenAI's mcp tool on /v1/responses.
	if w.mcp, err = w.cfg.MCP.gateway(w); err != nil {
		return nil, err
	}
	if w.mcp != nil {
		gopts.MCP = server.MCPTools(w.mcp)
	}
	w.gateway, err = completions.New(gopts)
	pricing.Store(w.gateway)
	if ve := (*completions.ValidationError)(nil); errors.As(err, &ve) && strings.HasPrefix(ve.Field, "guardrails") {
		return nil, fmt.Errorf("--guardrails: %w", err) // a moderation model the providers cannot serve
	}
	if err != nil {
		if errors.Is(err, completions.ErrSemanticCacheOptions) {
			return nil, fmt.Errorf("--cache-semantic-model %q: %w", w.cfg.Cache.SemanticModel, err)
		}
		return nil, err
	}

	// LiteLLM's store_model_in_db: the deployments POST /model/new stored, applied now.
	var litellmFile []byte
	if w.cfg.LiteLLMConfig != "" {
		if litellmFile, err = os.ReadFile(w.cfg.LiteLLMConfig); err != nil {
			return nil, fmt.Errorf("--litellm-config: %w", err)
		}
	}
	var saltKey []byte
	if k := strings.TrimSpace(os.Getenv("LITELLM_SALT_KEY")); k != "" {
		saltKey = []byte(k)
	}
	w.stored, err = deployments.New(deployments.Options{Store: w.store, Gateway: w.gateway, Registry: w.registry, ProviderOptions: popts,
		Config: litellmFile, Groups: groups, Prices: baseCatalog, SecretKey: saltKey, Poll: w.cfg.DeploymentsPoll, Logger: w.log,
		DeploymentTags: server.LiteLLMTagModels(w.store)})
	if err == nil {
		err = w.stored.Sync(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("the deployments stored through POST /model/new: %w", err)
	}

	runner := w.sandboxRunner()
	if w.obs != nil && w.obs.metrics != nil {
		runner = w.obs.metrics.Sandbox(runner)
	}
	// The proposer calls go through the gateway too: its retries, fallbacks and ledger.
	proposer, err := optimizer.NewLLMProposer(completions.Resolver{Gateway: w.gateway,
		Scope: completions.Scope{Owner: "switchyard", Tag: "optimize:proposer"}}, w.cfg.ProposerModel, gatewayPricer{w.gateway})
	if err != nil {
		return nil, fmt.Errorf("--proposer-model: %w", err)
	}
	if !(gatewayPricer{w.gateway}).Cost(w.cfg.ProposerModel, providers.Usage{PromptTokens: 1}).Known {
		// Its calls would be reported as costing nothing, and a job's proposer cost with them.
		w.log.Warn("--proposer-model has no price: optimization jobs will report its cost as $0 (price it with --prices-file, or a model_info price under --litellm-config)", "model", w.cfg.ProposerModel)
	}
	w.optimizer, err = optimizer.New(w.store, runner, proposer, append(oopts,
		optimizer.WithFetcher(fetcher),
		optimizer.WithGateway(w.gatewayURL, nil),
		optimizer.WithPublicURL(w.cfg.PublicURL),
		optimizer.WithLogger(w.log),
		optimizer.WithVersion(version),
		optimizer.WithJobsPerOwner(w.cfg.OptimizeJobsPerKey),
		optimizer.WithModelCheck(w.routable),
	)...)
	if err != nil {
		return nil, err
	}
	files, err := batch.NewFiles(w.store, batch.FilesOptions{MaxBytes: w.cfg.Batches.FilesMaxBytes, Logger: w.log})
	if err != nil {
		return nil, err
	}
	bopts := w.cfg.Batches.options()
	bopts.Workers, bopts.Logger = w.cfg.Workers, w.log
	if w.queue != nil {
		bopts.Queue = w.queue
	}
	if w.batches, err = batch.New(w.store, files, bopts); err != nil {
		return nil, err
	}
	opts := []server.Option{
		// First, so that its close (closers run last to first) sends what the gateway's
		// last requests alerted.
		alerts.option(),
		// Next, so that its close writes after the gateway's.
		server.Spend(w.spend),
		server.RequestHistory(w.history), // as the spend: closed after the gateway
		server.Completions(w.gateway),
		// After the gateway: closed first, so a batch's lines stop before the gateway does.
		server.Batches(w.batches),
		server.Usage(w.usage),
		server.ModelSelection(selector),
		server.CustomRouters(w.trainer),
		server.Optimizer(w.optimizer),
		server.StoredDeployments(w.stored),
	}
	if w.cfg.ModelHealthInterval > 0 {
		w.health, err = completions.NewHealthMonitor(w.gateway, completions.HealthMonitorOptions{
			Interval:    w.cfg.ModelHealthInterval,
			Concurrency: w.cfg.ModelHealthConcurrency,
			Timeout:     w.cfg.ModelHealthTimeout, // 0: the interval (no request bounds a background check)
			// A check failing as an outage would opens the model's breaker.
			OpenBreakers: w.cfg.ModelHealthBreaker,
			OnChange:     alerts.healthChanges(),
			Logger:       w.log,
		})
		if err != nil {
			return nil, fmt.Errorf("--model-health-interval: %w", err)
		}
		opts = append(opts, server.BackgroundModelHealth(w.health))
	}
	if w.obs != nil && w.obs.metrics != nil {
		w.obs.watchServices(w)
		if w.cfg.Telemetry.MetricsAddr == "" {
			opts = append(opts, server.MetricsEndpoint(w.obs.metrics.Handler(w.cfg.Telemetry.MetricsToken)))
		}
	}
	if w.cfg.Console {
		opts = append(opts, server.Console())
	}
	if w.mcp != nil {
		opts = append(opts, server.MCP(w.mcp))
	}
	return opts, nil
}

// traceAttempt is the gateway's completions.Options.TraceAttempt: with tracing on, each
// upstream call's HTTP client span nests under its attempt's span; nil otherwise.
func (w *wiring) traceAttempt() func(context.Context) (context.Context, [8]byte) {
	if w.obs == nil || w.obs.tracing == nil {
		return nil
	}
	return w.obs.tracing.TraceAttempt
}

// observer is the gateway's completions.Observer: the usage recorder, and metrics and
// traces when they are on.
func (w *wiring) observer() completions.Observer {
	var list []completions.Observer
	if w.usage != nil {
		list = append(list, w.usage)
	}
	if w.spend != nil {
		list = append(list, w.spend)
	}
	if w.history != nil {
		list = append(list, w.history)
	}
	if w.obs != nil && w.obs.metrics != nil {
		list = append(list, w.obs.metrics)
	}
	if w.obs != nil && w.obs.tracing != nil {
		list = append(list, w.obs.tracing)
	}
	return completions.JoinObservers(list...)
}

// start launches the job workers; the server's Close stops them.
func (w *wiring) start(ctx context.Context) error {
	if err := w.trainer.Start(ctx); err != nil {
		return fmt.Errorf("starting training workers: %w", err)
	}
	if err := w.optimizer.Start(ctx); err != nil {
		return fmt.Errorf("starting optimization workers: %w", err)
	}
	if err := w.batches.Start(ctx); err != nil {
		return fmt.Errorf("starting batch workers: %w", err)
	}
	// The services registered their kinds with the shared queue; now take jobs from it.
	if w.queue != nil {
		if err := w.queue.Start(ctx); err != nil {
			return fmt.Errorf("starting the job queue: %w", err)
		}
	}
	w.pollDeployments(ctx)
	if w.health != nil {
		// Checks at once, then every --model-health-interval until serve shuts down (its
		// Close, before the store's, waits for the loop).
		if err := w.health.Start(ctx); err != nil {
			return fmt.Errorf("starting the background model health checks: %w", err)
		}
	}
	if w.selector != nil && w.cfg.SessionRetention >= 0 {
		go sweepEvery(ctx, "model selection sessions", "sessions", func(ctx context.Context, _ time.Time) (int, error) {
			return w.selector.ExpireSessions(ctx)
		}, time.Hour, w.log, w.swept())
	}
	if sc, ok := w.gateway.CacheDriver().(*completions.StoreCache); ok {
		go sweepEvery(ctx, "cached answers", "cached_answers", sc.Sweep, time.Hour, w.log, w.swept())
	}
	if w.limits != nil {
		// Past ctx: the replica admits requests until its HTTP server has shut down
		// (--shutdown-delay, the drain), and the others must hear of them (stopSharing).
		lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		w.stopSharing = func() { stop(); <-done }
		go func() {
			defer close(done)
			w.limits.Run(lctx, w.cfg.Conns.LimitsSync, func(err error) { w.log.Warn("sharing per-key rates with the other replicas", "err", err) })
		}()
	}
	for _, sw := range w.storeSweeps() {
		go sweepEvery(ctx, sw.what, sw.kind, sw.sweep, time.Hour, w.log, w.swept())
	}
	return nil
}

// pollDeployments applies the deployments other replicas store, every --deployments-poll,
// until ctx ends or stopPolling is called; stopPolling returns once the poller has stopped,
// so the store may be closed after it.
func (w *wiring) pollDeployments(ctx context.Context) {
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	w.stopPolling = func() { stop(); <-done }
	go func() {
		defer close(done)
		w.stored.Run(pctx)
	}()
}

// storeSweep is one hourly sweep of the store: what it sweeps (for the log), its kind (the
// metric's label) and the sweep.
type storeSweep struct {
	what, kind string
	sweep      func(context.Context, time.Time) (int, error)
}

// storeSweeps lists the hourly sweeps of the store's records. Every replica of a shared
// store may sweep: the sweeps are idempotent.
func (w *wiring) storeSweeps() []storeSweep {
	if w.store == nil {
		return nil
	}
	// Stored responses always: also the answers kept before --responses-store=false.
	list := []storeSweep{{"stored responses", "stored_responses", w.gateway.SweepResponses}}
	if w.cfg.Retention.Conversations > 0 {
		list = append(list, storeSweep{"conversations", "conversations", w.gateway.SweepConversations})
	}
	if w.cfg.Retention.OpenAIConversations > 0 {
		list = append(list, storeSweep{"OpenAI conversations", "openai_conversations", w.gateway.SweepOpenAIConversations})
	}
	if w.spend != nil && w.cfg.Retention.Spend > 0 {
		list = append(list, storeSweep{"daily spend totals", "spend_rollups", w.spend.Sweep})
	}
	if w.history != nil {
		// Also when requests are kept forever: the sweep runs the request history's lookup
		// index migrations, without which lookups by status or request id read the window
		// and successful requests keep getting status entries.
		list = append(list, storeSweep{"request history", "request_log", w.history.Sweep})
	}
	return list
}

// swept counts what a retention sweep deleted on the metrics, when they are on.
func (w *wiring) swept() func(kind string, n int) {
	if w.obs == nil || w.obs.metrics == nil {
		return nil
	}
	return w.obs.metrics.Swept
}

// sandboxRunner picks the sandbox backend named by --sandbox ("auto": bubblewrap, else
// WASI). When none works here the optimizer still accepts jobs and fails each with the
// reason; it never runs code unisolated. Work and venv dirs stay in the system temp dir: the
// sandbox runs as an unprivileged host user that cannot enter the (0700) data directory.
func (w *wiring) sandboxRunner() sandbox.Runner {
	popts := process.Options{Logger: w.log}
	wopts := wasm.Options{CacheDir: filepath.Join(w.cfg.DataDir, "wasm-cache"), Logger: w.log}
	open := func() (sandbox.Runner, error) {
		switch w.cfg.Sandbox {
		case "auto":
			return auto.New(auto.Options{Process: popts, Wasm: wopts, Logger: w.log})
		case "process":
			return process.New(popts)
		case "wasm":
			return wasm.New(wopts)
		}
		return nil, fmt.Errorf("--sandbox must be auto, process or wasm, got %q", w.cfg.Sandbox)
	}
	r, err := open()
	if err != nil {
		// Installed later (bubblewrap, python3, the WASI interpreter), it is found by the
		// next job without a restart.
		w.log.Warn("no sandbox backend works here; optimization jobs will fail until one does (each job looks again, at most every 30s)", "err", err)
		return optimizer.NewProbingRunner(err, open, optimizer.DefaultProbeEvery, w.log)
	}
	if w.cfg.Sandbox != "auto" { // auto logs its own choice, with why
		w.log.Info("sandbox backend", "backend", r.Name())
	}
	return r
}

// routable reports why the gateway cannot call model ("provider/model"): an unknown
// provider, or one without its API key; nil when it can.
func (w *wiring) routable(model string) error {
	name, _, err := providers.ParseModel(model)
	if err != nil {
		return err
	}
	p, err := w.registry.Lookup(name)
	if err != nil {
		return err
	}
	if !providers.IsConfigured(p) {
		return fmt.Errorf("provider %q has no API key configured on this server", name)
	}
	return nil
}

// reportProviders logs which providers have a key (the others answer every call with "not
// configured"), and warns about the providers the --providers-config (or --litellm-config)
// file names without one, and when none has a key at all: otherwise the first sign is a
// failed request.
func (w *wiring) reportProviders(fc *providers.FileConfig) {
	source := "--providers-config"
	if w.cfg.litellm != nil {
		source = "--litellm-config"
	}
	local := map[string]bool{} // presets that need no key (a local server such as Ollama)
	for _, p := range providers.Presets() {
		local[p.Name] = p.KeyOptional
	}
	var ready, keyed []string
	for _, name := range w.registry.Names() {
		if p, err := w.registry.Lookup(name); err == nil && providers.IsConfigured(p) && providers.ServesChat(p) {
			ready = append(ready, name)
			if !local[name] {
				keyed = append(keyed, name)
			}
		}
	}
	for _, name := range w.registry.Names() {
		// Credentials the environment names but that cannot be used (a file that is not one).
		if p, err := w.registry.Lookup(name); err == nil && !providers.IsConfigured(p) {
			if b, ok := p.(interface{ Broken() string }); ok && b.Broken() != "" {
				w.log.Warn("provider's credentials cannot be used: its models will fail", "provider", name, "reason", b.Broken())
			}
		}
		if p, err := w.registry.Lookup(name); err == nil {
			if n, ok := p.(interface{ Note() string }); ok && n.Note() != "" {
				w.log.Warn("provider's configuration was corrected", "provider", name, "note", n.Note())
			}
		}
	}
	if fc != nil {
		for _, pc := range fc.Providers {
			if !slices.Contains(ready, pc.Name) {
				p, _ := w.registry.Lookup(pc.Name)
				if _, ok := p.(*providers.Vertex); ok {
					w.log.Warn("provider named in "+source+" is not configured: its models will fail", "provider", pc.Name, "set", providers.Needs(p))
					continue
				}
				w.log.Warn("provider named in "+source+" has no API key: its models will fail", "provider", pc.Name, "api_key_env", pc.APIKeyEnv, "set", providers.Needs(p))
			} else if !slices.Contains(keyed, pc.Name) {
				keyed = append(keyed, pc.Name) // configured on purpose, key or not
			}
		}
	}
	if len(keyed) == 0 {
		w.log.Warn("no LLM provider has an API key: completions and optimization jobs will fail until one is set (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, … or --providers-config)")
		return
	}
	w.log.Info("LLM providers with a key", "providers", strings.Join(ready, ","))
}

// gatewayPricer prices usage with the gateway's catalogue in force (Gateway.Prices): the
// optimizer's proposer calls then cost what the gateway bills them, also after
// /model/new or /model/update changed a deployment's prices (the start-up catalogue did not
// know them).
type gatewayPricer struct{ g *completions.Gateway }

// Cost prices u for model as the gateway does now; nothing when it has no catalogue.
func (p gatewayPricer) Cost(model string, u providers.Usage) providers.Cost {
	if c := p.g.Prices(); c != nil {
		return c.Cost(model, u)
	}
	return providers.Cost{}
}
