// Package server is Switchyard's HTTP wiring: authentication, decoding, error bodies,
// access logs and the OpenAPI document. Each capability (routing, trainer, completions,
// optimizer) plugs in through an Option that registers its routes and error mapping; the
// capability packages themselves know nothing of HTTP.
//
// Every failure is answered with {"error": "<kind>", "message": "<text>"}: malformed JSON
// 400, missing or wrong key 401 (also for unknown paths under /api/), unknown route 404, wrong
// method 405, body over the limit 413, validation 422 (400 for model selection), internal
// faults 500 without internals. Under /v1/ (the OpenAI-compatible surface; /v1/modelSelect
// excepted) failures use OpenAI's envelope {"error": {"message", "type", "param", "code"}}
// instead, with 400 for invalid requests and x-should-retry: false (see writeOpenAIError).
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	pathpkg "path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 10 << 20

// Config configures a Server. Store is required.
type Config struct {
	// Store keeps API keys and whatever the capabilities persist.
	Store *store.Store
	// APIKeys are accepted in addition to keys kept in the store (e.g. SWITCHYARD_API_KEYS).
	APIKeys []string
	// MaxBodyBytes caps request bodies (default 10 MiB).
	MaxBodyBytes int64
	// Logger receives one access line per request and internal errors (default slog.Default()).
	Logger *slog.Logger
	// Version is reported by /healthz and in the OpenAPI document.
	Version string
	// CORSOrigins are the browser origins allowed to call the API ("*": any); empty turns
	// CORS off (see withCORS).
	CORSOrigins []string
	// BodyReadTimeout bounds how long a client may take to send a request body (default
	// DefaultBodyReadTimeout; negative: no bound). Responses, streams included, are not
	// affected.
	BodyReadTimeout time.Duration
	// FailedAuthPerMinute bounds failed authentications per client address (default
	// DefaultFailedAuthPerMinute; negative: no bound); beyond it every request from that
	// address is refused with 429 until it has waited. Successful requests cost nothing.
	FailedAuthPerMinute int
	// RequestsPerMinutePerKey bounds the POST requests (completions, embeddings, model
	// selection, jobs) one API key may make per minute, bursts included; beyond it they get
	// 429 with Retry-After. Temporary scoped keys (a sandboxed agent's) are bounded by their
	// budgets instead. 0: no bound. The bound is per process unless SharedLimits is set.
	RequestsPerMinutePerKey int
	// SharedLimits, when set, shares the per-key request rates (RequestsPerMinutePerKey and
	// virtual keys' requests_per_minute) with the other processes on the same store: each
	// process counts the requests the others admitted as they Sync (give or take what they
	// admitted since the last Sync). The caller runs its Sync (Counters.Run).
	SharedLimits *store.Counters
	// TrustedProxies are the addresses of reverse proxies in front of the server. For a
	// request from one of them the client is the last X-Forwarded-For entry that is not
	// itself a trusted proxy (the failed-auth limit counts it, the access log names it);
	// without any, X-Forwarded-For is ignored (a client could claim any address).
	TrustedProxies []netip.Prefix
	// Middleware wraps every request's handling, inside the access log (so RoutePattern
	// and RequestID work on its requests once the inner handler returned) and outside
	// authentication: metrics and traces (package telemetry). The first is outermost.
	Middleware []func(http.Handler) http.Handler
	// MaxEndUsersPerKey bounds the end users (LiteLLM's customers) one key may have, so
	// that requests naming ever new users cannot grow the store without bound: past it a
	// new end user is refused with 400 (default DefaultMaxEndUsersPerKey; negative: no
	// bound).
	MaxEndUsersPerKey int
	// ModelHealthTimeout bounds each deployment's request of LiteLLM's model health check
	// (GET /health; default DefaultModelHealthTimeout, LiteLLM's; negative: the request's
	// own context alone).
	ModelHealthTimeout time.Duration
	// ModelHealthConcurrency is how many deployments GET /health checks at once (default
	// DefaultModelHealthConcurrency).
	ModelHealthConcurrency int
	// RejectClientTags refuses a gateway request naming tags of its own (its body's tags,
	// metadata.tags or litellm_metadata.tags, an X-Switchyard-Tags or x-litellm-tags header)
	// with a 400 naming metadata.tags: only its virtual key's tags apply, so that tag budgets
	// and tag routing follow the keys (LiteLLM's general_settings.reject_clientside_metadata_tags).
	RejectClientTags bool
	// ProxyMaxBudgetUSD, when positive, is the USD every gateway request of every key
	// (the operator's too) may spend together before they are refused (a 429 in
	// LiteLLM's words, "Budget has been exceeded! Current cost: …, Max budget: …"):
	// LiteLLM's litellm_settings.max_budget, one account in Store shared by the replicas.
	ProxyMaxBudgetUSD float64
	// ProxyBudgetDuration, with ProxyMaxBudgetUSD, starts that account afresh this often
	// from its first use (LiteLLM's budget_duration: "30d", "1h", "1mo"); "" never.
	ProxyBudgetDuration string
	// RealtimeCallIdleTimeout is how long a realtime call (POST /v1/realtime/calls) may go
	// without a single event on its sideband before the gateway hangs it up, so that a call
	// nobody speaks on stops holding its key's max_parallel_requests slot (default
	// DefaultRealtimeCallIdleTimeout; negative: no bound).
	RealtimeCallIdleTimeout time.Duration
	// RealtimeCallMaxDuration is how long a realtime call may last in all before the
	// gateway hangs it up (default DefaultRealtimeCallMaxDuration, OpenAI's own limit of a
	// realtime session; negative: no bound).
	RealtimeCallMaxDuration time.Duration
	// RealtimeSessionIdleTimeout is how long a WebSocket realtime session (/v1/realtime)
	// may go without a single message either way before the gateway closes it (the client
	// told why in an error event, both sides closed with 1008), so that a session nobody
	// uses stops holding its key's max_parallel_requests slot (default
	// DefaultRealtimeSessionIdleTimeout; negative: no bound).
	RealtimeSessionIdleTimeout time.Duration
	// RealtimeSessionMaxDuration is how long a WebSocket realtime session may last in all
	// before the gateway closes it so (default DefaultRealtimeSessionMaxDuration, OpenAI's
	// own limit of a realtime session; negative: no bound).
	RealtimeSessionMaxDuration time.Duration
}

