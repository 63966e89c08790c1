package telemetry

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxModelLabels bounds the distinct model label values (per metric family group); later
// models are counted as "other", so a caller sending random model names cannot grow the
// series without bound.
const MaxModelLabels = 200

// Options configure New. The zero value is ready to use.
type Options struct {
	// OwnerLabel adds an "owner" label (the API key's id) to the gateway's request and
	// cost counters, and under LiteLLM's names (EnableLiteLLM) to the budget gauges and
	// to every metric with a team label, where it tells apart teams of different owners
	// sharing an id (a team id is its owner's choice). Without it those teams' requests,
	// spend and tokens add up in one series, and their budget gauges show the team
	// charged last. Off by default: one series per key and model can be many.
	OwnerLabel bool
	// MaxOwnerLabels bounds distinct owner values when OwnerLabel is set (default 100).
	MaxOwnerLabels int
	// StatusOf is the HTTP status a failed request was answered with (serve passes
	// server.ErrorStatus); it names the error_type of a request refused before any model
	// was called. Nil: such a request's error_type is "refused".
	StatusOf func(error) int
}

// Metrics is the set of Switchyard's Prometheus metrics on a registry of its own. Create
// it with New; it is safe for concurrent use.
type Metrics struct {
	opts   Options
	reg    *prometheus.Registry
	models *labelSet
	owners *labelSet
	// knownModel decides which model names take a label value before answering
	// (AdmitModels); nil: all. Read on every request, hence atomic.
	knownModel atomic.Pointer[func(string) bool]
	// litellm are the metrics under LiteLLM's names (EnableLiteLLM); nil: off.
	litellm atomic.Pointer[liteLLMMetrics]

	// Gateway (completions.Observer).
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	ttft          *prometheus.HistogramVec
	tokens        *prometheus.HistogramVec
	cost          *prometheus.CounterVec
	attempts      *prometheus.CounterVec
	retries       *prometheus.CounterVec
	fallbacks     *prometheus.CounterVec
	continuations *prometheus.CounterVec
	cacheLookups  *prometheus.CounterVec
	cacheSaved    prometheus.Counter

	// HTTP server.
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	selects      *prometheus.CounterVec
	selectDur    *prometheus.HistogramVec

	// Store and sandbox.
	storeOps   *prometheus.HistogramVec
	sandboxRun *prometheus.HistogramVec

	// Jobs.
	jobDur *prometheus.HistogramVec

	// Retention sweeps.
	swept *prometheus.CounterVec

	// Alert deliveries (Alert).
	alerts *prometheus.CounterVec
	// MCP gateway (mcpgateway.Observer).
	mcpCalls    *prometheus.CounterVec
	mcpDuration *prometheus.HistogramVec

	mu   sync.Mutex // guards collectors added after New
	jobs *jobsCollector
}

