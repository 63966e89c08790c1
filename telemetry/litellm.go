package telemetry

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// LiteLLMOptions configure the metrics under LiteLLM's names (EnableLiteLLM).
type LiteLLMOptions struct {
	// StatusOf is the HTTP status a failed request was answered with (serve passes
	// server.ErrorStatus); nil: an upstream failure's own status, else 500.
	StatusOf func(error) int
	// DeploymentID is LiteLLM's model_id of the deployment of model under modelGroup (serve
	// passes completions.Gateway.DeploymentIDOf); nil: completions.DeploymentID.
	DeploymentID func(modelGroup, model string) string
	// Models maps a "provider/model" whose provider is an entry of its deployment's own (a
	// LiteLLM config's deployment with its api_base or api_key:
	// "hosted-vllm-llama-1a2b3c4d/my-llama") to the model as the config names it
	// ("hosted_vllm/my-llama"), for the model, litellm_model_name and api_provider labels and
	// exception_class; the others are their own. Read only.
	Models map[string]string
	// BreakerStates are the models whose circuit breaker is open or half-open (serve passes
	// completions.Gateway.BreakerStates): a deployment of a model whose breaker is open reads
	// litellm_deployment_state 2 (LiteLLM's complete outage, its cooldown). nil: none.
	BreakerStates func() map[string]string
	// EndUser puts the request's end user (its OpenAI `user`) in the end_user label, as
	// LiteLLM's litellm_settings.enable_end_user_cost_tracking_prometheus_only does; off,
	// the label is empty, as LiteLLM leaves it by default (every end user would otherwise
	// be a series of its own in each metric). The first MaxEndUserLabels distinct end users
	// take a value of their own; later ones read "other".
	EndUser bool
	// AccountExists reports whether the virtual key ("key") or team ("team") id of owner
	// (RequestRecord.Owner) still exists (serve passes server.BudgetAccountExists of its
	// store): the budget gauges of one deleted are dropped once it has been
	// idle a minute (checked at scrape time; an error keeps them). nil: never dropped.
	AccountExists func(ctx context.Context, kind, owner, id string) (bool, error)
}

// MaxEndUserLabels bounds the distinct end_user label values of the metrics under LiteLLM's
// names (LiteLLMOptions.EndUser): end users past the first MaxEndUserLabels seen read
// "other", so a caller naming a new user in each request cannot grow the series without
// end.
const MaxEndUserLabels = 100

// liteLLMBuckets are LiteLLM's latency buckets (seconds).
var liteLLMBuckets = []float64{0.005, 0.00625, 0.0125, 0.025, 0.05, 0.1, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5,
	9, 9.5, 10, 15, 20, 25, 30, 60, 120, 180, 240, 300}

// The label values of one request, in LiteLLM's label names.
const (
	lEndUser = iota
	lKeyHash
	lKeyAlias
	lTeam
	lTeamAlias
	lUser
	lUserEmail
	lRequested
	lModel
	lModelID
	lRoute
	lClientIP
	lUserAgent
	lStatus
	lExcStatus
	lExcClass
	lLiteLLMModel
	lAPIBase
	lProvider
	lOwner
	nLabels
)

var liteLLMLabelNames = [nLabels]string{"end_user", "hashed_api_key", "api_key_alias", "team", "team_alias", "user", "user_email",
	"requested_model", "model", "model_id", "route", "client_ip", "user_agent", "status_code", "exception_status", "exception_class",
	"litellm_model_name", "api_base", "api_provider", "owner"}