// Option plugs a capability into the server.
type Option func(*Server) error

// Server is Switchyard's HTTP handler. Create it with New.
type Server struct {
	cfg Config
	// draining: /healthz answers 503 (Drain).
	draining atomic.Bool
	log      *slog.Logger
	auth     *Auth
	authRL   *authLimiter
	keyRL    *authLimiter // RequestsPerMinutePerKey's buckets, per key; nil without a bound
	mux      *http.ServeMux
	routes   []Route
	public   map[string]bool  // mux pattern -> no key needed
	scoped   map[string]bool  // mux pattern -> temporary scoped keys allowed
	virtual  map[string]bool  // mux pattern -> virtual keys allowed (besides scoped)
	limits   map[string]int64 // mux pattern -> its own body limit (Route.MaxBodyBytes)
	// limitHints: mux pattern -> what sets its own body limit (Route.MaxBodyHint)
	limitHints map[string]string
	vkRL       *authLimiter // virtual keys' own request rates, per key id
	// endUserRates keeps end users' requests_per_minute a few seconds (endUserWithinRate).
	endUserRates endUserRates
	// tokensLeft is the gateway's Gateway.TokensLeft (nil without Completions): a virtual
	// key's tokens_per_minute and what its last minute leaves, for x-ratelimit-*-tokens.
	tokensLeft func(*completions.Budget) (limit, left int64)
	// proxyBudget is Config.ProxyMaxBudgetUSD's account (nil: none), which every gateway
	// request draws on (gatewayScope).
	proxyBudget *completions.Budget
	shared      *store.Counters        // Config.SharedLimits: request rates shared with the other processes
	parallel    parallelLimiter        // virtual keys' and teams' requests in flight (max_parallel_requests)
	direct      map[string]directRoute // mux pattern without wildcards -> its handler
	// gateways: mux pattern of a gateway route -> its gateway and operation (handleGateway),
	// to record a request refused before its handler runs (refuseBeforeHandler).
	gateways map[string]gatewayRoute
	// v1Roots are the first segments of the /v1/ routes ("chat", "embeddings", …): a path
	// beginning with one of them without /v1 is served as its /v1 route (v1Alias).
	v1Roots map[string]bool
	// mcp is the MCP gateway (option MCP); nil without one.
	mcp *mcpgateway.Gateway
	// selector is model selection (option ModelSelection); nil without it. Not Diamond's
	// trainCustomRouter binds the jobs it starts to its preferences.
	selector *routing.Selector
	// history is the durable request history (option RequestHistory); nil: the usage
	// routes read Usage's in-memory Recorder.
	history *usagelog.History
	// spend is the durable daily spend (option Spend); nil without it: /tag/list then lists
	// the tags made with /tag/new only.
	spend *usagelog.Rollup
	// modelHealth is the background model health checks (option BackgroundModelHealth);
	// nil: GET /health checks on every call.
	modelHealth *completions.HealthMonitor
	// storedModels is the stored deployments (option StoredDeployments): /model/info also
	// shows those it leaves out of routing.
	storedModels *deployments.Service
	mappers      []ErrorMapper
	closers      []func(context.Context) error
	// realtime are the realtime sessions being relayed (CloseRealtimeSessions).
	realtime realtimeSessions
	// realtimeSweep paces the deletion of expired realtime client secrets.
	realtimeSweep realtimeSecretSweep
	// realtimeCalls are the realtime calls this server watches, by call id, for their
	// callers' hang-ups.
	realtimeCalls watchedCalls
	// realtimeCallSweep paces the deletion of expired realtime call records.
	realtimeCallSweep realtimeSecretSweep
	handler           http.Handler

	openapiOnce sync.Once
	openapi     []byte
}