// New returns Metrics registered on a fresh registry with the Go runtime and process
// collectors.
func New(opts Options) *Metrics {
	if opts.MaxOwnerLabels <= 0 {
		opts.MaxOwnerLabels = 100
	}
	m := &Metrics{opts: opts, reg: prometheus.NewRegistry(), models: newLabelSet(MaxModelLabels), owners: newLabelSet(opts.MaxOwnerLabels)}
	// gen_ai_request_model is the model that answered (or was asked first when none did),
	// as it always was: dashboards keep their meaning. requested_model (LiteLLM's name) is
	// what the caller asked for, a model group among them; its values are model or group
	// names the configuration bounds (modelLabel), and a group's series are its members', so
	// it adds series only where a group or a fallback answered for the name asked.
	gw := []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "outcome", "stream", "requested_model"}
	cost := []string{"gen_ai_provider_name", "gen_ai_request_model", "requested_model"}
	if opts.OwnerLabel {
		gw = append(gw, "owner")
		cost = append(cost, "owner")
	}
	latency := []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_requests_total",
		Help: "Completion requests the gateway accepted, by the model that answered (gen_ai_request_model; the first asked when none did) and the model or model group the caller asked for (requested_model), outcome (ok, error, stream_error, content_filter, guardrail_blocked, cancelled: its client left, cut: the server's shutdown cut it) and error_type (empty when ok: the last attempt's error kind, or for a request refused before any model was called budget_exceeded, rate_limited or the status it was answered with)."},
		append([]string{"error_type"}, gw...))
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_client_operation_duration_seconds",
		Help: "GenAI operation duration: a completion request from arrival to its last byte, retries and fallbacks included, by the model that answered (gen_ai_request_model) and the model or model group asked for (requested_model).", Buckets: latency}, gw)
	m.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_server_time_to_first_token_seconds",
		Help: "Time from a request's arrival to its first answer fragment (streams) or its answer.", Buckets: latency},
		[]string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "stream"})
	m.tokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_client_token_usage",
		Help:    "Tokens per answered request, by gen_ai_token_type (input or output).",
		Buckets: []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}},
		[]string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_token_type"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_cost_usd_total",
		Help: "USD cost of answered requests from the price catalogue (0 where the price is unknown), by the model that answered (gen_ai_request_model) and the model or model group asked for (requested_model)."}, cost)
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_attempts_total",
		Help: "Upstream attempts (provider calls), by model, outcome (ok or error) and error.type (the failure kind)."},
		[]string{"gen_ai_provider_name", "gen_ai_request_model", "outcome", "error_type"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_retries_total",
		Help: "Attempts that repeated the previous attempt's model."}, []string{"gen_ai_request_model"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_fallbacks_total",
		Help: "Attempts that moved to another model than the previous attempt's (by the model moved to)."}, []string{"gen_ai_request_model"})
	m.continuations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_stream_continuations_total",
		Help: "Broken streams continued by another model (by the model that continued)."}, []string{"gen_ai_request_model"})
	m.cacheLookups = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_gateway_cache_requests_total",
		Help: "Answered completion requests the response cache took part in, by result (hit: no model called; miss; bypass: the request said no-cache)."}, []string{"result"})
	m.cacheSaved = prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_gateway_cache_saved_usd_total",
		Help: "USD the response cache's hits saved: what their answers cost when they were made."})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_http_requests_total",
		Help: "HTTP requests by route (the mux pattern; \"unrouted\" for none) and status code."}, []string{"route", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchyard_http_request_duration_seconds",
		Help: "HTTP request duration by route.", Buckets: latency}, []string{"route"})
	m.selects = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_model_select_requests_total",
		Help: "Model selection requests by router (default: the embedded router; custom: a preference_id) and status code."}, []string{"router", "code"})
	m.selectDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchyard_model_select_duration_seconds",
		Help:    "Model selection latency by router.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}}, []string{"router"})
	m.storeOps = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchyard_store_operation_duration_seconds",
		Help:    "Store operation latency by operation (get, get_many, list, put, delete, update) and outcome (ok, not_found, error).",
		Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"operation", "outcome"})
	m.sandboxRun = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchyard_sandbox_run_duration_seconds",
		Help:    "Sandbox runs (an agent over a batch of rows) by backend and outcome (ok, job_error, unavailable, cancelled).",
		Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}}, []string{"backend", "outcome"})
	m.jobDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchyard_job_duration_seconds",
		Help:    "Training and optimization jobs from start to end, by kind and final state.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}}, []string{"kind", "state"})
	m.swept = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_retention_deleted_total",
		Help: "Records the periodic retention sweeps deleted, by kind (conversations, openai_conversations, spend_rollups, stored_responses, cached_answers, sessions)."}, []string{"kind"})
	m.alerts = newAlertsCounter()
	m.mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_mcp_tool_calls_total",
		Help: "MCP tool calls through the MCP gateway, by upstream server and outcome (ok, tool_error, upstream_error, timeout, too_large, unknown_tool, invalid_arguments, cancelled)."}, []string{"server", "outcome"})
	m.mcpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "switchyard_mcp_tool_call_duration_seconds",
		Help: "MCP tool call duration through the MCP gateway, connecting included, by upstream server.", Buckets: latency}, []string{"server"})
	m.reg.MustRegister(m.alerts, m.mcpCalls, m.mcpDuration, m.swept, m.requests, m.duration, m.ttft, m.tokens, m.cost, m.attempts, m.retries, m.fallbacks, m.continuations,
		m.cacheLookups, m.cacheSaved, m.httpRequests, m.httpDuration, m.selects, m.selectDur, m.storeOps, m.sandboxRun, m.jobDur,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Swept counts n records of kind a retention sweep deleted
// (switchyard_retention_deleted_total{kind}).
func (m *Metrics) Swept(kind string, n int) {
	if n > 0 {
		m.swept.WithLabelValues(kind).Add(float64(n))
	}
}

// Registry returns the registry, to register more collectors or to gather in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (OpenMetrics when asked). With
// a non-empty token it answers 401 unless the request carries Authorization: Bearer token.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearerMatches(r, token) {
			// The API's uniform error body, so one client-side check reads every failure.
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"Unauthorized","message":"missing or wrong bearer token for /metrics (--metrics-token)"}`+"\n")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// otherLabel is the label value of the values a labelSet did not admit.
const otherLabel = "other"

// labelSet admits up to max distinct values; later ones, and ones not admitted, become
// "other".
type labelSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]bool
}

func newLabelSet(max int) *labelSet { return &labelSet{max: max, seen: map[string]bool{}} }

// value returns v's label: v once admitted; a new v is admitted while there is room if
// admit (nil: always) says so.
func (s *labelSet) value(v string, admit func() bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[v] {
		return v
	}
	if len(s.seen) >= s.max || admit != nil && !admit() {
		return otherLabel
	}
	s.seen[v] = true
	return v
}

// AdmitModels sets which model names may take one of the MaxModelLabels label values
// before they have answered once (every model that answers may): serve passes the
// gateway's HasModel, so names a caller made up ("openai/typo") are reported as "other"
// and cannot use up the values real models need. Without it every name may.
func (m *Metrics) AdmitModels(known func(model string) bool) {
	m.knownModel.Store(&known)
}

// modelLabel is model's label value; answered says it answered a request.
func (m *Metrics) modelLabel(model string, answered bool) string {
	return m.modelLabelAs(model, model, answered)
}

// modelLabelAs is the label value label of the gateway's model (its own name, which
// AdmitModels' function knows: a --litellm-config deployment's member
// "openai-smart/gpt-4o" labelled as LiteLLM names it, "openai/gpt-4o"); answered says it
// answered a request.
func (m *Metrics) modelLabelAs(label, model string, answered bool) string {
	known := m.knownModel.Load()
	if answered || known == nil || *known == nil {
		return m.models.value(label, nil)
	}
	return m.models.value(label, func() bool { return (*known)(model) })
}