// Each metric's labels in LiteLLM's order (litellm/types/integrations/prometheus.py).
var (
	llProxyTotal  = []int{lEndUser, lKeyHash, lKeyAlias, lRequested, lTeam, lTeamAlias, lUser, lStatus, lUserEmail, lRoute, lClientIP, lUserAgent, lModelID}
	llProxyFailed = []int{lEndUser, lKeyHash, lKeyAlias, lRequested, lTeam, lTeamAlias, lUser, lUserEmail, lExcStatus, lExcClass, lRoute, lClientIP, lUserAgent, lModelID}
	llReqLatency  = []int{lEndUser, lKeyHash, lKeyAlias, lRequested, lTeam, lTeamAlias, lUser, lModel, lModelID}
	llAPILatency  = []int{lModel, lKeyHash, lKeyAlias, lTeam, lTeamAlias, lRequested, lEndUser, lUser, lModelID}
	llSpend       = []int{lEndUser, lKeyHash, lKeyAlias, lModel, lTeam, lTeamAlias, lUser, lUserEmail, lClientIP, lUserAgent, lModelID}
	llTokens      = []int{lEndUser, lKeyHash, lKeyAlias, lModel, lTeam, lTeamAlias, lUser, lUserEmail, lRequested, lModelID}
	llPerToken    = []int{lLiteLLMModel, lModelID, lAPIBase, lProvider, lKeyHash, lKeyAlias, lTeam, lTeamAlias}
	llDepState    = []int{lLiteLLMModel, lModelID, lAPIBase, lProvider}
	llDepFailure  = []int{lRequested, lLiteLLMModel, lModelID, lAPIBase, lProvider, lExcStatus, lExcClass, lKeyHash, lKeyAlias, lTeam, lTeamAlias, lClientIP, lUserAgent}
	llDepTotal    = []int{lRequested, lLiteLLMModel, lModelID, lAPIBase, lProvider, lKeyHash, lKeyAlias, lTeam, lTeamAlias, lClientIP, lUserAgent}
)

// liteLLMLabels are the label indexes of each metric under LiteLLM's names but
// litellm_deployment_state, in their order.
type liteLLMLabels struct {
	proxyTotal, proxyFailed, reqLatency, apiLatency, spend, tokens, perToken, depFailure, depTotal []int
}

// newLiteLLMLabels are LiteLLM's labels of each metric, with byOwner an "owner" label after
// them in each that has a team label: a team id is its owner's choice, so two owners' teams
// may share one ("eng"), and without it their requests, spend and tokens add up in one
// series.
func newLiteLLMLabels(byOwner bool) liteLLMLabels {
	own := func(idx []int) []int {
		if !byOwner || !slices.Contains(idx, lTeam) {
			return idx
		}
		return append(idx[:len(idx):len(idx)], lOwner)
	}
	return liteLLMLabels{proxyTotal: own(llProxyTotal), proxyFailed: own(llProxyFailed), reqLatency: own(llReqLatency), apiLatency: own(llAPILatency),
		spend: own(llSpend), tokens: own(llTokens), perToken: own(llPerToken), depFailure: own(llDepFailure), depTotal: own(llDepTotal)}
}

// liteLLMMetrics are the metrics under LiteLLM's names (EnableLiteLLM).
type liteLLMMetrics struct {
	opts LiteLLMOptions
	// labels are each metric's labels: LiteLLM's, with "owner" after them where they
	// name a team (Options.OwnerLabel).
	labels liteLLMLabels
	// byOwner sets the owner label (Options.OwnerLabel).
	byOwner bool
	// endUsers bounds the end_user values (LiteLLMOptions.EndUser).
	endUsers *labelSet

	proxyTotal, proxyFailed, spend, totalTokens, inputTokens, outputTokens *prometheus.CounterVec
	reqLatency, apiLatency, ttft, perToken                                 *prometheus.HistogramVec
	depSuccess, depFailure, depTotal                                       *prometheus.CounterVec
	depState                                                               *deploymentStates
	budgets                                                                *budgetGauges
}

// deploymentStates is litellm_deployment_state: each deployment's state after its last call
// (0 healthy, 1 failed), read as 2 at scrape time while its model's breaker is open.
type deploymentStates struct {
	breakers func() map[string]string
	mu       sync.Mutex
	last     map[[4]string]deploymentState // by the labels in llDepState's order
}

type deploymentState struct {
	model string // the "provider/model" its breaker is known by
	value float64
}

var deploymentStateDesc = prometheus.NewDesc("litellm_deployment_state",
	"LLM Deployment Analytics - The state of the deployment: 0 = healthy, 1 = partial outage (its last call failed), 2 = complete outage (its circuit breaker is open)",
	names(llDepState), nil)

