package server

import (
	"net/http"
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
	liteLLMExposedHeaderValues = headerLiteLLMModelID + ", " + headerLiteLLMModelAPIBase + ", " + headerLiteLLMModelGroup + ", " +
		headerLiteLLMResponseCost + ", " + headerLiteLLMDuration + ", " + headerLiteLLMOverhead +
		", X-Ratelimit-Limit-Requests, X-Ratelimit-Remaining-Requests"
)

// setLiteLLMDeploymentHeaders sets the LiteLLM headers that name who answered req: the
// deployment's id (model_info.id, as /model/info lists it), its api_base without
// credentials (when its adapter says) and the model name req asked for (LiteLLM's model
// group: a group's name, else the model named). model is the answering "provider/model".
func setLiteLLMDeploymentHeaders(w http.ResponseWriter, g *completions.Gateway, req *completions.Request, group, model string) {
	var vals [3]string
	setLiteLLMHeaders(w.Header(), vals[:0], g, req, group, model)
}

// setLiteLLMHeaders is setLiteLLMDeploymentHeaders into h, the values appended to vals
// first (one backing array for every header's value, the answer's other ones after them).
func setLiteLLMHeaders(h http.Header, vals []string, g *completions.Gateway, req *completions.Request, group, model string) []string {
	set := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if group == "" && len(req.Models) == 1 {
		group = req.Models[0]
	}
	if group != "" {
		set(headerLiteLLMModelGroup, group)
	}
	if model == "" || model == "/" {
		return vals
	}
	set(headerLiteLLMModelID, g.DeploymentIDOf(group, model))
	if base := g.APIBaseOf(model); base != "" {
		set(headerLiteLLMModelAPIBase, base)
	}
	return vals
}

// setLiteLLMAnswerHeaders sets LiteLLM's headers of a whole answer resp to req received at
// received: those of setLiteLLMDeploymentHeaders, the answer's cost as billed (USD; 0 for
// a cache hit), the time since the request was received and the part of it not spent in
// the upstream calls (LiteLLM's overhead), in milliseconds.
func setLiteLLMAnswerHeaders(w http.ResponseWriter, g *completions.Gateway, req *completions.Request, resp *completions.Response, received time.Time) {
	model := resp.Model
	if resp.Provider != "" {
		model = resp.Provider + "/" + resp.Model
	}
	h := w.Header()
	vals := setLiteLLMHeaders(h, make([]string, 0, 6), g, req, resp.ModelGroup, model)
	set := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set(headerLiteLLMResponseCost, strconv.FormatFloat(resp.Usage.Costs.Spent(), 'g', -1, 64))
	total := time.Since(received)
	var upstream time.Duration
	for _, a := range resp.Attempts {
		upstream += time.Duration(a.LatencyMS) * time.Millisecond
	}
	set(headerLiteLLMDuration, strconv.FormatFloat(float64(total.Microseconds())/1000, 'f', 3, 64))
	set(headerLiteLLMOverhead, strconv.FormatFloat(float64(max(total-upstream, 0).Microseconds())/1000, 'f', 3, 64))
}
