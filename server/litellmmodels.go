package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
)

// LiteLLM's proxy describes its deployments at GET /model/info (and /v1/model/info) and its
// model names at GET /model_group/info, and checks them at GET /health; its admin UI,
// scripts and SDK call these. The routes here answer them from what the gateway routes to
// (completions.Gateway.Deployments: the model groups' members under the groups' names, then
// the models GET /v1/models lists) and the price catalogue. As on LiteLLM, any key may read
// the model info, and a key limited to some models (a virtual key) sees only those, as GET
// /v1/models shows it; the health check, which makes a real request of every deployment, is
// for the operator's keys only (LiteLLM lets any key call it, but then checks every
// deployment whatever the key's models, so a key limited to one model could make the proxy
// call, and learn about, all the others).

// DefaultModelHealthTimeout is Config.ModelHealthTimeout's default: LiteLLM's
// HEALTH_CHECK_TIMEOUT_SECONDS.
const DefaultModelHealthTimeout = 60 * time.Second

// DefaultModelHealthConcurrency is Config.ModelHealthConcurrency's default.
const DefaultModelHealthConcurrency = 8

// litellmModelPath reports LiteLLM's model info, model management (/model/new, …) and
// health check paths (answered in its error envelope).
func litellmModelPath(path string) bool {
	return strings.HasPrefix(path, "/model/") || path == "/model_group/info" || path == "/health"
}

// litellmModelInfoList is LiteLLM's /model/info answer.
type litellmModelInfoList struct {
	Data []litellmDeployment `json:"data"`
}

// litellmDeployment is one deployment as LiteLLM's /model/info shows it.
type litellmDeployment struct {
	ModelName     string                  `json:"model_name" jsonschema:"description=The name clients send: a model group's or provider/model"`
	LiteLLMParams litellmDeploymentParams `json:"litellm_params"`
	ModelInfo     litellmDeploymentInfo   `json:"model_info"`
}

// litellmDeploymentParams is a deployment's litellm_params without secrets.
type litellmDeploymentParams struct {
	Model   string   `json:"model" jsonschema:"description=The provider/model the deployment calls"`
	APIBase string   `json:"api_base,omitempty" jsonschema:"description=The provider's endpoint root without credentials (user info and query removed)"`
	Tags    []string `json:"tags,omitempty" jsonschema:"description=The deployment's tags (config.yaml's litellm_params.tags): with router_settings.enable_tag_filtering a request's tags select the deployments of its model group carrying them"`
	// MemberParams are the deployment's default request parameters (temperature,
	// max_tokens…), sent when a request leaves them unset.
	completions.MemberParams
	TagRegex []string `json:"tag_regex,omitempty" jsonschema:"description=The deployment's tag patterns (config.yaml's litellm_params.tag_regex): with router_settings.enable_tag_filtering a caller whose User-Agent one matches (searched in 'User-Agent: <value>') is routed to it"`
}

// litellmDeploymentInfo is a deployment's model_info: the catalogue's entry for its model
// (null where the catalogue gives nothing).
type litellmDeploymentInfo struct {
	ID                          string   `json:"id" jsonschema:"description=The deployment's id: the same on every replica and restart (litellm_model_id filters on it)"`
	DBModel                     bool     `json:"db_model" jsonschema:"description=True for a deployment added through POST /model/new (kept in the store); false for one of the server's configuration"`
	Key                         *string  `json:"key" jsonschema:"description=The price catalogue's key for the model (null: not catalogued)"`
	Mode                        string   `json:"mode" jsonschema:"enum=chat,enum=embedding,enum=rerank"`
	LiteLLMProvider             string   `json:"litellm_provider" jsonschema:"description=The provider prefix of the model"`
	InputCostPerToken           *float64 `json:"input_cost_per_token" jsonschema:"description=USD per prompt token"`
	OutputCostPerToken          *float64 `json:"output_cost_per_token" jsonschema:"description=USD per output token"`
	CacheReadInputTokenCost     *float64 `json:"cache_read_input_token_cost" jsonschema:"description=USD per cached prompt token read"`
	CacheCreationInputTokenCost *float64 `json:"cache_creation_input_token_cost" jsonschema:"description=USD per prompt token written to the cache"`
	OutputCostPerReasoningToken *float64 `json:"output_cost_per_reasoning_token" jsonschema:"description=USD per reasoning token"`
	InputCostPerQuery           *float64 `json:"input_cost_per_query,omitempty" jsonschema:"description=USD per rerank query (rerank models priced by the query)"`
	MaxTokens                   *int     `json:"max_tokens" jsonschema:"description=The longest answer in tokens (as max_output_tokens)"`
	MaxInputTokens              *int     `json:"max_input_tokens"`
	MaxOutputTokens             *int     `json:"max_output_tokens"`
	SupportsFunctionCalling     bool     `json:"supports_function_calling"`
	SupportsVision              bool     `json:"supports_vision"`
	SupportsReasoning           bool     `json:"supports_reasoning"`
	SupportsWebSearch           bool     `json:"supports_web_search"`
	// Error says why a stored deployment is not served (absent for one that is).
	Error string `json:"error,omitempty" jsonschema:"description=Present only on a stored deployment (db_model) that is not served: why (its sealed api_key cannot be unsealed: LITELLM_SALT_KEY changed); POST /model/update with a new api_key mends it"`
}