func (d *deploymentStates) set(labels [4]string, model string, v float64) {
	d.mu.Lock()
	d.last[labels] = deploymentState{model, v}
	d.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (d *deploymentStates) Describe(ch chan<- *prometheus.Desc) { ch <- deploymentStateDesc }

// Collect implements prometheus.Collector.
func (d *deploymentStates) Collect(ch chan<- prometheus.Metric) {
	var open map[string]string
	if d.breakers != nil {
		open = d.breakers()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for l, s := range d.last {
		v := s.value
		if open[s.model] == completions.BreakerOpen {
			v = 2
		}
		ch <- prometheus.MustNewConstMetric(deploymentStateDesc, prometheus.GaugeValue, v, l[0], l[1], l[2], l[3])
	}
}

func names(idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = liteLLMLabelNames[j]
	}
	return out
}

// EnableLiteLLM adds the metrics LiteLLM's Prometheus callback serves, under its names and
// label names, fed by the same request records as the gateway's own (ObserveRequest):
// litellm_proxy_total_requests_metric_total, litellm_proxy_failed_requests_metric_total,
// litellm_spend_metric_total, litellm_total_tokens_metric_total,
// litellm_input_tokens_metric_total, litellm_output_tokens_metric_total,
// litellm_request_total_latency_metric, litellm_llm_api_latency_metric,
// litellm_llm_api_time_to_first_token_metric, litellm_deployment_state,
// litellm_deployment_success_responses_total, litellm_deployment_failure_responses_total,
// litellm_deployment_total_requests_total, litellm_deployment_latency_per_output_token and
// the budget gauges of virtual keys and teams (litellm_remaining_api_key_budget_metric,
// litellm_api_key_max_budget_metric, litellm_api_key_budget_remaining_hours_metric,
// litellm_remaining_team_budget_metric, litellm_team_max_budget_metric,
// litellm_team_budget_remaining_hours_metric), which a key or team has once a request of
// it was charged (RequestRecord.Accounts). hashed_api_key is the virtual key's id (what
// /key/info answers as token), api_key_alias and team_alias its and its team's names
// (RequestRecord.KeyAlias, TeamAlias); the labels Switchyard does not know (user_email,
// route, client_ip, user_agent) are empty, as LiteLLM leaves a label it has no value for.
// With Options.OwnerLabel every metric with a team label has an "owner" label after
// LiteLLM's (a team id is its owner's choice: two owners' teams may share one).
// Call it once, before requests are served; without it none of these series exist.
func (m *Metrics) EnableLiteLLM(opts LiteLLMOptions) {
	l := &liteLLMMetrics{opts: opts, endUsers: newLabelSet(MaxEndUserLabels), labels: newLiteLLMLabels(m.opts.OwnerLabel), byOwner: m.opts.OwnerLabel}
	counter := func(name, help string, idx []int) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, names(idx))
	}
	histogram := func(name, help string, idx []int, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, names(idx))
	}
	l.proxyTotal = counter("litellm_proxy_total_requests_metric_total", "Total number of requests made to the proxy server - track number of client side requests", l.labels.proxyTotal)
	l.proxyFailed = counter("litellm_proxy_failed_requests_metric_total", "Total number of failed responses from proxy - the client did not get a success response from the proxy", l.labels.proxyFailed)
	l.spend = counter("litellm_spend_metric_total", "Total spend on LLM requests (USD, from the price catalogue)", l.labels.spend)
	l.totalTokens = counter("litellm_total_tokens_metric_total", "Total number of input + output tokens from LLM requests", l.labels.tokens)
	l.inputTokens = counter("litellm_input_tokens_metric_total", "Total number of input tokens from LLM requests", l.labels.tokens)
	l.outputTokens = counter("litellm_output_tokens_metric_total", "Total number of output tokens from LLM requests", l.labels.tokens)
	l.reqLatency = histogram("litellm_request_total_latency_metric", "Total latency (seconds) for a request to the proxy", l.labels.reqLatency, liteLLMBuckets)
	l.apiLatency = histogram("litellm_llm_api_latency_metric", "Total latency (seconds) for a models LLM API call", l.labels.apiLatency, liteLLMBuckets)
	l.ttft = histogram("litellm_llm_api_time_to_first_token_metric", "Time to first token for a models LLM API call (streams)", l.labels.apiLatency, liteLLMBuckets)
	l.perToken = histogram("litellm_deployment_latency_per_output_token", "LLM Deployment Analytics - Latency per output token", l.labels.perToken, prometheus.DefBuckets)
	l.depSuccess = counter("litellm_deployment_success_responses_total", "LLM Deployment Analytics - Total number of successful LLM API calls", l.labels.depTotal)
	l.depFailure = counter("litellm_deployment_failure_responses_total", "LLM Deployment Analytics - Total number of failed LLM API calls for a specific LLM deployment. exception_status is the status of the exception from the llm api", l.labels.depFailure)
	l.depTotal = counter("litellm_deployment_total_requests_total", "LLM Deployment Analytics - Total number of LLM API calls - success + failure", l.labels.depTotal)
	l.depState = &deploymentStates{breakers: opts.BreakerStates, last: map[[4]string]deploymentState{}}
	l.budgets = newBudgetGauges(opts.AccountExists, m.opts.OwnerLabel)
	m.reg.MustRegister(l.proxyTotal, l.proxyFailed, l.spend, l.totalTokens, l.inputTokens, l.outputTokens, l.reqLatency, l.apiLatency, l.ttft,
		l.perToken, l.depSuccess, l.depFailure, l.depTotal, l.depState, l.budgets)
	m.litellm.Store(l)
}

