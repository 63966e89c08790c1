package completions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// The modes of a Deployment, as LiteLLM's catalogue names them.
const (
	ModeChat      = "chat"
	ModeEmbedding = "embedding"
	ModeRerank    = "rerank"
)

// Deployment is one model a client-facing name routes to — LiteLLM's deployment (an entry of
// its model_list): a model group's member under the group's name, or a model the gateway
// lists (Models, EmbeddingModels, RerankModels) under its own "provider/model" name.
type Deployment struct {
	// ID identifies the deployment, the same on every process and restart: the id its
	// configuration gives it (Routes.IDs, Routes.Stored), else the SHA-256 hex of ModelName
	// and Model (DeploymentID); LiteLLM's model_info.id.
	ID string
	// ModelName is the name clients send: a model group's, or "provider/model".
	ModelName string
	// Model is the "provider/model" the deployment calls.
	Model string
	// Provider is the provider prefix of Model.
	Provider string
	// Mode is ModeChat, ModeEmbedding or ModeRerank.
	Mode string
	// APIBase is the provider's endpoint root without credentials (user info, query and
	// fragment removed); "" when the adapter does not say.
	APIBase string
	// Price is the price catalogue's entry for Model (PriceFound false: none). A rerank
	// model's rates are in RerankPrice instead.
	Price      providers.Price
	PriceFound bool
	// RerankPrice is a rerank model's catalogue entry (Mode ModeRerank, PriceFound true).
	RerankPrice providers.RerankPrice
	// Stored says the deployment was added through an admin API and is kept in a store
	// (Routes.Stored; LiteLLM's model_info.db_model); ID is then the id it was stored under.
	Stored bool
	// Tags are a model group member's tags (ModelGroup.Tags; LiteLLM's
	// litellm_params.tags); nil when it has none.
	Tags []string
	// TagRegex are a model group member's tag patterns (ModelGroup.TagRegex; LiteLLM's
	// litellm_params.tag_regex); nil when it has none.
	TagRegex []string
	// Params are a model group member's default request parameters (ModelGroup.Params;
	// LiteLLM's litellm_params temperature, max_tokens…); zero when it has none.
	Params MemberParams
}

// DeploymentID is the ID of the deployment of model under modelName.
func DeploymentID(modelName, model string) string {
	sum := sha256.Sum256([]byte(modelName + "\x00" + model))
	return hex.EncodeToString(sum[:])
}

// deploymentIDCache keeps DeploymentID by model name and model, up to
// maxDeploymentIDs of them (then it starts afresh): the pairs answers name are the
// configuration's, few, and hashing one costs its encoding's allocations on every answer.
// The zero value is ready.
type deploymentIDCache struct {
	mu  sync.RWMutex
	ids map[deploymentKey]string
}

// deploymentKey is a deployment's model name and model.
type deploymentKey struct{ modelName, model string }

// maxDeploymentIDs bounds deploymentIDCache: a request naming models no configuration
// lists (the provider/model form) adds one each.
const maxDeploymentIDs = 4096

// of is DeploymentID(modelName, model), computed once.
func (c *deploymentIDCache) of(modelName, model string) string {
	k := deploymentKey{modelName, model}
	c.mu.RLock()
	id, ok := c.ids[k]
	c.mu.RUnlock()
	if ok {
		return id
	}
	id = DeploymentID(modelName, model)
	c.mu.Lock()
	if c.ids == nil || len(c.ids) >= maxDeploymentIDs {
		c.ids = map[deploymentKey]string{}
	}
	c.ids[k] = id
	c.mu.Unlock()
	return id
}

// Deployments lists the gateway's deployments: every model group's members under the
// group's name (in the groups' order, then the members'), then the chat, embedding and rerank
// models it lists, each under its own name. A model group's member whose provider is not
// configured is listed all the same (its calls fail, and /health says so). A member is an
// embedding or rerank model when the gateway lists it as one (a group the embeddings or
// rerank route serves), else a chat model.
func (g *Gateway) Deployments() []Deployment {
	var out []Deployment
	rt := g.routes()
	for _, name := range slices.Sorted(maps.Keys(rt.groups)) {
		grp := rt.groups[name]
		for i, m := range grp.Models {
			d := g.deployment(name, m, g.modeOf(m))
			if i < len(grp.Tags) && len(grp.Tags[i]) > 0 {
				d.Tags = slices.Clone(grp.Tags[i])
			}
			if i < len(grp.TagRegex) && len(grp.TagRegex[i]) > 0 {
				d.TagRegex = slices.Clone(grp.TagRegex[i])
			}
			if i < len(grp.Params) {
				d.Params = grp.Params[i]
			}
			if id, ok := rt.stored[d.ID]; ok {
				d.ID, d.Stored = id, true
			} else if id, ok := rt.ids[d.ID]; ok {
				d.ID = id
			}
			out = append(out, d)
		}
	}
	if g.opts.ListConfigured {
		for _, m := range g.configuredListed() {
			out = append(out, g.deployment(m, m, g.modeOf(m)))
		}
		return out
	}
	for _, kind := range []struct {
		mode   string
		models []string
	}{{ModeChat, g.named(g.Models())}, {ModeEmbedding, g.named(g.EmbeddingModels())}, {ModeRerank, g.named(g.RerankModels())}} {
		for _, m := range kind.models {
			out = append(out, g.deployment(m, m, kind.mode))
		}
	}
	return out
}