// litellmModelGroupList is LiteLLM's /model_group/info answer.
type litellmModelGroupList struct {
	Data []litellmModelGroup `json:"data"`
}

// litellmModelGroup is one model name as LiteLLM's /model_group/info shows it: its
// deployments' figures folded (the largest limits and rates; a capability any of them has).
type litellmModelGroup struct {
	ModelGroup              string   `json:"model_group" jsonschema:"description=The name clients send"`
	Providers               []string `json:"providers" jsonschema:"description=The providers of its deployments"`
	Mode                    string   `json:"mode" jsonschema:"enum=chat,enum=embedding,enum=rerank"`
	MaxInputTokens          *int     `json:"max_input_tokens"`
	MaxOutputTokens         *int     `json:"max_output_tokens"`
	InputCostPerToken       *float64 `json:"input_cost_per_token"`
	OutputCostPerToken      *float64 `json:"output_cost_per_token"`
	TPM                     *int     `json:"tpm" jsonschema:"description=Always null: deployments have no token rate of their own here"`
	RPM                     *int     `json:"rpm" jsonschema:"description=Always null: deployments have no request rate of their own here"`
	SupportsFunctionCalling bool     `json:"supports_function_calling"`
	SupportsVision          bool     `json:"supports_vision"`
	SupportsReasoning       bool     `json:"supports_reasoning"`
	SupportsWebSearch       bool     `json:"supports_web_search"`
}

// litellmHealth is LiteLLM's /health answer.
type litellmHealth struct {
	HealthyEndpoints   []litellmEndpoint `json:"healthy_endpoints"`
	UnhealthyEndpoints []litellmEndpoint `json:"unhealthy_endpoints"`
	HealthyCount       int               `json:"healthy_count"`
	UnhealthyCount     int               `json:"unhealthy_count"`
	// CheckedAt is when the checks answered were taken: now for a live check, the latest
	// round's end with serve --model-health-interval (absent before the first one ended).
	CheckedAt *time.Time `json:"checked_at,omitempty" jsonschema:"description=When these results were taken (RFC 3339): the end of the latest background round (serve --model-health-interval) or of this request's own check; absent before the first background round has ended"`
}

// litellmEndpoint is one checked deployment: its litellm_params without secrets and, when it
// failed, why.
type litellmEndpoint struct {
	Model     string `json:"model" jsonschema:"description=The provider/model checked"`
	APIBase   string `json:"api_base,omitempty"`
	ModelName string `json:"model_name" jsonschema:"description=The name clients send for it"`
	ModelID   string `json:"model_id" jsonschema:"description=The deployment's id (as /model/info's model_info.id)"`
	Error     string `json:"error,omitempty" jsonschema:"description=Why the check failed (unhealthy endpoints only)"`
}

// visibleDeployments are g's deployments r's key may call (all of them for an operator key).
func visibleDeployments(g *completions.Gateway, r *http.Request) []completions.Deployment {
	scope := completionsScope(r, time.Time{})
	return slices.DeleteFunc(g.Deployments(), func(d completions.Deployment) bool { return !g.Allows(scope, d.ModelName) })
}

// unservedDeploymentOf is a stored deployment left out of routing as /model/info shows it:
// its own litellm_params.model and api_base (public form), db_model, and model_info.error.
func unservedDeploymentOf(u deployments.Unserved) litellmDeployment {
	model, _ := u.LiteLLMParams["model"].(string)
	base, _ := u.LiteLLMParams["api_base"].(string)
	mode, _ := u.ModelInfo["mode"].(string)
	if mode != completions.ModeEmbedding && mode != completions.ModeRerank {
		mode = completions.ModeChat
	}
	prov, _, _ := strings.Cut(model, "/")
	return litellmDeployment{ModelName: u.ModelName, LiteLLMParams: litellmDeploymentParams{Model: model, APIBase: completions.PublicURL(base)},
		ModelInfo: litellmDeploymentInfo{ID: u.ID, DBModel: true, Mode: mode, LiteLLMProvider: prov, Error: u.Error}}
}

