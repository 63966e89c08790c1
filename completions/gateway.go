// Package completions is Switchyard's chat-completions gateway: it validates a request,
// orders its models (ranked primaries, then fallbacks), calls the upstream providers with
// retries, exponential backoff and fallback, streams fragments with stream-safe failover,
// prices the usage, keeps conversations in the store and reports spending to an optional
// ledger. Requests may carry tools and a response format (tool calling and structured
// output: Request.Tools, ToolChoice, ParallelToolCalls, ResponseFormat; the answer's
// Response.ToolCalls, streamed as EventToolCall fragments), which package providers maps to
// each provider's wire format. Stateless requests may carry images and PDFs in user turns
// (ContentBlock.Image, File); a model that cannot take a request's tools, format, images or
// files is skipped while another can. Request.Thinking asks the models that can reason to
// do so; their reasoning comes back in Response.Reasoning (streamed as EventReasoning
// fragments, which count as the first token), and the reasoning a client sends back with an
// assistant turn (Message.Reasoning) reaches Claude, which needs its signed blocks in a tool
// loop (the gateway keeps them for clients that send the turn back without them). The
// request and answer types of the three
// client-facing surfaces live here too — OpenAI's chat completions (OpenAIChatRequest) and
// Responses API (ResponsesRequest), Anthropic's Messages API (AnthropicMessagesRequest) —
// each translated to a Request; a model group (Options.ModelGroups) lets a client that
// names one model reach several, in order, shuffled, fastest first by the latency the
// gateway measures, or routed by the Ranker. Gateway.Embed serves OpenAI's embeddings API
// (EmbeddingsRequest) over the providers that have one (providers.Embedder), with the same
// keys, budgets, retries and records; Gateway.Rerank serves Cohere's rerank API
// (RerankRequest) over the providers with one (providers.Reranker). The HTTP routes live in
// package server and only translate to and from the types here.
package completions

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// ProviderLookup finds the adapter for a provider prefix; *providers.Registry implements it.
// An unknown name returns an error (normally matching providers.ErrUnknownProvider).
type ProviderLookup interface {
	Lookup(name string) (providers.Provider, error)
}

// PriceCatalogue prices token usage; model is the "provider/model" string.
type PriceCatalogue interface {
	Cost(model string, u providers.Usage) providers.Cost
}

// ModelCatalogue is implemented by price catalogues that know models' limits
// (*providers.Catalog): the gateway then fits a Messages request's max_tokens to each model.
type ModelCatalogue interface {
	Lookup(model string) (providers.Price, bool)
}

// attemptRequest is base as target t is sent it: its model, its output bound
// (maxTokensFor), and the provider's web search when req offers it to the models that have
// one (Request.searchIfAvailable) and t can search with the rest of the request, as
// providers.Check says (Gemini cannot beside function tools, Gemini 2.x not beside a JSON
// format either; OpenAI's Responses API has no stop).
func (g *Gateway) attemptRequest(req *Request, base *providers.Request, t target) providers.Request {
	r := *base
	r.Model = t.model
	if mp, ok := g.routes().params[t.name]; ok {
		mp.apply(&r)
	}
	r.MaxTokens = g.maxTokensFor(req, r.MaxTokens, t) // Attempt.MaxTokens: sentMaxTokens
	if req.searchIfAvailable && !r.Search && providers.SupportsSearch(t.p, t.model) {
		// A copy, so that only requests offering search pay for the one Check takes.
		searching := r
		searching.Search = true
		r.Search = providers.Check(t.p, t.model, &searching) == nil
	}
	return r
}

// sentMaxTokens is the max_tokens an attempt of p on t is sent (attemptRequest of
// p.preq; a continuation's prefill keeps it): Attempt.MaxTokens.
func (g *Gateway) sentMaxTokens(p *plan, t target) int {
	n := p.preq.MaxTokens
	if mp, ok := g.routes().params[t.name]; ok && n == 0 {
		n = mp.MaxTokens
	}
	if p.req == nil {
		return n
	}
	return g.maxTokensFor(p.req, n, t)
}

// maxTokensFor is the output bound n of req for target t, lowered to t's catalogued output
// limit when req asks for that (Request.fitMaxTokens). A thinking request without a bound
// gets t's limit when the room an adapter would give it by itself (its budget and an
// answer's default) is more than t can write: Claude refuses a max_tokens above its limit.
func (g *Gateway) maxTokensFor(req *Request, n int, t target) int {
	mc, ok := g.prices().(ModelCatalogue)
	if !ok || n < 0 || n > 0 && !req.fitMaxTokens || n == 0 && req.Thinking == nil {
		return n
	}
	p, found := mc.Lookup(g.priceName(t.name))
	if !found || p.MaxOutputTokens <= 0 {
		return n
	}
	if n == 0 {
		if req.Thinking.Budget(0, 0)+providers.DefaultAnthropicMaxTokens > p.MaxOutputTokens {
			return p.MaxOutputTokens
		}
		return 0
	}
	return min(n, p.MaxOutputTokens)
}

// Ranker orders candidate models for a conversation, best first (the routing package can
// implement it). It must return a permutation of models; anything else is ignored and the
// given order is kept.
type Ranker interface {
	Rank(ctx context.Context, messages []providers.Message, models []string) ([]string, error)
}

// Ledger receives the usage and cost of every answered attempt (e.g. the optimizer's
// per-job spending account). Record must not block for long; it runs on the request path.
type Ledger interface {
	Record(ctx context.Context, e LedgerEntry)
}