// modeOf is the mode of model as a deployment: an embedding or rerank model when the
// gateway serves it as one, else a chat model.
func (g *Gateway) modeOf(model string) string {
	switch {
	case g.HasEmbeddingModel(model) || g.ownEmbedding(model):
		return ModeEmbedding
	case g.HasRerankModel(model):
		return ModeRerank
	}
	return ModeChat
}

// ownEmbedding reports whether the price catalogue holds model as an embedding model of
// its own (a LiteLLM deployment of model_info.mode embedding), which its provider's listing
// may not name (a model of an api_base of its own).
func (g *Gateway) ownEmbedding(model string) bool {
	c, ok := g.prices().(interface{ OwnEmbedding(string) bool })
	return ok && c.OwnEmbedding(model)
}

// deployment describes model (mode) under modelName.
func (g *Gateway) deployment(modelName, model, mode string) Deployment {
	d := Deployment{ID: DeploymentID(modelName, model), ModelName: modelName, Model: model, Mode: mode}
	if prov, _, err := providers.ParseModel(model); err == nil {
		d.Provider = prov
		d.APIBase = g.APIBaseOf(model)
	}
	name := g.priceName(model)
	switch mode {
	case ModeEmbedding:
		if c, ok := g.prices().(interface{ Embeddings() *providers.Catalog }); ok {
			d.Price, d.PriceFound = c.Embeddings().Lookup(name)
		}
	case ModeRerank:
		if c, ok := g.prices().(interface {
			LookupRerank(string) (providers.RerankPrice, bool)
		}); ok {
			d.RerankPrice, d.PriceFound = c.LookupRerank(name)
		}
	default:
		if c, ok := g.prices().(ModelCatalogue); ok {
			d.Price, d.PriceFound = c.Lookup(name)
		}
	}
	return d
}

// APIBaseOf is the endpoint root of the provider of model ("provider/model") without
// credentials (PublicURL), as Deployment.APIBase shows it: LiteLLM's api_base. "" when the
// provider is unknown or its adapter does not say.
func (g *Gateway) APIBaseOf(model string) string {
	prov, _, ok := strings.Cut(model, "/")
	if !ok || g.opts.Providers == nil {
		return ""
	}
	if p, err := g.opts.Providers.Lookup(prov); err == nil && p != nil {
		if b, ok := p.(interface{ BaseURL() string }); ok {
			raw := b.BaseURL()
			if v, ok := g.publicBases.Load(raw); ok {
				return v.(string)
			}
			pub := PublicURL(raw)
			if g.publicBasesSize.Add(1) <= maxPublicBases {
				g.publicBases.Store(raw, pub)
			}
			return pub
		}
	}
	return ""
}

// maxPublicBases bounds Gateway.publicBases: base URLs change only with the configuration,
// so the cache is full only after thousands of deployments came and went.
const maxPublicBases = 4096

// PublicURL is raw without what may carry a credential (user info, query, fragment); ""
// when raw does not parse as an absolute URL with a host. Every answer that shows an
// api_base (Deployment.APIBase, the admin routes' litellm_params) shows it through this.
func PublicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" || u.Scheme == "" || u.Host == "" {
		// Without a scheme "user:pass@host/v1" parses as a path (or a scheme "user" with an
		// opaque part): nothing in it can be told apart from a credential, so none is shown.
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// ErrNotConfigured is matched by CheckDeployment's error for a deployment whose provider is
// unknown or has no API key: nothing was sent.
var ErrNotConfigured = errors.New("completions: the provider is not configured")

