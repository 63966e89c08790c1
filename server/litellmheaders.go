package server

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// LiteLLM's response headers of an answer (docs/proxy/response_headers), for the clients and
// dashboards that read them from a LiteLLM proxy.
const (
	headerLiteLLMModelID       = "X-Litellm-Model-Id"
	headerLiteLLMModelAPIBase  = "X-Litellm-Model-Api-Base"
	headerLiteLLMModelGroup    = "X-Litellm-Model-Group"
	headerLiteLLMResponseCost  = "X-Litellm-Response-Cost"
	headerLiteLLMDuration      = "X-Litellm-Response-Duration-Ms"
	headerLiteLLMOverhead      = "X-Litellm-Overhead-Duration-Ms"
	headerLiteLLMRetries       = "X-Litellm-Attempted-Retries"
	headerLiteLLMFallbacks     = "X-Litellm-Attempted-Fallbacks"
	liteLLMExposedHeaderValues = headerLiteLLMModelID + ", " + headerLiteLLMModelAPIBase + ", " + headerLiteLLMModelGroup + ", " +
		headerLiteLLMResponseCost + ", " + headerLiteLLMDuration + ", " + headerLiteLLMOverhead + ", " +
		headerLiteLLMRetries + ", " + headerLiteLLMFallbacks +
		", X-Ratelimit-Limit-Requests, X-Ratelimit-Remaining-Requests, X-Ratelimit-Limit-Tokens, X-Ratelimit-Remaining-Tokens"
)

// setLiteLLMDeploymentHeaders sets the LiteLLM headers that name who answered req: the
// deployment's id (model_info.id, as /model/info lists it), its api_base without
// credentials (when its adapter says) and the model name req asked for (LiteLLM's model
// group: a group's name, else the model named). model is the answering "provider/model",
// askedBy the name its attempt was asked by ("": the group asked; a fallback group's after
// the group asked failed).
func setLiteLLMDeploymentHeaders(w http.ResponseWriter, g *completions.Gateway, req *completions.Request, askedBy, model string) {
	var vals [3]string
	setLiteLLMHeaders(&headerValues{h: w.Header(), vals: vals[:0]}, g, liteLLMGroup(req, ""), askedBy, model)
}

// headerValues sets headers of one value each, every value in one backing array.
type headerValues struct {
	h    http.Header
	vals []string
}

// set sets the header name to v.
func (hv *headerValues) set(name, v string) {
	hv.vals = append(hv.vals, v)
	n := len(hv.vals)
	hv.h[name] = hv.vals[n-1 : n : n]
}

// liteLLMGroup is the model name req asked for: group (the answer's model group) when
// known, else the one model req names.
func liteLLMGroup(req *completions.Request, group string) string {
	if group == "" && len(req.Models) == 1 {
		group = req.Models[0]
	}
	return group
}

// setLiteLLMHeaders is setLiteLLMDeploymentHeaders through hv, for the name asked for
// group and the deployment of model under askedBy (the name it was tried by, a fallback
// group's after the group asked failed; "": group).
func setLiteLLMHeaders(hv *headerValues, g *completions.Gateway, group, askedBy, model string) {
	if group != "" {
		hv.set(headerLiteLLMModelGroup, group)
	}
	if model == "" || model == "/" {
		return
	}
	if askedBy == "" {
		askedBy = group
	}
	hv.set(headerLiteLLMModelID, g.DeploymentIDOf(askedBy, model))
	if base := g.APIBaseOf(model); base != "" {
		hv.set(headerLiteLLMModelAPIBase, base)
	}
}

// setLiteLLMAnswerHeaders sets LiteLLM's headers of a whole answer resp to req received at
// received: those of setLiteLLMDeploymentHeaders, the answer's cost as billed (USD; 0 for
// a cache hit), the time since the request was received and the part of it not spent in
// the upstream calls (LiteLLM's overhead), in milliseconds, and the retries and fallbacks
// its calls made.
func setLiteLLMAnswerHeaders(w http.ResponseWriter, g *completions.Gateway, req *completions.Request, resp *completions.Response, received time.Time) {
	model := resp.Model
	if resp.Provider != "" {
		model = resp.Provider + "/" + resp.Model
	}
	askedBy := ""
	if n := len(resp.Attempts); n > 0 {
		askedBy = resp.Attempts[n-1].ModelGroup
	}
	hv := &headerValues{h: w.Header(), vals: make([]string, 0, 8)}
	setLiteLLMHeaders(hv, g, liteLLMGroup(req, resp.ModelGroup), askedBy, model)
	hv.set(headerLiteLLMResponseCost, strconv.FormatFloat(resp.Usage.Costs.Spent(), 'g', -1, 64))
	total := time.Since(received)
	var upstream time.Duration
	for _, a := range resp.Attempts {
		upstream += time.Duration(a.LatencyMS) * time.Millisecond
	}
	calls, names := liteLLMCalls(resp.Attempts)
	hv.set(headerLiteLLMDuration, strconv.FormatFloat(float64(total.Microseconds())/1000, 'f', 3, 64))
	hv.set(headerLiteLLMOverhead, strconv.FormatFloat(float64(max(total-upstream, 0).Microseconds())/1000, 'f', 3, 64))
	if calls > 0 {
		// LiteLLM's: the calls made again under a name already tried (its router's retries
		// among a group's deployments) and the names tried after the first (its fallbacks).
		hv.set(headerLiteLLMRetries, strconv.Itoa(calls-names))
		hv.set(headerLiteLLMFallbacks, strconv.Itoa(names-1))
	}
}

// setLiteLLMTextHeaders sets LiteLLM's headers of a whole /v1/completions answer: those of
// setLiteLLMAnswerHeaders for the first answer that came (the deployment that answered
// the first prompt), with x-litellm-response-cost the cost of every answer (several
// prompts or choices are billed each).
func setLiteLLMTextHeaders(w http.ResponseWriter, g *completions.Gateway, reqs []*completions.Request, answers [][]*completions.Response, received time.Time) {
	first, total, n := -1, 0.0, 0
	for i, as := range answers {
		for _, a := range as {
			if a == nil {
				continue
			}
			if first < 0 {
				first = i
			}
			total += a.Usage.Costs.Spent()
			n++
		}
	}
	if first < 0 {
		return
	}
	for _, a := range answers[first] {
		if a != nil {
			setLiteLLMAnswerHeaders(w, g, reqs[first], a, received)
			break
		}
	}
	if n > 1 {
		w.Header().Set(headerLiteLLMResponseCost, strconv.FormatFloat(total, 'g', -1, 64))
	}
}

// liteLLMCalls counts attempts as LiteLLM's router would have made them: calls, and the
// names they were made under (the first and its fallbacks). A model skipped without a call
// (its breaker open, its limit reached) and a hedged start that lost the race (LiteLLM
// does not hedge) are none; a mock failure (mock_testing_fallbacks) made no call but
// stands for the failed name, once, as LiteLLM's router raises it once for the group.
func liteLLMCalls(attempts []completions.Attempt) (calls, names int) {
	called := func(a completions.Attempt) bool {
		return !a.Started.IsZero() && !a.LostHedge() || a.Outcome == completions.OutcomeOK || a.Mock
	}
	for i, a := range attempts {
		if !called(a) {
			continue
		}
		seen := slices.ContainsFunc(attempts[:i], func(b completions.Attempt) bool { return b.ModelGroup == a.ModelGroup && called(b) })
		if a.Mock && seen {
			continue
		}
		calls++
		if !seen {
			names++
		}
	}
	return calls, names
}