// LedgerEntry is one answered upstream attempt.
type LedgerEntry struct {
	// Owner and Tag are copied from the request's Scope.
	Owner string
	Tag   string
	// Model is the "provider/model" string that answered.
	Model string
	// Complete is false when a stream failed after it started (usage may then be partial).
	Complete bool
	Usage    providers.Usage
	// Estimated says the upstream reported no usage and Usage (and Cost) come from a local
	// count (see Response.UsageEstimated).
	Estimated bool
	Cost      Costs
	Latency   time.Duration
	Time      time.Time
	// Tags are the request's tags (Request.Tags).
	Tags []string
}

// Scope says who is calling and what they may spend. The zero Scope is an anonymous caller
// without limits.
type Scope struct {
	// Owner identifies the caller (for example the API key's id); conversations are
	// private to it.
	Owner string
	// ConversationOwner, when set, is whom the conversations the scope starts belong to in
	// place of Owner: a key acting for Owner ("<Owner>/<key>", a server's virtual key). The
	// scope continues its own conversations and Owner's, not another key's of Owner.
	ConversationOwner string
	// Tag is a free-form label passed to the Ledger (for example an optimization job id).
	Tag string
	// Budget, when set, limits models, calls and tokens; it is shared by all requests of
	// the same scoped key.
	Budget *Budget
	// Received is when the request arrived (for latency and ttft); zero means "now".
	Received time.Time
	// RequestID is the id the caller is answered with (the server's x-request-id): the
	// Observer's records of the request carry it (RequestRecord.RequestID).
	RequestID string
	// CallTimeout, when set, is how long each request of the scope may take in all and
	// one upstream call as long: it replaces the gateway's RequestTimeout and
	// AttemptTimeout (an optimization job's llm_call_timeout_seconds for its agent's
	// calls). A request's own timeout still wins for its deadline.
	CallTimeout time.Duration
	// AttemptTimeout, when set, bounds each upstream call of the scope's requests in place
	// of the gateway's AttemptTimeout, leaving the request's own deadline (RequestTimeout,
	// a background response's run, CallTimeout) to its retries and fallbacks: LiteLLM's
	// router timeout, which a virtual key's or team's router_settings.timeout sets, bounds
	// each call, so a call cut by it goes on to the next. The deadline is at least one
	// such call long. A request's own timeout still wins.
	AttemptTimeout time.Duration
	// Guardrails names guardrails every chat request of the scope runs (a virtual key's,
	// LiteLLM's per-key guardrails), besides the default_on ones and those the request
	// names; a request cannot turn them off. A name the gateway does not configure (the
	// configuration changed after the key was made) refuses the request: it fails closed.
	Guardrails []string
	// MCPServers names the MCP servers (Options.MCP) the scope's /v1/responses requests may
	// use in mcp tools (a virtual key's); nil allows every configured server.
	MCPServers []string
	// EndUser is the end user the request is made for (LiteLLM's end user: the body's user,
	// an x-litellm-end-user-id header); observers see it as RequestRecord.EndUser.
	EndUser string
	// KeyID, TeamID and UserID name the virtual key the request was made with, the team
	// it belongs to and the user it was made for ("" when none): ids, never the key's
	// secret. Observers see them in RequestRecord (a trace's attributes).
	KeyID, TeamID, UserID string
	// KeyAlias and TeamAlias are the key's and its team's names (LiteLLM's key_alias and
	// team_alias; "" when none), for the observers.
	KeyAlias, TeamAlias string
	// UserAgent is the caller's User-Agent header: the members of a tag-filtered model
	// group whose TagRegex patterns match it are selected as if the request carried
	// their tags (LiteLLM's tag_regex, e.g. Claude Code's traffic to its own deployment).
	UserAgent string
	// InheritedTags are the tags of the virtual key and team the request is made with
	// (already among the request's tags): a tag-filtered model group's TagFailOpen never
	// drops a "!tag" or "&tag" of these (LiteLLM's metadata.inherited_tags).
	InheritedTags []string
	// BackgroundDone, when set, is called once a background response's run
	// (StartBackgroundResponse) has ended, however it ended (not when it is refused
	// before it starts): the server gives back the request's max_parallel_requests slots
	// with it, so a background response holds them for its run as a request does.
	BackgroundDone func()
	// NumRetries, when set, is the retries per model of the scope's requests that do not
	// set their own MaxRetries, in place of Options.DefaultMaxRetries (a virtual key's or
	// its team's router_settings.num_retries, as LiteLLM applies a key's router settings
	// per request).
	NumRetries *int
	// Fallbacks are the scope's own fallbacks by model name asked (a virtual key's or its
	// team's router_settings.fallbacks; "*" for every model; a name with a provider,
	// "openai/gpt-4o", falls back to the entry of its bare name): a request naming one as
	// its first model tries them, each once, when it fails. As LiteLLM's key fallbacks
	// replace its router's, a scope with Fallbacks (not nil; an empty map asks for none)
	// leaves out the plain Fallbacks of the model group asked (the server's), even when
	// none is for the model asked; and as
	// LiteLLM's request fallbacks replace the key's, a request naming fallbacks of its own
	// (FallbackModels non-nil, an empty list included) leaves out both. They apply to
	// chat, and to embeddings, audio, images, rerank and moderation (whose fallbacks are
	// models of the same kind). A fallback the scope's Budget does not allow, or that
	// does not resolve, is passed over.
	Fallbacks map[string][]string
	// ContextWindowFallbacks are the scope's fallbacks for a prompt too long (a virtual
	// key's or its team's router_settings.context_window_fallbacks, LiteLLM's), looked up
	// as Fallbacks are: when the model asked (any member of the model group asked) fails
	// with a prompt too long for it, the models asked after it are left out and these
	// replace the plain fallbacks, as a group's ContextWindowFallbacks do — in place of
	// the group's, which a scope with ContextWindowFallbacks (not nil; an empty map: none
	// for any model) leaves out. A request's
	// own fallbacks replace them (LiteLLM's router runs a request's list of models before
	// it looks at the error's kind). A scope with ContextWindowFallbacks but none for the
	// model asked (no entry, an empty one, or none it may call) leaves the prompt too
	// long's error to stand — the models asked after it and the plain fallbacks are not
	// tried — as LiteLLM's router re-raises it; not for a request naming several models,
	// which goes on to its next. Chat requests only.
	ContextWindowFallbacks map[string][]string
}