// pick fills dst with v's values at idx.
func pick(dst []string, v *[nLabels]string, idx []int) []string {
	dst = dst[:0]
	for _, i := range idx {
		dst = append(dst, v[i])
	}
	return dst
}

// observe records r under LiteLLM's names.
func (l *liteLLMMetrics) observe(m *Metrics, r completions.RequestRecord) {
	l.budgets.observe(&r) // a charge stands whoever left
	ok := r.Outcome == completions.RequestOK
	billed := r.Usage.PromptTokens > 0 || r.Usage.CompletionTokens > 0 || r.Usage.Costs.Spent() > 0
	// A request the server's own shutdown cut was answered a 503 (or a stream's error
	// event): a failure its client saw, unlike one whose client left.
	cut := r.Outcome == completions.RequestCancelled && r.CutBy != nil
	if r.Outcome == completions.RequestCancelled && !billed && !cut {
		return // the client left before anything was billed
	}
	var v [nLabels]string
	var buf [16]string
	v[lKeyHash], v[lTeam], v[lUser] = r.KeyID, r.TeamID, r.UserID
	v[lKeyAlias], v[lTeamAlias] = r.KeyAlias, r.TeamAlias
	if l.byOwner {
		v[lOwner] = m.owners.value(r.Owner, nil) // the switchyard_* series' owner values
	}
	if l.opts.EndUser && r.EndUser != "" {
		v[lEndUser] = l.endUsers.value(r.EndUser, nil)
	}
	v[lRequested] = m.requestedLabel(&r, ok)
	answered, answeredGroup := r.Model, r.ModelGroup
	if n := len(r.Attempts); n > 0 && answered == "" {
		answered = r.Attempts[n-1].Model
	}
	for i := len(r.Attempts) - 1; i >= 0; i-- {
		if r.Attempts[i].Model == answered {
			answeredGroup = askedBy(r, r.Attempts[i])
			break
		}
	}
	if answered != "" {
		v[lModel] = m.modelLabelAs(l.name(answered), answered, ok)
		v[lModelID] = l.deploymentID(answeredGroup, answered)
	}
	if v[lRequested] == otherLabel || v[lModel] == otherLabel {
		// A name that reads "other" (one a caller made up) would otherwise still make a
		// series of its own through its deployment's id.
		v[lModelID] = otherLabel
	}
	if ok || billed {
		// The spend and tokens of an answer, and what a request that ended without one was
		// billed (a stream cut midway, its client gone, an answer a guardrail blocked): the
		// key's spend counts them, so the spend metric does too.
		l.spend.WithLabelValues(pick(buf[:], &v, l.labels.spend)...).Add(r.Usage.Costs.Spent())
		in, out := float64(r.Usage.PromptTokens), float64(r.Usage.CompletionTokens)
		tok := pick(buf[:], &v, l.labels.tokens)
		l.totalTokens.WithLabelValues(tok...).Add(in + out)
		l.inputTokens.WithLabelValues(tok...).Add(in)
		l.outputTokens.WithLabelValues(tok...).Add(out)
	}
	if r.Outcome == completions.RequestCancelled && !cut {
		return // the client left: it was answered nothing, neither success nor failure
	}
	if ok {
		v[lStatus] = "200"
		l.proxyTotal.WithLabelValues(pick(buf[:], &v, l.labels.proxyTotal)...).Inc()
		l.reqLatency.WithLabelValues(pick(buf[:], &v, l.labels.reqLatency)...).Observe(r.Latency.Seconds())
		if r.Stream && r.TTFT > 0 {
			l.ttft.WithLabelValues(pick(buf[:], &v, l.labels.apiLatency)...).Observe(r.TTFT.Seconds())
		}
		if n := len(r.Attempts); n > 0 && r.Attempts[n-1].Outcome == completions.OutcomeOK {
			l.apiLatency.WithLabelValues(pick(buf[:], &v, l.labels.apiLatency)...).Observe(float64(r.Attempts[n-1].LatencyMS) / 1000)
		}
	} else if cut {
		// The server's 503 asking to retry: LiteLLM's class for it, without a provider's
		// prefix as the proxy's own (an upstream's 503 reads "Openai.ServiceUnavailableError").
		v[lStatus] = "503"
		v[lExcStatus] = v[lStatus]
		v[lExcClass] = "ServiceUnavailableError"
		l.proxyFailed.WithLabelValues(pick(buf[:], &v, l.labels.proxyFailed)...).Inc()
		l.proxyTotal.WithLabelValues(pick(buf[:], &v, l.labels.proxyTotal)...).Inc()
	} else {
		status := l.status(r.Err)
		if status == 401 {
			return // LiteLLM leaves requests with an invalid key out of its metrics
		}
		// status_code is the failure's status even for a stream whose 200 was sent before
		// it failed (an error event after it), as LiteLLM's post_call_failure_hook labels it,
		// so that dashboards built on status_code count it as a failure.
		v[lStatus] = strconv.Itoa(status)
		v[lExcStatus] = v[lStatus]
		v[lExcClass] = exceptionClass(r.Err, status, l.provider(answered))
		l.proxyFailed.WithLabelValues(pick(buf[:], &v, l.labels.proxyFailed)...).Inc()
		l.proxyTotal.WithLabelValues(pick(buf[:], &v, l.labels.proxyTotal)...).Inc()
	}
	// The deployments called: one LiteLLM "LLM API call" per attempt.
	baseModel := answered
	for i, a := range r.Attempts {
		if (a.Started.IsZero() || a.LostHedge()) && a.Outcome != completions.OutcomeOK {
			continue // skipped without a call (its breaker open, its limit reached), or a lost hedge
		}
		if callerLeft(a) || cutAtShutdown(a) {
			// The client went away, or the server's own shutdown cut the call, while this
			// deployment worked: LiteLLM counts no deployment failure for a disconnect, and
			// the deployment did not fail.
			continue
		}
		v[lLiteLLMModel] = m.modelLabelAs(l.name(a.Model), a.Model, a.Outcome == completions.OutcomeOK)
		v[lModelID] = otherLabel
		if v[lLiteLLMModel] != otherLabel {
			v[lModelID] = l.deploymentID(askedBy(r, a), a.Model)
		}
		v[lProvider] = l.provider(a.Model)
		v[lAPIBase] = ""
		if a.Model == baseModel {
			v[lAPIBase] = r.APIBase
		}
		state := 0.0
		if a.Outcome == completions.OutcomeOK {
			l.depSuccess.WithLabelValues(pick(buf[:], &v, l.labels.depTotal)...).Inc()
			// LiteLLM's per-token latency: a stream's time to first token, else the call's.
			lat := time.Duration(a.LatencyMS) * time.Millisecond
			if r.Stream && r.TTFT > 0 && i == len(r.Attempts)-1 {
				lat = r.TTFT
			}
			if out := r.Usage.CompletionTokens; out > 0 && i == len(r.Attempts)-1 {
				l.perToken.WithLabelValues(pick(buf[:], &v, l.labels.perToken)...).Observe(lat.Seconds() / float64(out))
			}
		} else {
			state = 1
			status := attemptStatus(a.Err)
			v[lExcStatus], v[lExcClass] = "", ""
			if status != 0 {
				v[lExcStatus] = strconv.Itoa(status)
			}
			v[lExcClass] = exceptionClass(a.Err, status, v[lProvider])
			l.depFailure.WithLabelValues(pick(buf[:], &v, l.labels.depFailure)...).Inc()
		}
		l.depTotal.WithLabelValues(pick(buf[:], &v, l.labels.depTotal)...).Inc()
		l.depState.set([4]string{v[lLiteLLMModel], v[lModelID], v[lAPIBase], v[lProvider]}, a.Model, state)
	}
}