// New builds a server and applies the options.
func New(cfg Config, opts ...Option) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxEndUsersPerKey == 0 {
		cfg.MaxEndUsersPerKey = DefaultMaxEndUsersPerKey
	}
	if cfg.ModelHealthTimeout == 0 {
		cfg.ModelHealthTimeout = DefaultModelHealthTimeout
	}
	if cfg.ModelHealthConcurrency <= 0 {
		cfg.ModelHealthConcurrency = DefaultModelHealthConcurrency
	}
	if cfg.BodyReadTimeout == 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if cfg.RealtimeCallIdleTimeout == 0 {
		cfg.RealtimeCallIdleTimeout = DefaultRealtimeCallIdleTimeout
	}
	if cfg.RealtimeCallMaxDuration == 0 {
		cfg.RealtimeCallMaxDuration = DefaultRealtimeCallMaxDuration
	}
	if cfg.RealtimeSessionIdleTimeout == 0 {
		cfg.RealtimeSessionIdleTimeout = DefaultRealtimeSessionIdleTimeout
	}
	if cfg.RealtimeSessionMaxDuration == 0 {
		cfg.RealtimeSessionMaxDuration = DefaultRealtimeSessionMaxDuration
	}
	for i, k := range cfg.APIKeys {
		if len(k) < MinAPIKeyLength {
			cfg.Logger.Warn("server: a weak operator API key: shorter than the recommended length; use a long random key (e.g. `openssl rand -hex 32`)",
				"key_index", i, "length", len(k), "recommended", MinAPIKeyLength)
		}
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		auth:    newAuth(cfg.Store, cfg.APIKeys),
		authRL:  newAuthLimiter(cfg.FailedAuthPerMinute),
		keyRL:   newKeyLimiter(cfg.RequestsPerMinutePerKey),
		mux:     http.NewServeMux(),
		public:  map[string]bool{},
		scoped:  map[string]bool{},
		virtual: map[string]bool{},
		limits:  map[string]int64{},
		// What sets a route's own body limit, for its 413.
		limitHints: map[string]string{},
		vkRL:       &authLimiter{buckets: map[string]*bucket{}},
		direct:     map[string]directRoute{},
		gateways:   map[string]gatewayRoute{},
		v1Roots:    map[string]bool{},
	}
	s.shareRates(cfg.SharedLimits)
	s.Handle(Route{Method: "GET", Path: "/healthz", Summary: "Liveness check", Public: true, Response: health{},
		Errors: map[int]string{503: "draining (the server is shutting down: --shutdown-delay) or store unavailable"}}, s.handleHealth)
	for _, path := range []string{"/health/liveliness", "/health/liveness"} {
		s.Handle(Route{Method: "GET", Path: path, Summary: "LiteLLM's liveness probe: the process answers", Public: true,
			Tags: []string{"LiteLLM compatibility"}, Response: ""}, func(w http.ResponseWriter, r *http.Request) error {
			writeJSON(w, http.StatusOK, "I'm alive!")
			return nil
		})
	}
	s.Handle(Route{Method: "GET", Path: "/health/readiness", Summary: "LiteLLM's readiness probe: 503 while draining or when the store does not answer (as /healthz)",
		Public: true, Tags: []string{"LiteLLM compatibility"}, Response: readiness{},
		Errors: map[int]string{503: "draining (the server is shutting down: --shutdown-delay) or store unavailable"}}, s.handleReadiness)
	s.Handle(Route{Method: "GET", Path: "/api/v1/openapi.json", Summary: "This OpenAPI 3.1 document", Public: true}, s.handleOpenAPI)
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	var inner http.Handler = withCORS(cfg.CORSOrigins, s.withRecover(http.HandlerFunc(s.dispatch)))
	for i := len(cfg.Middleware) - 1; i >= 0; i-- {
		inner = cfg.Middleware[i](inner)
	}
	s.handler = s.withAccessLog(inner)
	return s, nil
}

// Auth returns the server's key checker (to mint temporary keys, or create stored ones).
func (s *Server) Auth() *Auth { return s.auth }

// Store returns the server's store.
func (s *Server) Store() *store.Store { return s.cfg.Store }

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// AddErrorMapper registers a capability's error mapping.
func (s *Server) AddErrorMapper(m ErrorMapper) { s.mappers = append(s.mappers, m) }

// OnClose registers work to finish at shutdown (stopping job workers, ...). Close runs them
// in reverse order of registration.
func (s *Server) OnClose(f func(context.Context) error) { s.closers = append(s.closers, f) }