// conversationOwner is whom the conversations s starts belong to.
func (s Scope) conversationOwner() string {
	if s.ConversationOwner != "" {
		return s.ConversationOwner
	}
	return s.Owner
}

// continues reports whether s may continue a conversation of owner: its own (and, as
// store.Owns, those of the keys below it), and for a key acting for Owner, Owner's.
func (s Scope) continues(owner string) bool {
	return store.Owns(s.conversationOwner(), owner) || owner == s.Owner
}

// Backoff configures the wait between retries of the same model.
type Backoff struct {
	// Initial is the wait before the first retry; default 1s (with the default jitter,
	// the first wait is between 0.5 and 1 s).
	Initial time.Duration
	// Max caps the exponential wait; default 4s.
	Max time.Duration
	// Jitter is the random fraction taken off each wait (0..1); default 0.5, negative
	// disables it.
	Jitter float64
	// MaxRetryAfter is the longest Retry-After the gateway honours; a longer one moves on
	// to the next model instead of waiting. Default 30s.
	MaxRetryAfter time.Duration
}

// Options configures a Gateway. Only Providers is required.
type Options struct {
	// Providers resolves the provider part of "provider/model".
	Providers ProviderLookup
	// Prices prices usage; nil reports every price as unknown (costs 0, price_known false).
	Prices PriceCatalogue
	// Store keeps conversations (store.Conversations and store.Messages); nil keeps none,
	// and a request naming a conversationId then fails with ErrNotFound.
	Store *store.Store
	// Ranker orders Request.Models when there is more than one; nil keeps the given order.
	Ranker Ranker
	// ModelGroups are model names that stand for several models on the OpenAI-compatible
	// and Messages surfaces (see ModelGroup); New checks them.
	ModelGroups map[string]ModelGroup
	// DeploymentIDs are the ids the configuration gives ModelGroups' members, as
	// Routes.IDs (nil: each is DeploymentID's hash).
	DeploymentIDs map[string]string
	// Wildcards route the names no model group and no catalogued model answers on the
	// OpenAI-compatible surfaces (a LiteLLM config's model_name "*" or "openai/*"
	// entries); New checks them.
	Wildcards []Wildcard
	// RefuseMocks refuses LiteLLM's testing switches (Request.MockResponse, MockFailure:
	// mock_response, mock_testing_fallbacks…) with a *ValidationError naming the field, for
	// a production server whose keys should neither get answers no model gave nor fail
	// models on purpose. The zero value takes them, as LiteLLM does.
	RefuseMocks bool
	// ListConfigured makes ListedModels and Deployments list only what the configuration
	// names — the model groups and Listed — in place of every catalogued model of every
	// configured provider, as LiteLLM's /v1/models lists a config's model_list (a LiteLLM
	// config's migrants' model pickers fill with what they configured, not the catalogue).
	// A request naming a model it does not list (not a model group, a group's member, a
	// listed model, a model of a listed "provider/*" nor a name a wildcard matches) is
	// refused with a *ValidationError matching ErrModelNotServed, as LiteLLM's proxy refuses
	// a model its model_list lacks; Serves says which names a request may use.
	ListConfigured bool
	// Listed, with ListConfigured, are the models listed besides the groups: a
	// "provider/model", or "provider/*" for every catalogued model of the provider (chat,
	// embedding and rerank alike) when it is configured. SetRoutes may replace them.
	Listed []string
	// DeploymentNames are the names a request may send for deployments besides the model
	// groups, their members and Listed, as LiteLLM's router serves a deployment by its own
	// litellm_params.model ("openai/gpt-4o" for a model_name "my-gpt" calling it with an
	// api_base of its own, called as "openai-my-gpt-1a2b3c4d/gpt-4o"): each name to the
	// deployments it stands for, in order. A name that is a model group, or that a
	// wildcard (Wildcards, a listed "provider/*") matches, is routed as that instead, as
	// LiteLLM's proxy tries a model_name, then its wildcards, then its deployments' models.
	// A request naming one is served by those deployments (several are tried as a
	// request naming several models is), each attempt under its deployment's ModelName
	// (so it carries that deployment's id). SetRoutes may replace them.
	DeploymentNames map[string][]NamedDeployment
	// ContextWindowFallbacksSet says the configuration sets context window fallbacks at
	// all (a LiteLLM config's context_window_fallbacks with any entry): a prompt too long
	// for a model with none of its own (a model served through a wildcard such as
	// "openai/*", a deployment name, or a group without an entry) ends the models asked and
	// the plain fallbacks with its error, as ModelGroup.ContextWindowFallbacksSet does for
	// a group and LiteLLM's router re-raises the ContextWindowExceededError; the request's
	// own fallbacks are still tried, and a request naming several models goes on to its
	// next (LiteLLM's request names one). SetRoutes may replace it.
	ContextWindowFallbacksSet bool
	// Ledger receives the usage of answered attempts; nil reports nowhere.
	Ledger Ledger
	// Observer, when set, sees every accepted request once at its end (metrics, traces, the
	// console's recent requests).
	Observer Observer
	// TraceAttempt, when set, gives each upstream call (an attempt: a retry, a fallback, a
	// hedge, a stream's continuation) the context it is made with, and the span id the
	// tracer will record that attempt's span under (Attempt.SpanID), so that what the call
	// does in that context — its HTTP client span — nests under the attempt's span
	// (telemetry.Tracing.TraceAttempt). Nil: calls are made in the request's context.
	TraceAttempt func(ctx context.Context) (context.Context, [8]byte)
	// Logger receives warnings and debug logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sleep waits between retries, and times a request queued for a slot in flight
	// (MemberLimits.MaxParallel) until a model it skipped may be callable again; nil waits
	// on a timer and stops when ctx is done. Such a request re-plans when Sleep returns
	// only if Now has reached the moment it waited for: when Sleep returns earlier (one
	// that returns at once to disable backoff), the request waits on for a slot or its
	// deadline instead, without setting the timer again until a slot wakes it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Backoff configures retry waits.
	Backoff Backoff
	// Rand is the source of shuffled model groups' draws (ModelGroup.Shuffle, by Weights:
	// LiteLLM's simple-shuffle), for one gateway: a seeded one (rand.NewPCG(1, 2)) makes
	// them repeatable in tests. nil: a ChaCha8 source seeded from crypto/rand. The gateway
	// serializes its draws; the source must not be used elsewhere.
	Rand rand.Source
	// DefaultMaxRetries is used when a request has no maxRetries; 0 means 2, negative
	// means no retries.
	DefaultMaxRetries int
	// AttemptTimeout bounds one non-streamed upstream call; default 120s.
	AttemptTimeout time.Duration
	// FirstTokenTimeout bounds the wait for a stream's response and first fragment;
	// default 20s, which fits interactive use (a chat user rarely waits longer for the
	// first word, and the fallback still has time to answer). A model silent this long is
	// left for the next one at once. Requests may set their own (FaultPolicy).
	FirstTokenTimeout time.Duration
	// StreamIdleTimeout bounds the silence between two stream fragments; default 30s.
	StreamIdleTimeout time.Duration
	// RequestTimeout is the whole request's deadline, retries and fallbacks included;
	// default 5 minutes.
	RequestTimeout time.Duration
	// Breaker configures the per-model circuit breaker (on by default).
	Breaker BreakerOptions
	// BudgetAlert, when set, is told when a scoped key's cost reaches its soft budget, 85%
	// of its max budget or its max budget: once per threshold and budget period (across
	// the processes of a store for a Budget kept in it). Operators' alerts hang here.
	BudgetAlert BudgetAlertFunc
	// ConversationWrites says whether a turn is committed before the answer is sent
	// (WriteThrough, the default) or queued and committed in the background (WriteBehind;
	// call Close to commit what is queued).
	ConversationWrites ConversationWrites
	// WriteBehindQueue bounds the turns queued with WriteBehind (default 4096); a request
	// finding the queue full waits for room.
	WriteBehindQueue int
	// Cache is the response cache (off when its Driver is nil): see CacheOptions.
	Cache CacheOptions
	// SharedLimits, when set, shares the budgets' tokens per minute with the other
	// processes on the same store (give or take what they counted since the last Sync; the
	// caller runs Counters.Run), the requests in flight of budgets kept in the store (the
	// spend gate's: at once, through the budget's record, each request one write more on
	// admission and one when it ends), the model group members' rpm and tpm (MemberLimits), and
	// the circuit breakers' trips: a model one process finds down is skipped by the others
	// from their next Sync. Without it all are per process.
	SharedLimits *store.Counters
	// StoredResponses says how /v1/responses answers are kept in Store for
	// previous_response_id (kept for 30 days by default): see StoredResponsesOptions.
	StoredResponses StoredResponsesOptions
	// MCP runs the tools of the MCP servers the operator configured, for the mcp tools of
	// /v1/responses requests (Gateway.RespondWithMCP); nil refuses mcp tools.
	MCP MCPTools
	// ConversationRetention is how long a native conversation (/api/v1/conversations) is
	// kept after its last turn: past it, reads answer ErrNotFound and SweepConversations
	// deletes it with its messages. 0 means DefaultConversationRetention (forever); a
	// negative value keeps conversations forever.
	ConversationRetention time.Duration
	// OpenAIConversationRetention is the same for OpenAI-style conversations
	// (/v1/conversations), counted from their last use (an answer on them, items added or
	// deleted, metadata updated); SweepOpenAIConversations deletes them with their items.
	// 0 means DefaultConversationRetention (forever, as OpenAI keeps them); negative: forever.
	OpenAIConversationRetention time.Duration
	// Guardrails are the checks chat requests may run before their upstream call or on
	// their answer (see GuardrailConfig; New checks them): the default_on ones on every
	// chat request, the others on the requests that name them (Request.Guardrails).
	Guardrails []GuardrailConfig
	// TagBudgets finds the accounts of a request's tags (LiteLLM's tag budgets): a request
	// naming a tag with one also draws on it, on every operation but count_tokens. nil
	// with a Store: StoredTagBudgets on it (a request naming tags reads one record per
	// tag); nil without: tags hold no budget.
	TagBudgets TagBudgets
}