// callerLeft reports whether attempt a ended because its caller went away (Kind
// "client_gone": a client that disconnected; "closed_early": one that closed the stream
// before its end) rather than because its deployment failed.
func callerLeft(a completions.Attempt) bool {
	return a.Outcome == completions.OutcomeCancelled && (a.Kind == "client_gone" || a.Kind == "closed_early")
}

// cutAtShutdown reports whether attempt a was cut by the server itself (Kind "cut": its
// graceful shutdown's timeout ran out, server.ErrShuttingDown) while its deployment
// worked — no fault of the deployment's.
func cutAtShutdown(a completions.Attempt) bool {
	return a.Outcome == completions.OutcomeCancelled && a.Kind == "cut"
}

// askedBy is the model group a's deployment belongs to: the one it was tried under (a
// fallback group's, after the request's group failed), else the request's.
func askedBy(r completions.RequestRecord, a completions.Attempt) string {
	if a.ModelGroup != "" {
		return a.ModelGroup
	}
	return r.ModelGroup
}

// name is model as LiteLLM names it.
func (l *liteLLMMetrics) name(model string) string {
	if n, ok := l.opts.Models[model]; ok {
		return n
	}
	return model
}

// provider is model's provider as LiteLLM names it.
func (l *liteLLMMetrics) provider(model string) string {
	p, _, _ := strings.Cut(l.name(model), "/")
	return p
}