// Close stops the capabilities (waiting at most until ctx ends). It does not close the store;
// the owner of the store does that after Close returns. The work registered with OnClose
// runs in turn; when ctx has a deadline, each part may use what is left of it but a reserve
// for each part still to run (closeReserve), so that one stuck part (a history writer
// retrying through a database outage) does not leave none to the next (the daily spend's
// last write).
func (s *Server) Close(ctx context.Context) error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok && i > 0 {
			left := time.Until(deadline)
			reserve := min(closeReserve, left/time.Duration(2*(i+1)))
			cctx, cancel = context.WithDeadline(ctx, deadline.Add(-reserve*time.Duration(i)))
		}
		err := s.closers[i](cctx)
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeReserve is the most Close keeps of its deadline for each part of the shutdown still
// to run while an earlier part runs (less when the deadline is near: at most half of what
// is left, shared by them).
const closeReserve = 2 * time.Second

// Route describes one endpoint, for the mux and for the OpenAPI document.
type Route struct {
	Method  string
	Path    string // ServeMux path pattern, e.g. "/api/v1/routers/models"
	Summary string
	// Request and Response are zero values of the body types (nil: none).
	Request  any
	Response any
	// OneOf documents a success body that is one of these types (Response is then nil).
	OneOf []any
	// Status is the success status (default 200).
	Status int
	// Query lists query parameters.
	Query []QueryParam
	// Headers lists request headers the route reads (If-Match), ResponseHeaders the
	// headers of its success answer (ETag).
	Headers, ResponseHeaders []HeaderParam
	// Public routes need no key.
	Public bool
	// ScopedKeys lets temporary scoped keys (Auth.AddTemporaryKey with a scope, e.g. a
	// sandboxed agent's job key) call the route; every other route refuses them with 403.
	ScopedKeys bool
	// VirtualKeys lets virtual keys (POST /api/v1/keys) call the route besides the
	// ScopedKeys routes (model selection: it spends nothing).
	VirtualKeys bool
	// Tags group routes in the document.
	Tags []string
	// Stream marks text/event-stream responses (documented in addition to JSON).
	Stream bool
	// Errors documents the route's own failure statuses and when they happen, each in
	// the envelope of the route's surface (errorEnvelopeOf); 401, 403, 413 and 429, which
	// the server answers before the handler, are documented from the other fields.
	Errors map[int]string
	// GatewayErrors: the handler answers its own failures through the gateway
	// (Server.openAIError), in OpenAI's envelope even where the path's own is another
	// (/v2/rerank); the failures before the handler stay in the path's.
	GatewayErrors bool
	// MaxBodyBytes is the route's own request body limit, in place of the server's
	// Config.MaxBodyBytes (0: the server's): audio uploads are larger than any JSON body.
	MaxBodyBytes int64
	// MaxBodyHint names, in the 413 of a body over MaxBodyBytes, what sets it ("serve
	// --files-max-bytes"); "" says it is the route's own.
	MaxBodyHint string
	// RequestContentType is the request body's media type in the document (default
	// application/json; multipart/form-data for a file upload).
	RequestContentType string
	// ResponseContentTypes document a success body that is not JSON (audio/mpeg, …),
	// with a binary schema, besides Response's JSON when it is set.
	ResponseContentTypes []string
	// AnyMethod registers the route for every method (its mux pattern has none, so that a
	// more specific pattern under its path, with a method or without, wins without a
	// conflict); the document lists it under Method.
	AnyMethod bool
}

// QueryParam documents one query parameter. Type, Enum, Minimum and Maximum say what the
// handler enforces, so generated clients take a typed value: set them only as the handler
// parses and checks it.
type QueryParam struct {
	Name        string
	Required    bool
	Description string
	// Type is the value's schema type as the handler parses it: "integer", "number",
	// "boolean" or "string" ("" is "string").
	Type string
	// Enum lists the only values the handler accepts (nil: any value of Type).
	Enum []string
	// Minimum and Maximum are the bounds the handler checks a number against (nil: none).
	Minimum, Maximum *float64
	// Repeated marks a list: the parameter may be given more than once, every value kept
	// (?status=a&status=b). Any other parameter given more than once is reduced to its
	// last value on the LiteLLM- and OpenAI-compatible routes (as FastAPI does) and refused
	// with a 422 naming it on the native /api/v1 routes (scalarQuery).
	Repeated bool
}

// Bound is a Minimum or Maximum of a QueryParam.
func Bound(v float64) *float64 { return &v }