// Gateway serves completions. It is safe for concurrent use. Make one with New; a zero
// Gateway answers Complete and Stream with ErrZeroGateway.
type Gateway struct {
	opts     Options
	log      *slog.Logger
	breakers *breakers
	spend    spendGate      // budgets' requests in flight (USD and token bounds)
	pending  pendingCharges // answered requests' charges the store did not take, applied again
	// rt is the routing table: the model groups with their members' limits and timeouts,
	// and the price catalogue (Options' at New; SetRoutes swaps in another, under swapMu).
	rt      atomic.Pointer[routeTable]
	swapMu  sync.Mutex
	latency latencyStats // how fast each model answered lately (latency routing)
	shuffle *draws       // shuffled groups' random orders (Options.Rand)
	// publicBases caches PublicURL of the providers' base URLs (APIBaseOf, on every
	// answer), up to maxPublicBases of them.
	publicBases     sync.Map
	publicBasesSize atomic.Int32
	// deploymentIDs caches DeploymentID of the deployments answers named (DeploymentIDOf,
	// on every answer's x-litellm-model-id).
	deploymentIDs deploymentIDCache
	// reasoned keeps the signed reasoning of answers with tool calls, for clients that
	// send the turn back without it (see reasoningCache).
	reasoned reasoningCache
	// answered keeps the output items of /v1/responses answers, for item_reference items
	// (see KeepResponseItems).
	answered recentCache[ResponsesItem]
	// keptResponses are the stored /v1/responses answers this process wrote or read lately
	// (see StoreResponse): the earlier answers of a conversation are read from it.
	keptResponses recentCache[*chainLink]
	writer        *turnWriter // WriteBehind only
	// bg are the background /v1/responses runs of this process (Close cuts them).
	bg backgroundRuns
	// cacheWrites are the response cache's writes under way (Close waits for them).
	cacheWrites cacheWriters
	// semantic is the semantic cache's vector index (CacheOptions.Semantic).
	semantic semanticIndex
	schemas  schemaSet // tool and output schemas that compiled
	// indexed backfills the owner index of conversations stored before it.
	indexed store.OwnedBackfill
	// The configured providers' catalogued models, indexed once (indexModels): listed by
	// full name, the providers the catalogue enumerates, and by name without a provider.
	modelsOnce sync.Once
	listed     map[string]bool
	catalogued map[string]bool
	bareIndex  map[string][]string
	// The embedding models of EmbeddingModels, indexed once.
	embedIndex modelIndex
	// The configured audio providers' catalogued audio models, indexed once (audioIndex):
	// by full name, by name without a provider, and the providers the catalogue lists.
	audioOnce       sync.Once
	audioListed     map[string]bool
	audioBare       map[string][]string
	audioCatalogued map[string]bool
	// The rerank models of RerankModels, indexed once.
	rerankIndex modelIndex
	// guardrails are Options.Guardrails by name, ready to run.
	guardrails map[string]*guardrail
}