func (l *liteLLMMetrics) deploymentID(group, model string) string {
	if l.opts.DeploymentID != nil {
		return l.opts.DeploymentID(group, model)
	}
	if group == "" {
		group = model
	}
	return completions.DeploymentID(group, model)
}

// status is the HTTP status a failed request was answered with.
func (l *liteLLMMetrics) status(err error) int {
	if l.opts.StatusOf != nil {
		if s := l.opts.StatusOf(err); s != 0 {
			return s
		}
	}
	if s := attemptStatus(err); s != 0 {
		return s
	}
	return 500
}

// attemptStatus is an upstream failure's HTTP status (0: none, or not an upstream's).
func attemptStatus(err error) int {
	var pe *providers.Error
	if errors.As(err, &pe) {
		return pe.StatusCode
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return 408
	}
	return 0
}

// exceptionClass is LiteLLM's exception_class for a failure: the OpenAI SDK exception it
// would have raised for the status, after the provider of the upstream that failed
// ("Openai.RateLimitError") when the failure is an upstream's; provider is the failed
// model's provider as LiteLLM names it.
func exceptionClass(err error, status int, provider string) string {
	var class string
	var cf *completions.ContentFilterError
	switch {
	case errors.As(err, &cf):
		class = "ContentPolicyViolationError"
	case errors.Is(err, completions.ErrBudgetExceeded):
		class = "BudgetExceededError"
	case errors.Is(err, context.DeadlineExceeded) || status == 408 || status == 504:
		class = "Timeout"
	case status == 400:
		class = "BadRequestError"
	case status == 401:
		class = "AuthenticationError"
	case status == 403:
		class = "PermissionDeniedError"
	case status == 404:
		class = "NotFoundError"
	case status == 422:
		class = "UnprocessableEntityError"
	case status == 429:
		class = "RateLimitError"
	case status == 503:
		class = "ServiceUnavailableError"
	case status == 0 || status == 502:
		class = "APIConnectionError"
	default:
		class = "InternalServerError"
	}
	var pe *providers.Error
	if provider != "" && errors.As(err, &pe) {
		return strings.ToUpper(provider[:1]) + provider[1:] + "." + class
	}
	return class
}