// querySchema is p's schema in the OpenAPI document.
func (p QueryParam) querySchema() map[string]any {
	typ := p.Type
	switch typ {
	case "":
		typ = "string"
	case "string", "integer", "number", "boolean":
	default:
		panic(fmt.Sprintf("server: query parameter %s has type %q (integer, number, boolean or string)", p.Name, typ))
	}
	schema := map[string]any{"type": typ}
	if len(p.Enum) > 0 {
		schema["enum"] = p.Enum
	}
	if p.Minimum != nil {
		schema["minimum"] = *p.Minimum
	}
	if p.Maximum != nil {
		schema["maximum"] = *p.Maximum
	}
	if p.Repeated { // a list: ?status=a&status=b (form style, exploded: OpenAPI's default)
		return map[string]any{"type": "array", "items": schema}
	}
	return schema
}

// HeaderParam documents a request or response header of a route.
type HeaderParam struct {
	Name        string
	Description string
}

// HandlerFunc handles a request; a returned error is written as the uniform error body.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle registers a route.
func (s *Server) Handle(rt Route, h HandlerFunc) {
	pattern := rt.muxPattern()
	s.routes = append(s.routes, rt)
	if rt.Public {
		s.public[pattern] = true
	}
	if rt.ScopedKeys {
		s.scoped[pattern] = true
	}
	if rt.VirtualKeys {
		s.virtual[pattern] = true
	}
	if rt.MaxBodyBytes > 0 {
		s.limits[pattern] = rt.MaxBodyBytes
		if rt.MaxBodyHint != "" {
			s.limitHints[pattern] = rt.MaxBodyHint
		}
	}
	hh := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := scalarQuery(rt, r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
	s.mux.Handle(pattern, hh)
	if rest, ok := strings.CutPrefix(rt.Path, "/v1/"); ok {
		if root, _, _ := strings.Cut(rest, "/"); root != "" && !strings.Contains(root, "{") {
			s.v1Roots[root] = true
		}
	}
	if !strings.Contains(rt.Path, "{") {
		s.direct[pattern] = directRoute{path: rt.Path, h: hh}
	}
}

// muxPattern is rt's ServeMux pattern: "METHOD /path", or the path alone for AnyMethod.
func (rt Route) muxPattern() string {
	if rt.AnyMethod {
		return rt.Path
	}
	return rt.Method + " " + rt.Path
}

// directRoute is a route whose pattern has no wildcards: a request for exactly its path
// can be handed to h without the mux matching it a second time.
type directRoute struct {
	path string
	h    http.Handler
}

// writeError writes err as the uniform error body. A write the store refused (disk full,
// read-only) is a 503 with Retry-After (storageRefused); errors no mapper knows are logged
// and answered with a 500 that carries only the request id.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if s.storageRefused(w, r, err) || s.cutAtShutdown(w, r, err) {
		return
	}
	if ae := s.toAPIError(err); ae != nil {
		s.respondError(w, r, ae, err)
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away; nobody reads the answer.
		w.WriteHeader(499)
		return
	}
	rid := requestID(r.Context())
	s.log.Error("internal error", "request_id", rid, "method", r.Method, "path", LogPath(r.URL.Path), "err", err)
	s.respondError(w, r, Errorf(http.StatusInternalServerError, KindInternal, "internal error (request id %s)", rid), nil)
}

// dispatch authenticates and routes. Unknown paths under /api/ answer 401 without a key
// so that probing does not reveal which routes exist.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		if alias := s.v1Alias(r); alias != nil {
			r = alias
			h, pattern = s.mux.Handler(r)
		}
	}
	if alias := s.deploymentAlias(r, pattern); alias != nil {
		r = alias
		h, pattern = s.mux.Handler(r)
	}
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.pattern = pattern
	}
	if !s.public[pattern] && needsKey(r.URL.Path, pattern) {
		p, ok := r.Context().Value(batchLineKey{}).(Principal)
		if !ok && !s.authenticate(w, r, &p) {
			return
		}
		vk, virtual := p.Scope.(virtualKeyScope)
		if p.Scope != nil && !s.scoped[pattern] && !(virtual && s.virtual[pattern]) {
			s.respondError(w, r, Errorf(http.StatusForbidden, KindForbidden, "this key is limited in scope and may not call %s %s", r.Method, r.URL.Path), nil)
			return
		}
		if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
			// Set on the request's own record instead of copying the request once more.
			info.principal, info.authenticated = p, true
		} else {
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		}
		if virtual && (r.Method == http.MethodPost && pattern != realtimeHangUpPattern || pattern == "GET "+realtimePath) {
			// Held until the handler returns: a stream to its end, a realtime session for
			// its life. Taken before the rate, so a refused request uses none of it.
			release, ae := s.takeParallel(w, vk)
			if ae != nil {
				s.refuseBeforeHandler(w, r, pattern, ae)
				return
			}
			if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
				// A handler whose work outlives it (a background response) takes the
				// slot over (keepParallelSlot) and gives it back when that work ends.
				info.parallelRelease = release
				defer info.endParallel()
			} else {
				defer release()
			}
		}
		if r.Method == http.MethodPost {
			if ae := s.withinRate(w, p, vk, virtual); ae != nil {
				s.refuseBeforeHandler(w, r, pattern, ae)
				return
			}
		}
	}
	if pattern == "" {
		s.notRouted(w, r, h)
		return
	}
	limit, how := s.cfg.MaxBodyBytes, " (serve --max-body-bytes)"
	if l, ok := s.limits[pattern]; ok {
		limit, how = l, " (this route's own)"
		if hint := s.limitHints[pattern]; hint != "" {
			how = " (" + hint + ")"
		}
	}
	if r.ContentLength > limit {
		s.refuseBeforeHandler(w, r, pattern, Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "request body of %d bytes exceeds the limit of %d bytes%s", r.ContentLength, limit, how))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	withBodyDeadline(w, r, s.bodyReadTimeout(r, limit))
	if dr, ok := s.direct[pattern]; ok && dr.path == r.URL.Path {
		// Exactly the route's path and no wildcards, so nothing for r.PathValue: call the
		// route's handler without matching the route a second time.
		r.Pattern = pattern
		dr.h.ServeHTTP(w, r)
		return
	}
	// Through the mux again (not h directly) so that r.PathValue is populated.
	s.mux.ServeHTTP(w, r)
}