// modelIndex holds a kind's catalogued models (embeddings, rerank), indexed once: by full
// name and by name without a provider.
type modelIndex struct {
	once   sync.Once
	listed map[string]bool
	bare   map[string][]string
}

// build indexes the "provider/model" names models lists, the first time it is called, and
// returns x.
func (x *modelIndex) build(models func() []string) *modelIndex {
	x.once.Do(func() {
		x.listed, x.bare = map[string]bool{}, map[string][]string{}
		for _, pm := range models() {
			x.listed[pm] = true
			if _, m, err := providers.ParseModel(pm); err == nil && !strings.Contains(m, "/") {
				x.bare[m] = append(x.bare[m], pm)
			}
		}
	})
	return x
}

// ErrNoProviders is returned by New when Options.Providers is nil.
var ErrNoProviders = errors.New("completions: Options.Providers is required")

// ErrZeroGateway answers calls on a Gateway not made by New.
var ErrZeroGateway = errors.New("completions: the Gateway was not made by New")

// New returns a Gateway configured by opts, with defaults filled in.
func New(opts Options) (*Gateway, error) {
	if opts.Providers == nil {
		return nil, ErrNoProviders
	}
	if opts.TagBudgets == nil && opts.Store != nil {
		opts.TagBudgets = StoredTagBudgets{Store: opts.Store}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	b := &opts.Backoff
	if b.Initial <= 0 {
		b.Initial = time.Second
	}
	if b.Max <= 0 {
		b.Max = 4 * time.Second
	}
	if b.Jitter == 0 {
		b.Jitter = 0.5
	}
	if b.Jitter < 0 {
		b.Jitter = 0
	}
	if b.Jitter > 1 {
		b.Jitter = 1
	}
	if b.MaxRetryAfter <= 0 {
		b.MaxRetryAfter = 30 * time.Second
	}
	if opts.DefaultMaxRetries == 0 {
		opts.DefaultMaxRetries = 2
	}
	if opts.DefaultMaxRetries < 0 {
		opts.DefaultMaxRetries = 0
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = 120 * time.Second
	}
	if opts.FirstTokenTimeout <= 0 {
		opts.FirstTokenTimeout = 20 * time.Second
	}
	if opts.StreamIdleTimeout <= 0 {
		opts.StreamIdleTimeout = 30 * time.Second
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 5 * time.Minute
	}
	if opts.WriteBehindQueue <= 0 {
		opts.WriteBehindQueue = 4096
	}
	if opts.Cache.TTL <= 0 {
		opts.Cache.TTL = time.Hour
	}
	if opts.Cache.MaxEntryBytes <= 0 {
		opts.Cache.MaxEntryBytes = 1 << 20
	}
	if sem := opts.Cache.Semantic; sem != nil {
		s := *sem // the caller's stays as it is
		if s.Threshold == 0 {
			s.Threshold = DefaultSimilarityThreshold
		}
		if s.MaxVectors <= 0 {
			s.MaxVectors = DefaultSemanticVectors
		}
		if s.MaxTotalVectors <= 0 {
			s.MaxTotalVectors = DefaultSemanticTotalVectors
		}
		if s.Refresh <= 0 {
			s.Refresh = time.Minute
		}
		opts.Cache.Semantic = &s
	}
	rt, err := newRouteTable(Routes{ModelGroups: opts.ModelGroups, Prices: opts.Prices, IDs: opts.DeploymentIDs, Wildcards: opts.Wildcards, Listed: opts.Listed, DeploymentNames: opts.DeploymentNames, ContextWindowFallbacksSet: &opts.ContextWindowFallbacksSet}, nil)
	if err != nil {
		return nil, err
	}
	g := &Gateway{opts: opts, log: opts.Logger, breakers: newBreakers(opts.Breaker, opts.Logger), shuffle: newDraws(opts.Rand)}
	g.pending.log, g.pending.alert = opts.Logger, opts.BudgetAlert
	g.rt.Store(rt)
	g.spend.share(opts.SharedLimits, g.log.WarnContext)
	g.breakers.share(opts.SharedLimits)
	g.shareMemberLimits(opts.SharedLimits)
	if opts.ConversationWrites == WriteBehind && opts.Store != nil {
		g.writer = newTurnWriter(opts.Store, opts.WriteBehindQueue, opts.Logger)
	}
	if err := g.checkGroupMembers(rt.groups); err != nil {
		return nil, err
	}
	if err := g.checkSemantic(); err != nil {
		return nil, err
	}
	if len(opts.Guardrails) > 0 {
		gs, err := buildGuardrails(g, opts.Guardrails)
		if err != nil {
			return nil, err
		}
		g.guardrails = gs
	}
	return g, nil
}

// PendingCharges reports the charges of answered requests that their budget's store did
// not take (it was down, its disk full, PostgreSQL restarting), kept and applied again in
// the background until it does: how many are still pending and what they hold, and how
// many were applied later or lost. Admission counts a key's pending charges as spent.
func (g *Gateway) PendingCharges() PendingChargeStats { return g.pending.stats() }

// Close cuts the background responses under way (they end failed, saying so) and waits for
// them to record their end. It tries once more the charges the store did not take
// (PendingCharges), logging those it still does not as lost. It commits the turns queued
// by WriteBehind and stops the background writer; turns saved afterwards are written
// through. It also waits for the response cache's writes under way (answers made
// afterwards are not cached). It returns ctx's error if ctx ends first (the writers then
// go on in the background). Close the Gateway before its Store.
//
// Close refuses only new background responses (StartBackgroundResponse answers
// ErrGatewayClosed): every other call made after it (chat, messages, responses answered
// at once, embeddings, …) is still served and billed, with its turns written through, its
// answer not cached and a budget charge the store does not take lost rather than kept,
// so that work still finishing while its owner shuts down (a job being handed over, the
// last requests of a draining HTTP server) does not fail. A server stops taking requests
// before it closes its Gateway.
func (g *Gateway) Close(ctx context.Context) error {
	// Background responses under way end failed (their end is written to the store).
	berr := g.bg.close(ctx)
	// Their charges, and those the store did not take before, are tried once more.
	cerr := errors.Join(berr, g.pending.close(ctx), g.cacheWrites.close(ctx))
	if g.writer == nil {
		return cerr
	}
	return errors.Join(g.writer.close(ctx), cerr)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// delay returns the wait before retry number retry (0-based) and whether to wait at all:
// false means the Retry-After is longer than the gateway honours.
func (b Backoff) delay(retry int, retryAfter time.Duration) (time.Duration, bool) {
	if retryAfter > 0 {
		if retryAfter > b.MaxRetryAfter {
			return 0, false
		}
		return retryAfter, true
	}
	d := b.Initial
	for i := 0; i < retry && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if b.Jitter > 0 {
		d -= time.Duration(rand.Float64() * b.Jitter * float64(d))
	}
	return d, true
}

// costsAt prices u, the chat usage of t (a target of request p), as priceAt does.
func (g *Gateway) costsAt(p *plan, t target, u providers.Usage) Costs {
	return priceAt(g, p, t, u, PriceCatalogue.Cost)
}

// priceAt prices a call of t, a target of request p, with price: a method expression of
// the interface a catalogue implements to price the call's operation (Costs{}, price
// unknown, from one that does not). It prices at the catalogue of the routes p started
// with (p.rt), so that a deployment deleted or repriced while its call is under way is
// priced as it was when the call was made, whatever the operation; a model that catalogue
// does not price (a deployment added since, which the request reached in newer routes) is
// priced at the catalogue in force.
func priceAt[Cat, U any](g *Gateway, p *plan, t target, u U, price func(Cat, string, U) providers.Cost) Costs {
	var c Costs
	start := p.rt
	if start != nil {
		if cat, ok := start.prices.(Cat); ok {
			c = costsOf(price(cat, priceNameOf(start.prices, t), u))
		}
	}
	if rt := g.routes(); !c.PriceKnown && rt != start {
		if cat, ok := rt.prices.(Cat); ok {
			return costsOf(price(cat, priceNameOf(rt.prices, t), u))
		}
	}
	return c
}

// priceNameOf is the name the catalogue prices knows t's model by: t.name when prices
// prices it at its own rates (a deployment's, Catalog.OwnPriced), else the base model t's
// provider says it runs (providers.BaseModeler: an Azure OpenAI deployment's, whose name
// is the user's own), else t.name. t's provider is the one the request resolved, not the
// registry's now: a deployment deleted meanwhile (its provider removed) keeps its base model.
func priceNameOf(prices PriceCatalogue, t target) string {
	if o, ok := prices.(interface{ OwnPriced(string) bool }); ok && o.OwnPriced(t.name) {
		return t.name // a deployment's own price (providers.Catalog.WithOwnPrices) is its own
	}
	if _, ok := t.p.(providers.BaseModeler); !ok || t.model == "" {
		return t.name // as the request named it, whatever name the provider gives itself
	}
	return providers.PriceModel(t.p, t.model)
}

// CostAs prices u, the usage of a request naming name, as the gateway could bill the call
// in the catalogue in force (Prices): for a model group, or a deployment's own name
// (Options.DeploymentNames), at its most expensive member for u — the router may send the
// call to any member, so a cost checked against a budget is never under what it will be
// (a fallback to another group aside) — each member priced as the gateway prices its calls
// (a price of its own, a LiteLLM deployment's input_cost_per_token…; an Azure deployment
// by its base model); members without a price are passed over (Known false when none has
// one). Another name is priced as the "provider/model" it stands for (ResolveModel).
func (g *Gateway) CostAs(name string, u providers.Usage) providers.Cost {
	rt := g.routes()
	members := rt.namedMembers(name)
	if grp, ok := rt.groups[name]; ok {
		members = grp.Models
	}
	prices := g.prices()
	if len(members) == 0 {
		full, _ := g.ResolveModel(name)
		return prices.Cost(g.priceName(full), u)
	}
	var most providers.Cost
	for _, m := range members {
		c := prices.Cost(g.priceName(m), u)
		if c.Known && (!most.Known || c.TotalUSD > most.TotalUSD) {
			most = c
		}
	}
	return most
}

// priceName is priceNameOf for model ("provider/model") in the catalogue in force, with
// the provider the registry has now under its name: for what is looked up before a call
// (an image model's family, a model's limits, the deployments listed).
func (g *Gateway) priceName(model string) string {
	prov, m, err := providers.ParseModel(model)
	if err != nil || g.opts.Providers == nil {
		return model
	}
	t := target{name: model, provider: prov, model: m}
	if p, err := g.opts.Providers.Lookup(prov); err == nil {
		t.p = p
	}
	return priceNameOf(g.prices(), t)
}

// BaseModel returns the catalogue model ("provider/model") model ("provider/model") runs,
// as its provider's configuration says: an Azure OpenAI deployment's base model
// (providers.BaseModeler; LiteLLM's model_info.base_model, "azure/{deployment}" when none
// is given), else model itself. Tokens are counted in its tokenizer, as LiteLLM picks
// its tokenizer and price by base_model.
func (g *Gateway) BaseModel(model string) string {
	prov, m, err := providers.ParseModel(model)
	if err != nil || g.opts.Providers == nil {
		return model
	}
	p, err := g.opts.Providers.Lookup(prov)
	if err != nil || p == nil {
		return model
	}
	if _, ok := p.(providers.BaseModeler); !ok {
		return model
	}
	return providers.PriceModel(p, m)
}

// costsOf is a catalogue's price of a call as an answer's Costs.
func costsOf(c providers.Cost) Costs {
	return Costs{InputTokensCost: c.InputUSD, OutputTokensCost: c.OutputUSD, TotalTokensCost: c.TotalUSD, PriceKnown: c.Known, SearchCost: c.SearchUSD}
}

// measured returns the usage u an upstream reported for a call of model
// ("provider/model"), or, when it reported no tokens at all, a local count of the request
// req and the answer (providers.EstimateUsage) and true.
func measured(model string, u providers.Usage, req *providers.Request, answer *providers.Response) (providers.Usage, bool) {
	if u.PromptTokens != 0 || u.CompletionTokens != 0 {
		return u, false
	}
	return providers.EstimateUsage(model, req, answer), true
}

// usageOf is the answer's Usage of u, priced at c.
func usageOf(u providers.Usage, c Costs) Usage {
	return Usage{
		PromptTokens:          u.PromptTokens,
		CompletionTokens:      u.CompletionTokens,
		TotalTokens:           u.PromptTokens + u.CompletionTokens,
		ReasoningTokens:       u.ReasoningTokens,
		CachedTokens:          u.CachedTokens,
		CacheCreationTokens:   u.CacheCreationTokens,
		CacheCreation1hTokens: u.CacheCreation1hTokens,
		WebSearches:           u.WebSearches,
		PromptAudioTokens:     u.PromptAudioTokens,
		CompletionAudioTokens: u.CompletionAudioTokens,
		Costs:                 c,
	}
}

// Models lists the "provider/model" names this gateway can route to with the providers it
// has: for every provider the lookup can list that is configured (has its API key, or
// needs none), the price catalogue's chat models of that provider. Providers the
// catalogue does not cover (a custom OpenAI-compatible endpoint) pass any model name
// through and cannot be enumerated; HasModel still knows them.
func (g *Gateway) Models() []string {
	cat, _ := g.prices().(interface {
		ChatModels(provider string) []string
	})
	if cat == nil {
		return nil
	}
	var out []string
	for _, name := range g.configuredProviders(providers.ServesChat) {
		out = append(out, cat.ChatModels(name)...)
	}
	return out
}

// configuredProviders lists, in the lookup's order, the providers it can list that are
// configured (have their API key, or need none) and that keep accepts.
func (g *Gateway) configuredProviders(keep func(providers.Provider) bool) []string {
	lister, ok := g.opts.Providers.(interface{ Names() []string })
	if !ok {
		return nil
	}
	var out []string
	for _, name := range lister.Names() {
		if p, err := g.opts.Providers.Lookup(name); err == nil && providers.IsConfigured(p) && keep(p) {
			out = append(out, name)
		}
	}
	return out
}

// HasModel reports whether model ("provider/model") can be routed to: listed by Models
// (directly or in another form the provider documents, providers.RoutableAs), or served by
// a configured provider whose models the catalogue does not enumerate.
func (g *Gateway) HasModel(model string) bool {
	prov, m, err := providers.ParseModel(model)
	if err != nil || g.opts.Providers == nil {
		return false
	}
	p, err := g.opts.Providers.Lookup(prov)
	if err != nil || !providers.IsConfigured(p) || !providers.ServesChat(p) {
		return false
	}
	g.indexModels()
	if !g.catalogued[prov] || g.listed[model] || g.wildcardServes(model) {
		return true // listed, a wildcard's, or the catalogue does not enumerate its models
	}
	// The provider's other documented forms of a listed model (Bedrock's leading region,
	// converse/ prefix), or strings no catalogue lists (a Bedrock ARN).
	listed, any := providers.RoutableAs(p, m)
	return any || listed != m && g.listed[prov+"/"+listed]
}

// ResolveModel returns the "provider/model" name stands for on the OpenAI-compatible
// surfaces, and whether it can be routed to (HasModel) and, with Options.ListConfigured,
// is what the configuration serves (a chat request naming it is not refused): name itself
// when it names its provider, a model group or a deployment's own name
// (Options.DeploymentNames), else the one configured provider's
// catalogued model of that name.
func (g *Gateway) ResolveModel(name string) (string, bool) {
	if g.IsModelGroup(name) || g.routes().namedMembers(name) != nil {
		return name, true // a model group (or a deployment's own name) answers for itself
	}
	asked := name
	if !strings.Contains(name, "/") {
		full, _ := g.bareModel(name)
		if full == "" {
			return name, false
		}
		name = full
	} else if full := g.providerWildcard(name); full != "" {
		name = full
	}
	return name, g.HasModel(name) && g.servesAsked(asked, name)
}

// bareModel returns the "provider/model" a model name without a provider stands for: the one
// configured provider whose catalogued chat models include it, else what the first
// wildcard matching it calls (Options.Wildcards: a LiteLLM config's model_name "*"), else
// the configured maker of its family (vendorModel). With several, full is "" and choices
// lists them; with none, both are empty.
func (g *Gateway) bareModel(name string) (full string, choices []string) {
	g.indexModels()
	choices = g.bareIndex[name]
	if len(choices) == 1 {
		return choices[0], nil
	}
	if full := g.wildcardModel(name); full != "" {
		return full, nil
	}
	if len(choices) == 0 {
		return g.vendorModel(name), nil
	}
	return "", choices
}

// vendorFamilies maps model-name prefixes to the provider that makes the family.
var vendorFamilies = []struct{ prefix, provider string }{
	{"claude-", "anthropic"}, {"gpt-", "openai"}, {"chatgpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"},
	{"o4", "openai"}, {"gemini-", "gemini"}, {"ft:gpt-", "openai"}, // OpenAI's fine-tunes
}

// vendorModel is "provider/name" for a name the catalogue does not list (a model newer than
// it, a dated id it lacks) whose family's maker is a configured provider — Claude Code's
// claude-* names reach anthropic, which answers 404 for a name it does not have — or "".
func (g *Gateway) vendorModel(name string) string { return g.familyModel(name, vendorFamilies) }

// familyModel is "provider/name" for the first of families whose prefix name has, when
// that provider is configured, else "".
func (g *Gateway) familyModel(name string, families []struct{ prefix, provider string }) string {
	lower := strings.ToLower(name)
	for _, f := range families {
		if !strings.HasPrefix(lower, f.prefix) {
			continue
		}
		if p, err := g.opts.Providers.Lookup(f.provider); err == nil && p != nil && providers.IsConfigured(p) {
			return f.provider + "/" + name
		}
		return ""
	}
	return ""
}

// indexModels builds, once, what HasModel and bareModel look up: the catalogued models of
// the configured providers (Models) by full and by bare name.
func (g *Gateway) indexModels() {
	g.modelsOnce.Do(func() {
		g.listed, g.catalogued, g.bareIndex = map[string]bool{}, map[string]bool{}, map[string][]string{}
		for _, pm := range g.Models() {
			g.listed[pm] = true
			prov, m, err := providers.ParseModel(pm)
			if err != nil {
				continue
			}
			g.catalogued[prov] = true
			if !strings.Contains(m, "/") {
				g.bareIndex[m] = append(g.bareIndex[m], pm)
			}
		}
	})
}