// CheckDeployment makes one tiny real request of d (LiteLLM's health check): a chat model is
// asked for a one-token answer to "ping", an embedding model to embed "ping", a rerank model
// to rank one document. It calls d's provider directly — no retries, fallbacks, budgets,
// guardrails or cache — and returns nil when the upstream answered, else why not (a
// *providers.Error for an upstream failure, never carrying the API key). It stops when ctx
// ends; the caller bounds it.
func (g *Gateway) CheckDeployment(ctx context.Context, d Deployment) error {
	prov, m, err := providers.ParseModel(d.Model)
	if err != nil {
		return fmt.Errorf("%w: %q is not of the form provider/model", ErrInvalid, d.Model)
	}
	if g.opts.Providers == nil {
		return fmt.Errorf("%w: %s", ErrNotConfigured, prov)
	}
	p, err := g.opts.Providers.Lookup(prov)
	if err != nil || p == nil {
		return fmt.Errorf("%w: %s: %w", ErrNotConfigured, prov, err)
	}
	if !providers.IsConfigured(p) {
		return fmt.Errorf("%w: %s has no API key", ErrNotConfigured, prov)
	}
	switch d.Mode {
	case ModeEmbedding:
		e, ok := p.(providers.Embedder)
		if !ok {
			return fmt.Errorf("%w: %s has no embeddings API", ErrNotConfigured, prov)
		}
		_, err = e.Embed(ctx, &providers.EmbeddingRequest{Model: m, Input: []string{"ping"}})
	case ModeRerank:
		r, ok := p.(providers.Reranker)
		if !ok {
			return fmt.Errorf("%w: %s has no rerank API", ErrNotConfigured, prov)
		}
		_, err = r.Rerank(ctx, &providers.RerankRequest{Model: m, Query: "ping", Documents: []string{"ping"}})
	default:
		_, err = p.Complete(ctx, &providers.Request{Model: m, MaxTokens: 1,
			Messages: []providers.Message{{Role: "user", Content: "ping"}}})
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("completions: health check of %s: %w (%w)", d.Model, ctx.Err(), err)
	}
	return err
}

// HealthResult is one deployment's health check: Err is nil when it answered.
type HealthResult struct {
	Deployment Deployment
	Err        error
}

// CheckDeployments runs CheckDeployment on every one of ds, at most concurrency at once
// (below 1: 1), each bounded by timeout (0 or less: by ctx alone), and returns their results
// in ds's order. A model listed under several names (the same Model and Mode) is checked once
// and its result given to each. A deployment not started when ctx ends gets ctx's error.
func (g *Gateway) CheckDeployments(ctx context.Context, ds []Deployment, concurrency int, timeout time.Duration) []HealthResult {
	return g.checkDeployments(ctx, ds, concurrency, timeout, nil)
}

// checkDeployments is CheckDeployments, telling checked (when set) of each check's result as
// soon as it has it (once per distinct model and mode, from the check's goroutine).
func (g *Gateway) checkDeployments(ctx context.Context, ds []Deployment, concurrency int, timeout time.Duration, checked func(Deployment, error)) []HealthResult {
	type call struct{ model, mode string }
	first := map[call]int{}
	var distinct []Deployment
	for _, d := range ds {
		c := call{d.Model, d.Mode}
		if _, ok := first[c]; !ok {
			first[c] = len(distinct)
			distinct = append(distinct, d)
		}
	}
	errs := make([]error, len(distinct))
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	for i, d := range distinct {
		if ctx.Err() == nil { // select picks at random when a slot is free and ctx is done too
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			errs[i] = fmt.Errorf("completions: health check of %s not run: %w", d.Model, ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := ctx, context.CancelFunc(func() {})
			if timeout > 0 {
				cctx, cancel = context.WithTimeout(ctx, timeout)
			}
			defer cancel()
			errs[i] = g.CheckDeployment(cctx, d)
			if checked != nil {
				checked(d, errs[i])
			}
		}()
	}
	wg.Wait()
	out := make([]HealthResult, len(ds))
	for i, d := range ds {
		out[i] = HealthResult{Deployment: d, Err: errs[first[call{d.Model, d.Mode}]]}
	}
	return out
}

// GroupDeployments are the model groups' members (Deployments' first part): what the
// operator configured, and what an unnarrowed GET /health and the background checks
// (HealthMonitor) check. Empty without model groups.
func (g *Gateway) GroupDeployments() []Deployment {
	groups := g.ModelGroups()
	return slices.DeleteFunc(g.Deployments(), func(d Deployment) bool { return !slices.Contains(groups, d.ModelName) })
}

// DeploymentIDOf is the ID of the deployment of model under modelName as Deployments lists
// it: the id its configuration or store gives it, else DeploymentID. modelName "" (a
// request that named several models) is read as model's own name.
func (g *Gateway) DeploymentIDOf(modelName, model string) string {
	if modelName == "" {
		modelName = model
	}
	id := g.deploymentIDs.of(modelName, model)
	rt := g.routes()
	if s, ok := rt.stored[id]; ok {
		return s
	}
	if s, ok := rt.ids[id]; ok {
		return s
	}
	return id
}