// litellmModelRoutes registers /model/info, /v1/model/info, /model_group/info and /health.
func (s *Server) litellmModelRoutes(g *completions.Gateway) {
	tags := []string{"LiteLLM compatibility"}
	info := func(w http.ResponseWriter, r *http.Request) error {
		ds := visibleDeployments(g, r)
		var unserved []deployments.Unserved
		if s.storedModels != nil {
			scope := completionsScope(r, time.Time{})
			unserved = slices.DeleteFunc(s.storedModels.Unserved(), func(u deployments.Unserved) bool { return !g.Allows(scope, u.ModelName) })
		}
		if id, ok := r.URL.Query()["litellm_model_id"]; ok {
			want := strings.Join(id, ",")
			ds = slices.DeleteFunc(ds, func(d completions.Deployment) bool { return d.ID != want })
			unserved = slices.DeleteFunc(unserved, func(u deployments.Unserved) bool { return u.ID != want })
			if len(ds) == 0 && len(unserved) == 0 {
				// LiteLLM's 400 for an id its router does not have.
				return paramError("litellm_model_id", "Model id = %s not found on litellm proxy", want)
			}
		}
		out := litellmModelInfoList{Data: make([]litellmDeployment, 0, len(ds)+len(unserved))}
		for _, d := range ds {
			out.Data = append(out.Data, litellmDeploymentOf(s.asConfigured(d)))
		}
		for _, u := range unserved {
			out.Data = append(out.Data, unservedDeploymentOf(u))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	for _, path := range []string{"/model/info", "/v1/model/info"} {
		s.Handle(Route{Method: "GET", Path: path, Summary: "LiteLLM's model info: every deployment (model_name, litellm_params without secrets, model_info with the catalogue's prices and limits); a virtual key sees only its models",
			Tags: tags, Response: litellmModelInfoList{}, ScopedKeys: true,
			Query:  []QueryParam{{Name: "litellm_model_id", Description: "only the deployment of this id (model_info.id, as LiteLLM's x-litellm-model-id)"}},
			Errors: map[int]string{400: "litellm_model_id names no deployment this key may see"}}, info)
	}
	s.Handle(Route{Method: "GET", Path: "/model_group/info", Summary: "LiteLLM's model group info: each model name clients may send, its deployments' providers, limits, prices and capabilities folded; a virtual key sees only its models",
		Tags: tags, Response: litellmModelGroupList{}, ScopedKeys: true,
		Query: []QueryParam{{Name: "model_group", Description: "only this model name"}}},
		func(w http.ResponseWriter, r *http.Request) error {
			want, filtered := r.URL.Query()["model_group"]
			out := litellmModelGroupList{Data: []litellmModelGroup{}}
			at := map[string]int{}
			for _, d := range visibleDeployments(g, r) {
				if filtered && d.ModelName != strings.Join(want, ",") {
					continue
				}
				i, ok := at[d.ModelName]
				if !ok {
					i = len(out.Data)
					at[d.ModelName] = i
					out.Data = append(out.Data, litellmModelGroup{ModelGroup: d.ModelName, Mode: d.Mode, Providers: []string{}})
				}
				foldGroup(&out.Data[i], litellmDeploymentOf(s.asConfigured(d)).ModelInfo)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/health", Summary: "LiteLLM's model health check: one tiny real request of every model group member (or of the deployments ?model= or ?model_id= names: a 400 without model groups) (a one-token chat answer; an embedding or a rerank of \"ping\"), concurrently, each bounded by serve --model-health-timeout; with serve --model-health-interval the latest background round's results at once instead (checked_at says when; ?fresh=true checks now); operator keys only",
		Tags: tags, Response: litellmHealth{},
		Query: []QueryParam{{Name: "model", Description: "only the deployments of this model name, else (as LiteLLM) those calling this provider/model"},
			{Name: "model_id", Description: "only the deployment of this id (model_info.id)"},
			{Name: "fresh", Type: "boolean", Description: "with background checks on (serve --model-health-interval): check now, as without them, instead of answering the latest round (not kept as the latest)"}},
		Errors: map[int]string{400: "no model groups and neither model nor model_id given, or fresh is not a boolean", 403: "the calling key is limited in scope (a virtual or job key): the check is the operator's", 404: "model_id names no deployment"}},
		func(w http.ResponseWriter, r *http.Request) error {
			ds := g.Deployments()
			q := r.URL.Query()
			fresh := false
			if v := q.Get("fresh"); v != "" {
				b, err := strconv.ParseBool(v)
				if err != nil {
					e := Validation(http.StatusBadRequest, "fresh: must be true or false, got %q", v)
					e.Param = "fresh"
					return e
				}
				fresh = b
			}
			if id := q.Get("model_id"); id != "" {
				ds = slices.DeleteFunc(ds, func(d completions.Deployment) bool { return d.ID != id })
				if len(ds) == 0 {
					e := NotFound("Model with ID %s not found", id)
					e.Param = "model_id"
					return e
				}
			}
			if m := q.Get("model"); m != "" {
				// As LiteLLM: the deployments of that model name, else those calling that
				// provider/model (litellm_params.model).
				byName := slices.DeleteFunc(slices.Clone(ds), func(d completions.Deployment) bool { return d.ModelName != m })
				if len(byName) == 0 {
					byName = slices.DeleteFunc(ds, func(d completions.Deployment) bool { return d.Model != m })
				}
				ds = byName
			} else if q.Get("model_id") == "" {
				// Unnarrowed, only what the operator configured is checked (LiteLLM's model_list):
				// every catalogued model of a provider would be hundreds of paid calls.
				if len(g.ModelGroups()) == 0 {
					e := Validation(http.StatusBadRequest, "model: give ?model= or ?model_id=: without model groups (--model-groups) an unnarrowed check would call every catalogued model of every provider")
					e.Param = "model"
					return e
				}
				ds = g.GroupDeployments()
			}
			if s.modelHealth != nil && !fresh {
				if out, ok := s.cachedHealth(s.modelHealth, ds); ok {
					writeJSON(w, http.StatusOK, out)
					return nil
				}
			}
			writeJSON(w, http.StatusOK, s.checkDeployments(r, g, ds))
			return nil
		})
}

// cachedHealth is the /health answer of ds from m's latest round: empty lists before the
// first round has ended; false when the background checks do not cover every one of ds (a
// deployment they never check, such as a catalogued model outside any group: the caller
// checks them all now, before the first round as after it).
func (s *Server) cachedHealth(m *completions.HealthMonitor, ds []completions.Deployment) (litellmHealth, bool) {
	round, ok := m.Latest()
	var covered []completions.Deployment
	if ok {
		for _, res := range round.Results {
			covered = append(covered, res.Deployment)
		}
	} else {
		covered = m.Deployments()
	}
	ids := make(map[string]bool, len(covered))
	for _, d := range covered {
		ids[d.ID] = true
	}
	want := make(map[string]bool, len(ds))
	for _, d := range ds {
		if !ids[d.ID] {
			return litellmHealth{}, false
		}
		want[d.ID] = true
	}
	if !ok {
		return litellmHealth{HealthyEndpoints: []litellmEndpoint{}, UnhealthyEndpoints: []litellmEndpoint{}}, true
	}
	var picked []completions.HealthResult
	for _, res := range round.Results {
		if want[res.Deployment.ID] {
			picked = append(picked, res)
		}
	}
	out := s.litellmHealthOf(picked)
	at := round.Finished.UTC()
	out.CheckedAt = &at
	return out, true
}

// BackgroundModelHealth has GET /health answer m's latest round at once (?fresh=true checks
// now as without it). The caller runs m (HealthMonitor.Run).
func BackgroundModelHealth(m *completions.HealthMonitor) Option {
	return func(s *Server) error {
		s.modelHealth = m
		return nil
	}
}

// checkDeployments checks ds (each distinct model and mode once, however many names it
// has), bounded by the server's ModelHealthTimeout and ModelHealthConcurrency and by r's
// context.
func (s *Server) checkDeployments(r *http.Request, g *completions.Gateway, ds []completions.Deployment) litellmHealth {
	timeout := s.cfg.ModelHealthTimeout
	if timeout < 0 {
		timeout = 0
	}
	results := g.CheckDeployments(r.Context(), ds, s.cfg.ModelHealthConcurrency, timeout)
	for _, res := range results {
		if res.Err != nil {
			s.log.Warn("server: model health check failed", "request_id", requestID(r.Context()), "model", res.Deployment.Model, "err", res.Err)
		}
	}
	out := s.litellmHealthOf(results)
	at := time.Now().UTC()
	out.CheckedAt = &at
	return out
}

// litellmHealthOf is LiteLLM's /health answer of results (CheckedAt not set).
func (s *Server) litellmHealthOf(results []completions.HealthResult) litellmHealth {
	out := litellmHealth{HealthyEndpoints: []litellmEndpoint{}, UnhealthyEndpoints: []litellmEndpoint{}}
	for _, res := range results {
		d := s.asConfigured(res.Deployment)
		e := litellmEndpoint{Model: d.Model, APIBase: d.APIBase, ModelName: d.ModelName, ModelID: d.ID}
		if res.Err != nil {
			e.Error = res.Err.Error()
			out.UnhealthyEndpoints = append(out.UnhealthyEndpoints, e)
		} else {
			out.HealthyEndpoints = append(out.HealthyEndpoints, e)
		}
	}
	out.HealthyCount, out.UnhealthyCount = len(out.HealthyEndpoints), len(out.UnhealthyEndpoints)
	return out
}

// asConfigured is d with the model its configuration gives it (deployments.Service's
// ConfiguredModel: "openai/gpt-4o", not the provider entry of its own the gateway calls it
// under), as LiteLLM shows a deployment and as an update may send it back.
func (s *Server) asConfigured(d completions.Deployment) completions.Deployment {
	if s.storedModels == nil {
		return d
	}
	if m, ok := s.storedModels.ConfiguredModel(d.ModelName, d.Model); ok {
		d.Model = m
		d.Provider, _, _ = strings.Cut(m, "/")
	}
	return d
}

// litellmDeploymentOf is d as LiteLLM's /model/info shows it.
func litellmDeploymentOf(d completions.Deployment) litellmDeployment {
	info := litellmDeploymentInfo{ID: d.ID, DBModel: d.Stored, Mode: d.Mode, LiteLLMProvider: d.Provider}
	if d.PriceFound {
		switch d.Mode {
		case completions.ModeRerank:
			rp := d.RerankPrice
			info.Key = &rp.Key
			if rp.HasPerToken {
				info.InputCostPerToken = &rp.PerToken
			}
			if rp.HasPerQuery {
				info.InputCostPerQuery = &rp.PerQuery
			}
		default:
			p := d.Price
			info.Key = &p.Key
			if p.Known {
				info.InputCostPerToken, info.OutputCostPerToken = &p.InputPerToken, &p.OutputPerToken
				info.CacheReadInputTokenCost, info.CacheCreationInputTokenCost = &p.CacheReadPerToken, &p.CacheCreationPerToken
				if d.Mode == completions.ModeChat {
					info.OutputCostPerReasoningToken = &p.ReasoningPerToken
				}
			}
			if p.MaxInputTokens > 0 {
				info.MaxInputTokens = &p.MaxInputTokens
			}
			if p.MaxOutputTokens > 0 {
				info.MaxOutputTokens, info.MaxTokens = &p.MaxOutputTokens, &p.MaxOutputTokens
			}
			info.SupportsFunctionCalling, info.SupportsVision = p.SupportsFunctionCalling, p.SupportsVision
			info.SupportsReasoning, info.SupportsWebSearch = p.SupportsReasoning, p.SupportsWebSearch
		}
	}
	return litellmDeployment{ModelName: d.ModelName, LiteLLMParams: litellmDeploymentParams{Model: d.Model, APIBase: d.APIBase, Tags: d.Tags, TagRegex: d.TagRegex, MemberParams: d.Params}, ModelInfo: info}
}

// foldGroup adds a deployment's info to its model group's: its provider, the larger limits
// and rates, the capabilities either has.
func foldGroup(grp *litellmModelGroup, info litellmDeploymentInfo) {
	if !slices.Contains(grp.Providers, info.LiteLLMProvider) {
		grp.Providers = append(grp.Providers, info.LiteLLMProvider)
	}
	larger := func(dst **int, v *int) {
		if v != nil && (*dst == nil || *v > **dst) {
			*dst = v
		}
	}
	largerRate := func(dst **float64, v *float64) {
		if v != nil && (*dst == nil || *v > **dst) {
			*dst = v
		}
	}
	larger(&grp.MaxInputTokens, info.MaxInputTokens)
	larger(&grp.MaxOutputTokens, info.MaxOutputTokens)
	largerRate(&grp.InputCostPerToken, info.InputCostPerToken)
	largerRate(&grp.OutputCostPerToken, info.OutputCostPerToken)
	grp.SupportsFunctionCalling = grp.SupportsFunctionCalling || info.SupportsFunctionCalling
	grp.SupportsVision = grp.SupportsVision || info.SupportsVision
	grp.SupportsReasoning = grp.SupportsReasoning || info.SupportsReasoning
	grp.SupportsWebSearch = grp.SupportsWebSearch || info.SupportsWebSearch
}