// v1Alias is r for the /v1 route its path names without the /v1 prefix ("/chat/completions"
// for "/v1/chat/completions"), nil when it names none. LiteLLM's proxy answers both forms,
// and its documentation gives OpenAI's SDKs the proxy's root as their base URL; a client
// moved here unchanged keeps working. The alias is the /v1 route in every respect: its key
// scopes, body limit, rate and metrics.
func (s *Server) v1Alias(r *http.Request) *http.Request {
	root, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !s.v1Roots[root] {
		return nil
	}
	// As http.StripPrefix does: a shallow copy of r with its own URL.
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.Path = "/v1" + r.URL.Path
	if r.URL.RawPath != "" {
		r2.URL.RawPath = "/v1" + r.URL.RawPath
	}
	return r2
}

// authenticate sets *p to the caller of r from its bearer key, or answers r (401, or 429
// for an address over the failed-authentication limit) and reports false.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, p *Principal) bool {
	addr := s.clientAddr(r)
	if blocked, wait := s.authRL.blocked(addr, time.Now()); blocked {
		secs := int(wait/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.respondError(w, r, Errorf(http.StatusTooManyRequests, KindTooManyRequests,
			"too many failed authentications from this address (limit %d per minute); retry after %d s", s.authRL.perMinute, secs), nil)
		return false
	}
	var err error
	if key := bearer(r); strings.HasPrefix(key, realtimeSecretPrefix) && s.cfg.Store != nil {
		if *p, err = s.realtimeSecretPrincipal(r, key); errors.Is(err, errNotARealtimeSecret) {
			*p, err = s.auth.Authenticate(r.Context(), key)
		}
	} else {
		*p, err = s.auth.Authenticate(r.Context(), key)
	}
	if err != nil {
		if errors.Is(err, ErrKeyStoreUnavailable) && r.Context().Err() == nil {
			// A database restart or failover: a 503 the clients retry (Switchyard's own client
			// retries 503, not 500), not an internal error.
			s.log.ErrorContext(r.Context(), "authenticating: the key store does not answer", "path", LogPath(r.URL.Path), "err", err)
			w.Header().Set("Retry-After", "1")
			ae := Errorf(http.StatusServiceUnavailable, KindUnavailable, "the key store does not answer (its database may be restarting); retry shortly")
			ae.Retryable = true
			s.respondError(w, r, ae, nil)
			return false
		}
		if !errors.Is(err, ErrNoKey) {
			s.writeError(w, r, err)
			return false
		}
		if s.authRL.fail(addr, time.Now()) {
			// Once per lockout: which address, so the operator can find a stale key.
			s.log.WarnContext(r.Context(), "failed-auth limit reached: this address gets 429 until its allowance refills",
				"remote", addr, "limit_per_minute", s.authRL.perMinute)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard"`)
		how := "send the header Authorization: Bearer <key>"
		switch {
		case geminiPath(r.Method, r.URL.Path):
			how += " (or x-goog-api-key: <key>, or ?key=<key>)"
		case takesAPIKeyHeader(r.URL.Path):
			how += " (or x-api-key: <key>, or api-key: <key>)"
		default:
			how += passThroughKeyHint(r.URL.Path)
		}
		var secretErr *realtimeSecretError
		if errors.As(err, &secretErr) {
			s.respondError(w, r, Errorf(http.StatusUnauthorized, KindUnauthorized, "%s", secretErr.msg), nil)
			return false
		}
		var expired *KeyExpiredError
		if errors.As(err, &expired) {
			// LiteLLM's words, which its users' scripts look for.
			s.respondError(w, r, Errorf(http.StatusUnauthorized, KindUnauthorized, "Authentication Error - Expired Key. Key Expiry time %s and current time %s; the key's owner may extend it (expires_at on PATCH /api/v1/keys/{key_id}, duration on /key/update)",
				expired.At.UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)), err)
			return false
		}
		s.respondError(w, r, Errorf(http.StatusUnauthorized, KindUnauthorized, "missing or invalid API key: %s", how), nil)
		return false
	}
	return true
}

// bodyReadTimeout is how long r's body may take to arrive: Config.BodyReadTimeout, grown in
// proportion for a body larger than Config.MaxBodyBytes on a route whose own limit allows it
// (a file, an audio file, images to edit), sized by its Content-Length or, unknown, the
// route's limit — the same least rate for every body, not one deadline for a 100 MB upload
// and a 1 KB request alike.
func (s *Server) bodyReadTimeout(r *http.Request, limit int64) time.Duration {
	d := s.cfg.BodyReadTimeout
	if d <= 0 || limit <= s.cfg.MaxBodyBytes {
		return d
	}
	size := r.ContentLength
	if size < 0 {
		size = limit
	}
	if size <= s.cfg.MaxBodyBytes {
		return d
	}
	return time.Duration(float64(d) * float64(size) / float64(s.cfg.MaxBodyBytes))
}

func needsKey(path, pattern string) bool {
	if pattern != "" {
		return true
	}
	return strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/v1/")
}

// notRouted turns the mux's plain-text 404/405 into the uniform JSON body.
func (s *Server) notRouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code == http.StatusMethodNotAllowed {
		allow := rec.Header().Get("Allow")
		w.Header().Set("Allow", allow)
		s.respondError(w, r, Errorf(http.StatusMethodNotAllowed, KindMethodNotAllow, "method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow), nil)
		return
	}
	s.respondError(w, r, NotFound("no route for %s %s", r.Method, r.URL.Path), nil)
}

// requestInfo is what the server records about a request in its context: the request id
// (set by the access log) and, once authenticated, the caller. One record per request keeps
// it to a single context value and a single copy of the *http.Request.
type requestInfo struct {
	id            string
	principal     Principal
	authenticated bool
	pattern       string // the matched route, set by dispatch
	// answeredErr is the error a gateway route answered with in its own envelope
	// (openAIError), for recordRefusals.
	answeredErr error
	// askedModel is the model a gateway route's request named, noted by its handler
	// (noteAskedModel) before the body's decoding would say it, for recordRefusals.
	askedModel string
	// askedStream says the gateway route's request body asked for a stream
	// (noteDecodedModel), for recordRefusals.
	askedStream bool
	// rejectClientTags is Config.RejectClientTags (headerTags reads it).
	rejectClientTags bool
	// parallelRelease gives back the request's max_parallel_requests slots when its
	// handler returns, nil once a handler took them over (keepParallelSlot).
	parallelRelease func()
	// realtimeSecret is the client secret the request was authenticated with (nil: a key).
	realtimeSecret *realtimeSecretRecord
}

// endParallel gives back the request's max_parallel_requests slots unless its handler
// took them over.
func (info *requestInfo) endParallel() {
	if info.parallelRelease != nil {
		info.parallelRelease()
	}
}

// keepParallelSlot hands r's max_parallel_requests slots (a no-op func without any) to
// work that goes on after r's handler returns: the caller must call the func returned
// when that work ends (it may call it more than once). Called in r's handler.
func keepParallelSlot(r *http.Request) func() {
	info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo)
	if !ok || info.parallelRelease == nil {
		return func() {}
	}
	release := info.parallelRelease
	info.parallelRelease = nil
	return release
}

// RoutePattern returns the route r matched ("POST /api/v1/completions"), once the server
// has dispatched it; "" before, or when no route matched. Middleware (Config.Middleware)
// reads it after the inner handler returns.
func RoutePattern(r *http.Request) string {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return info.pattern
	}
	return ""
}

// artifactsPrefix is the path of artifact downloads, whose next segment is the credential.
const artifactsPrefix = "/api/v1/artifacts/"

// LogPath is path as access logs and traces show it: the token of an artifact URL
// (/api/v1/artifacts/{token}/agent.py), which is the download's credential, is redacted.
func LogPath(p string) string {
	// The mux would not route an unclean path, but its token is a credential all the same.
	path := p
	if strings.Contains(p, "//") || strings.Contains(p, "/.") {
		path = pathpkg.Clean(p)
	}
	rest, ok := strings.CutPrefix(path, artifactsPrefix)
	if !ok || rest == "" {
		return p
	}
	_, tail, found := strings.Cut(rest, "/")
	if !found {
		return artifactsPrefix + "[redacted]"
	}
	return artifactsPrefix + "[redacted]/" + tail
}

// RequestID returns the request id (the X-Request-Id header the server answers with) of
// the request ctx belongs to, "" outside a request.
func RequestID(ctx context.Context) string { return requestID(ctx) }

type requestInfoKey struct{}

func requestID(ctx context.Context) string {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	if info == nil {
		return ""
	}
	return info.id
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers push server-sent events through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// maxRequestIDLen bounds an incoming X-Request-Id the server adopts.
const maxRequestIDLen = 128

// saneRequestID reports whether id, a caller's X-Request-Id, may be the request's id: 1 to
// maxRequestIDLen printable ASCII characters without spaces or quotes (it is echoed in a
// header, logged and recorded in the usage history).
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// newRequestID returns a fresh request id, "req_" and 32 hex digits as OpenAI's.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// withAccessLog logs one line per request: method, path, status, duration, request id.
// Never headers, query strings or bodies, so keys and message content stay out of logs.
func (s *Server) withAccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := r.Header.Get("X-Request-Id")
		if !saneRequestID(rid) {
			rid = newRequestID()
		}
		// The keys are already canonical: assign instead of Header.Set. LiteLLM's clients
		// read the id as x-litellm-call-id. One slice for both: a header's values are
		// replaced (Set) or appended to past their capacity (Add), never written in place.
		ids := []string{rid}
		w.Header()["X-Request-Id"] = ids
		w.Header()["X-Litellm-Call-Id"] = ids
		// The recorder and the request's info in one allocation: both live as long as the request.
		st := &accessLogged{rec: statusRecorder{ResponseWriter: w}, info: requestInfo{id: rid, rejectClientTags: s.cfg.RejectClientTags}}
		rec, info := &st.rec, &st.info
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		if status < 400 && isProbe(r) {
			// Load balancers and Prometheus ask every few seconds: their successful
			// answers would bury the traffic's lines (a failing one stays visible).
			level = slog.LevelDebug
		}
		s.log.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method),
			slog.String("path", LogPath(r.URL.Path)),
			slog.String("remote", s.clientAddr(r)),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.Int64("bytes", rec.bytes),
			slog.String("request_id", rid),
		)
	})
}

// accessLogged is what withAccessLog keeps of a request while it is served.
type accessLogged struct {
	rec  statusRecorder
	info requestInfo
}

// isProbe reports whether r is a health probe or a metrics scrape: GET /healthz,
// /health/liveliness, /health/liveness, /health/readiness or /metrics.
func isProbe(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	switch r.URL.Path {
	case "/healthz", "/health/liveliness", "/health/liveness", "/health/readiness", "/metrics":
		return true
	}
	return false
}

// withRecover answers a panic with a 500 that does not leak internals.
func (s *Server) withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				rid := requestID(r.Context())
				s.log.Error("panic", "request_id", rid, "path", LogPath(r.URL.Path), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				s.respondError(w, r, Errorf(http.StatusInternalServerError, KindInternal, "internal error (request id %s)", rid), nil)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		// Shutting down: load balancers stop sending traffic while requests still finish.
		writeJSON(w, http.StatusServiceUnavailable, health{Status: "draining", Version: s.cfg.Version})
		return nil
	}
	if err := s.storeAnswers(r.Context()); err != nil {
		s.log.WarnContext(r.Context(), "healthz: the store does not answer", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, health{Status: "store unavailable", Version: s.cfg.Version})
		return nil
	}
	writeJSON(w, http.StatusOK, health{Status: "ok", Version: s.cfg.Version})
	return nil
}

// storeAnswers reads the store once (within 2 s): every request needs it (keys live
// there), so a server that cannot read it is taken out of rotation. A missing key is the
// expected answer.
func (s *Server) storeAnswers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := s.cfg.Store.Get(ctx, store.ScopedKeys, "healthz"); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// readiness is the answer of LiteLLM's GET /health/readiness.
type readiness struct {
	Status  string `json:"status" jsonschema:"description=healthy\\, draining or unhealthy"`
	DB      string `json:"db" jsonschema:"description=connected or Not connected: whether the store answers"`
	Version string `json:"litellm_version" jsonschema:"description=Switchyard's version (LiteLLM's field name)"`
}

func (s *Server) handleReadiness(w http.ResponseWriter, r *http.Request) error {
	ans := readiness{Status: "healthy", DB: "connected", Version: s.cfg.Version}
	if err := s.storeAnswers(r.Context()); err != nil {
		s.log.WarnContext(r.Context(), "health/readiness: the store does not answer", "err", err)
		ans.Status, ans.DB = "unhealthy", "Not connected"
	}
	status := http.StatusOK
	if s.draining.Load() {
		ans.Status = "draining"
	}
	if ans.Status != "healthy" {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, ans)
	return nil
}

// Drain makes /healthz answer 503 {"status": "draining"} from now on, so that load
// balancers take the server out of rotation before it stops accepting connections (serve's
// --shutdown-delay); requests are still served.
func (s *Server) Drain() { s.draining.Store(true) }
