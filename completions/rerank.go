package completions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/providers"
)

// MaxRerankDocuments is how many documents one rerank request may carry: Voyage AI's bound,
// the gateway's for every provider (Cohere takes up to 10,000 and recommends 1,000).
const MaxRerankDocuments = 1000

// OperationRerank is RequestRecord.Operation for a rerank request.
const OperationRerank = "rerank"

// RerankRequest is Cohere's rerank body (v2, with v1's return_documents and documents as
// objects, as LiteLLM takes it): POST /v1/rerank. The model is "provider/model", a bare name
// one configured provider catalogues ("rerank-v3.5"), or a model group, whose members are
// tried in order (their scores are on different scales, their rankings comparable).
type RerankRequest struct {
	// Model names the rerank model.
	Model string `json:"model" jsonschema:"required,minLength=1"`
	// Query is what the documents are ranked against.
	Query string `json:"query" jsonschema:"required,minLength=1"`
	// Documents are the texts to rank: strings, or objects with a text.
	Documents []RerankDocument `json:"documents" jsonschema:"required,minItems=1,maxItems=1000"`
	// TopN keeps the TopN most relevant results (all of them when absent; more than the
	// documents keeps them all).
	TopN *int `json:"top_n,omitempty" jsonschema:"minimum=1"`
	// ReturnDocuments puts each result's document in the answer (the gateway has them: no
	// provider is asked to send them back). False by default, as in Cohere's v1 (LiteLLM's
	// default is true).
	ReturnDocuments bool `json:"return_documents,omitempty"`
	// MaxTokensPerDoc truncates each document to this many tokens (Cohere's; other
	// providers refuse it).
	MaxTokensPerDoc *int `json:"max_tokens_per_doc,omitempty" jsonschema:"minimum=1"`
	// Cache is the request's say over the gateway's response cache (an extension, as on
	// chat requests).
	Cache *CacheControl `json:"cache,omitempty"`
	// Tags label the request for cost attribution, as on chat requests (Request.Tags).
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=16"`
	// RankFields names the fields of object documents to rank on (Cohere's v1): each such
	// document is ranked as its fields' "field: value" lines, in this order. Without it (or
	// with ["text"] alone, the default) an object is ranked on its text. String documents are ranked as they are.
	RankFields []string `json:"rank_fields,omitempty" jsonschema:"maxItems=64"`

	// objects are the documents sent as objects, by index (nil for a string document):
	// RankFields reads them, and a result's document echoes them whole.
	objects []map[string]any
}

// UnmarshalJSON decodes Cohere's body, keeping the documents sent as objects whole (for
// RankFields and return_documents).
func (r *RerankRequest) UnmarshalJSON(b []byte) error {
	type plain RerankRequest
	var aux struct {
		*plain
		Documents []json.RawMessage `json:"documents"`
	}
	aux.plain = (*plain)(r)
	if err := json.Unmarshal(b, &aux); err != nil {
		if ute, ok := err.(*json.UnmarshalTypeError); ok {
			ute.Field = strings.TrimPrefix(ute.Field, "plain.") // the field's name, not aux's path to it
		}
		return err
	}
	r.objects = nil
	if aux.Documents == nil {
		r.Documents = nil
		return nil
	}
	r.Documents = make([]RerankDocument, len(aux.Documents))
	for i, raw := range aux.Documents {
		if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '{' {
			var o map[string]any
			if err := json.Unmarshal(raw, &o); err != nil {
				return &json.UnmarshalTypeError{Value: "a malformed object", Type: reflect.TypeFor[RerankDocument](), Field: "documents"}
			}
			if r.objects == nil {
				r.objects = make([]map[string]any, len(aux.Documents))
			}
			r.objects[i] = o
			if text, ok := o["text"].(string); ok {
				r.Documents[i] = RerankDocument(text)
			}
			continue
		}
		if err := r.Documents[i].UnmarshalJSON(raw); err != nil {
			if ute, ok := err.(*json.UnmarshalTypeError); ok {
				ute.Field = "documents"
			}
			return err
		}
	}
	return nil
}

// documentText is the text the i-th document is ranked as: an object's RankFields as
// "field: value" lines (Cohere's v1), else its text; a string document as it is.
func (r *RerankRequest) documentText(i int) (string, error) {
	var o map[string]any
	if i < len(r.objects) {
		o = r.objects[i]
	}
	if o == nil {
		return string(r.Documents[i]), nil
	}
	if len(r.RankFields) == 0 || len(r.RankFields) == 1 && r.RankFields[0] == "text" {
		// No rank_fields, or only the default one: the text as it is.
		if _, ok := o["text"].(string); !ok {
			return "", invalid(fmt.Sprintf("documents[%d]", i), `an object needs a "text" string, or rank_fields naming the fields to rank on`)
		}
		return string(r.Documents[i]), nil
	}
	var lines []string
	for _, f := range r.RankFields {
		v, ok := o[f]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			j, _ := json.Marshal(v)
			s = string(j)
		}
		lines = append(lines, f+": "+s)
	}
	if len(lines) == 0 {
		return "", invalid(fmt.Sprintf("documents[%d]", i), "has none of the rank_fields %q", r.RankFields)
	}
	return strings.Join(lines, "\n"), nil
}

// RerankDocument is one document of a rerank request: its text, sent as a string or as an
// object {"text": …} (Cohere's v1 form; RerankRequest's decoding also takes objects ranked
// by RankFields, and keeps their other fields for the answer).
type RerankDocument string

// UnmarshalJSON takes a string or an object with a text string.
func (d *RerankDocument) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &o); err != nil || o.Text == nil {
			// Named by the decoder: "documents".
			return &json.UnmarshalTypeError{Value: `an object without a "text" string`, Type: reflect.TypeFor[RerankDocument]()}
		}
		*d = RerankDocument(*o.Text)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "a value other than a string or an object with a text", Type: reflect.TypeFor[RerankDocument]()}
	}
	*d = RerankDocument(s)
	return nil
}

// JSONSchema describes a document for invopop/jsonschema.
func (RerankDocument) JSONSchema() *jsonschema.Schema {
	text := &jsonschema.Schema{Type: "string", MinLength: ptrUint(1)}
	props := jsonschema.NewProperties()
	props.Set("text", text)
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		text,
		// Cohere's v1: text is required unless rank_fields names the fields to rank on;
		// every field is kept in the answer's document.
		{Type: "object", Properties: props, Description: `a document with a "text", or with the fields rank_fields names`},
	}}
}

// RerankResponse is Cohere's rerank answer, with the gateway's extensions as on an
// embeddings answer (model, usage with its costs, cache).
type RerankResponse struct {
	// ID is the upstream's id of the call, or one the gateway made.
	ID string `json:"id"`
	// Results are the documents' relevance, most relevant first (equal scores in the
	// documents' order), at most top_n of them.
	Results []RerankResult `json:"results"`
	Meta    RerankMeta     `json:"meta"`
	// Model is the "provider/model" that answered.
	Model string      `json:"model"`
	Usage RerankUsage `json:"usage"`
	// Cache says how the response cache took part (absent when it did not).
	Cache *CacheStatus `json:"cache,omitempty"`
}

// RerankResult is one document's relevance.
type RerankResult struct {
	// Index is the document's position in the request's documents.
	Index int `json:"index"`
	// RelevanceScore is the model's score, higher is more relevant; scales differ between
	// models.
	RelevanceScore float64 `json:"relevance_score"`
	// Document is the document, when the request asked return_documents.
	Document *RerankResultDocument `json:"document,omitempty"`
}

// RerankResultDocument is a result's document as Cohere returns it: its text, or the
// object the request sent, every field kept (Cohere's v1).
type RerankResultDocument struct {
	Text string `json:"text"`
	// Fields is the document as the request sent it when that was an object (its text
	// among them, if it had one); nil for a string document.
	Fields map[string]any `json:"-"`
}

// MarshalJSON writes Fields when the document was an object, else {"text": …}.
func (d RerankResultDocument) MarshalJSON() ([]byte, error) {
	if d.Fields != nil {
		return json.Marshal(d.Fields)
	}
	return json.Marshal(struct {
		Text string `json:"text"`
	}{d.Text})
}

// RerankMeta is Cohere's meta of a rerank answer.
type RerankMeta struct {
	// APIVersion and Tokens are Cohere's, as the upstream sent them (absent when it sent
	// none, and for an answer from the cache).
	APIVersion  *providers.RerankAPIVersion `json:"api_version,omitempty"`
	BilledUnits RerankBilledUnits           `json:"billed_units"`
	Tokens      *providers.RerankMetaTokens `json:"tokens,omitempty"`
}

// RerankBilledUnits is what the upstream bills the call: search units (Cohere's: a query
// with up to 100 documents) or tokens (Jina AI's, Voyage AI's). Each is absent when the
// provider does not bill in it, and both for an answer from the cache (nothing billed).
type RerankBilledUnits struct {
	SearchUnits int `json:"search_units,omitempty"`
	TotalTokens int `json:"total_tokens,omitempty"`
}

// RerankUsage is a rerank call's usage, Switchyard's extension (as EmbeddingsUsage).
type RerankUsage struct {
	// TotalTokens are the tokens the model read: as the provider reported them, else
	// counted locally (Cohere reports none).
	TotalTokens int `json:"total_tokens"`
	// Estimated: part of the usage (the tokens, or search units a Cohere-shaped server did
	// not report) was counted locally.
	Estimated bool `json:"estimated,omitempty"`
	// Costs prices the call from the catalogue.
	Costs *Costs `json:"costs,omitempty"`
}

// validate checks r and returns the provider request it stands for (model left empty).
func (r *RerankRequest) validate() (*providers.RerankRequest, error) {
	if strings.TrimSpace(r.Model) == "" {
		return nil, invalid("model", "is required")
	}
	if strings.TrimSpace(r.Query) == "" {
		return nil, invalid("query", "is required (a non-empty string)")
	}
	n := len(r.Documents)
	switch {
	case r.Documents == nil:
		return nil, invalid("documents", "is required")
	case n == 0:
		return nil, invalid("documents", "must not be empty")
	case n > MaxRerankDocuments:
		return nil, invalid("documents", "at most %d documents, got %d", MaxRerankDocuments, n)
	}
	for i, f := range r.RankFields {
		if strings.TrimSpace(f) == "" {
			return nil, invalid(fmt.Sprintf("rank_fields[%d]", i), "must not be empty")
		}
	}
	docs := make([]string, n)
	for i := range r.Documents {
		d, err := r.documentText(i)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(d) == "" {
			return nil, invalid(fmt.Sprintf("documents[%d]", i), "must not be empty")
		}
		docs[i] = d
	}
	pr := &providers.RerankRequest{Query: r.Query, Documents: docs}
	if r.TopN != nil {
		if *r.TopN < 1 {
			return nil, invalid("top_n", "must be at least 1, got %d", *r.TopN)
		}
		pr.TopN = min(*r.TopN, n)
	}
	if r.MaxTokensPerDoc != nil {
		if *r.MaxTokensPerDoc < 1 {
			return nil, invalid("max_tokens_per_doc", "must be at least 1, got %d", *r.MaxTokensPerDoc)
		}
		pr.MaxTokensPerDoc = *r.MaxTokensPerDoc
	}
	if err := r.Cache.check("cache"); err != nil {
		return nil, err
	}
	if err := CheckTags("tags", r.Tags); err != nil {
		return nil, err
	}
	return pr, nil
}

// rerankVendors maps rerank model-name prefixes to the provider that makes them, for bare
// names the catalogue does not list.
var rerankVendors = []struct{ prefix, provider string }{
	{"rerank-v", "cohere"}, {"rerank-english", "cohere"}, {"rerank-multilingual", "cohere"},
	{"rerank-lite", "voyage"}, {"rerank-1", "voyage"}, {"rerank-2", "voyage"}, {"jina-reranker", "jina"},
}

// rerankModel returns the "provider/model" a bare rerank model name stands for (kindModel
// over the catalogued rerank models and their makers).
func (g *Gateway) rerankModel(field, name string) (string, error) {
	return g.kindModel(field, name, g.rerankIndex.build(g.RerankModels).bare, rerankVendors)
}

// RerankModels lists the "provider/model" rerank models of the configured providers with a
// rerank API that the price catalogue enumerates, as EmbeddingModels lists embedding models.
func (g *Gateway) RerankModels() []string {
	cat, _ := g.prices().(interface {
		RerankModels(provider string) []string
	})
	if cat == nil {
		return nil
	}
	return g.catalogModels(providers.ServesRerank, cat.RerankModels)
}

// HasRerankModel reports whether model ("provider/model") is one of RerankModels.
func (g *Gateway) HasRerankModel(model string) bool {
	return g.rerankIndex.build(g.RerankModels).listed[model]
}

// ResolveRerankModel returns the "provider/model" a rerank request's model name stands
// for, and whether a configured provider with a rerank API serves it.
func (g *Gateway) ResolveRerankModel(name string) (string, bool) {
	return resolveOne(name, g.rerankTargets)
}

// rerankTargets resolves a rerank request's model: a model group's members in order, else
// the model itself.
func (g *Gateway) rerankTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.rerankModel, providers.ServesRerank,
		func(field, provider, model string) error {
			return invalid(field, "provider %q of %q has no rerank API here (cohere, jina, voyage or a provider configured with rerank have one)", provider, model)
		})
}

// rerankCost prices a rerank call of t, a target of request p (priceAt).
func (g *Gateway) rerankCost(p *plan, t target, u providers.RerankUsage) Costs {
	return priceAt(g, p, t, u, rerankPricer.RerankCost)
}

// rerankPricer is what the gateway's Prices implements to price rerank.
type rerankPricer interface {
	RerankCost(model string, u providers.RerankUsage) providers.Cost
}

// Rerank answers a rerank request: it validates req, checks the caller's budget and calls
// the model, retrying it (and, for a model group, its other members in order) as chat
// completions are retried, with the same circuit breakers. The answer's results are most
// relevant first, at most top_n, with their documents when asked. The call, priced from
// the catalogue (by the search unit or the token), is billed to the scope's budget and
// recorded in the ledger and by the observer (operation "rerank"); with the response cache
// on, the same request of the same caller is answered from it (nothing called, nothing
// charged). Errors: *ValidationError (ErrInvalid), ErrModelNotAllowed, ErrBudgetExceeded,
// *AllFailedError, or the context's error.
func (g *Gateway) Rerank(ctx context.Context, scope Scope, req *RerankRequest) (*RerankResponse, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	preq, err := req.validate()
	if err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	targets, err := g.rerankTargets(req.Model)
	if err != nil {
		return nil, err
	}
	if preq.MaxTokensPerDoc > 0 && !slices.ContainsFunc(targets, func(t target) bool { return providers.TakesMaxTokensPerDoc(t.p) }) {
		// No model would take it (in a group, those that do not are passed over).
		return nil, invalid("max_tokens_per_doc", "provider %q's rerank API has no such option (only Cohere's does): leave it unset", targets[0].provider)
	}
	p, err := g.opPlan(scope, req.Model, req.Tags, targets)
	if err != nil {
		return nil, err
	}
	rc := rerankCache{key: g.rerankCacheKey(scope, req, preq, p.targets)} // the members its tags select, as Embed's
	if rc.key != "" && req.Cache != nil {
		rc.ctl, rc.bypass = *req.Cache, req.Cache.NoCache
	}
	g.lookupRanking(ctx, &rc)
	if rc.hit != nil {
		return g.rankingFromCache(ctx, p, req, &rc)
	}
	// The fallbacks (opFallbacks) after the cache, whose key is the models asked'.
	asked := p.targets
	// A fallback whose rerank API has no max_tokens_per_doc would only fail with a bad
	// request: passed over, as other fallbacks that cannot take a request are.
	var fits func(target) bool
	if preq.MaxTokensPerDoc > 0 {
		fits = func(t target) bool { return providers.TakesMaxTokensPerDoc(t.p) }
	}
	p.targets = append(slices.Clip(p.targets), g.opFallbacks(ctx, scope, req.Model, providers.RerankMode, req.Tags, p.targets, g.rerankTargets, fits)...)
	if b := scope.Budget; b != nil {
		if _, err := g.enterBudget(ctx, p, b, false, &p.targets); err != nil {
			return nil, err
		}
	}
	// Every way out of Rerank ends the request: its budget's admission, and the slots in
	// flight its calls hold (MemberLimits), with a budget or without.
	defer p.ended()
	var out *providers.RerankResponse
	used, begin, err := g.callAttempts(ctx, p, "no ranking", func(ctx, actx context.Context, t target, begin time.Time) error {
		r := *preq
		r.Model = t.model
		res, err := t.p.(providers.Reranker).Rerank(actx, &r)
		if err == nil && res == nil {
			err = errNoRanking
		}
		if err == nil {
			err = keptRanking(t, res, &r)
		}
		var pe *providers.Error
		if errors.As(err, &pe) && pe.RerankUsage != nil {
			// A ranking refused that the upstream billed (KindBadResponse): charged as billed.
			// The attempt and a request that then fails carry it (chargeFailedAttempt).
			u := *pe.RerankUsage
			g.chargeFailedAttempt(ctx, p, t, providers.Usage{PromptTokens: u.Tokens}, g.rerankCost(p, t, u), u.Estimated(), begin)
		} else if err != nil {
			// An answer over the cap on its size, unread: what the upstream reports billing
			// is unknown, so the call is charged as Cohere's rule or its tokens price it.
			g.chargeOversizedOp(ctx, p, t, err, begin, func(*providers.Error) (providers.Usage, Costs, bool) {
				u := providers.EstimateRerankUsage(t.p, &r)
				return providers.Usage{PromptTokens: u.Tokens}, g.rerankCost(p, t, u), true
			})
		}
		out = res
		return err
	})
	if err != nil {
		g.observeOpFailure(ctx, p, OperationRerank, false, err)
		return nil, err
	}
	now := g.opts.Now()
	costs := g.rerankCost(p, used, out.Usage)
	estimated := out.Usage.Estimated()
	g.account(ctx, p, used, providers.Usage{PromptTokens: out.Usage.Tokens}, costs, true, estimated, now.Sub(begin))
	if !fallingBack(used, asked) { // a fallback's ranking is not the models asked's
		g.storeRanking(&rc, used.name, out, costs.Spent())
	}
	resp := &RerankResponse{ID: cmp.Or(out.ID, uuid.NewString()), Model: used.name, Results: rerankResults(out.Results, req),
		Meta:  RerankMeta{APIVersion: out.APIVersion, BilledUnits: billedUnits(out.Usage), Tokens: out.MetaTokens},
		Usage: RerankUsage{TotalTokens: out.Usage.Tokens, Estimated: estimated, Costs: &costs}, Cache: rc.status(now)}
	g.observeOpAnswer(ctx, p, OperationRerank, used, Usage{PromptTokens: out.Usage.Tokens, TotalTokens: out.Usage.Tokens, Costs: costs}, estimated, resp.Cache, now)
	return resp, nil
}

// keptRanking holds res, the answer of t to req, to what the package's adapters promise
// (a Reranker of a library user's own may break it): every result a distinct document of
// req with a finite score, at most req.TopN of them, most relevant first. Results beyond
// TopN are cut; any other fault is a *providers.Error of KindBadResponse (the next model of
// a group is tried, this one is not retried), carrying the usage res reported as billed.
func keptRanking(t target, res *providers.RerankResponse, req *providers.RerankRequest) error {
	if fault := rankingFault(res.Results, len(req.Documents)); fault != "" {
		e := &providers.Error{Provider: t.provider, Model: t.model, Kind: providers.KindBadResponse, Message: "the reranker's answer " + fault}
		if u := res.Usage; !u.Estimated() && (u.SearchUnits > 0 || u.Tokens > 0) {
			e.RerankUsage = &u
		}
		return e
	}
	if !slices.IsSortedFunc(res.Results, byRelevance) {
		res.Results = slices.Clone(res.Results)
		slices.SortStableFunc(res.Results, byRelevance)
	}
	if req.TopN > 0 && len(res.Results) > req.TopN {
		res.Results = res.Results[:req.TopN]
	}
	return nil
}

// rankingFault says what is wrong with results of a request of n documents: a document
// named twice or not in the request, or a score that is not a finite number; "" when
// nothing is.
func rankingFault(results []providers.RerankResult, n int) string {
	seen := make(map[int]bool, len(results))
	for _, r := range results {
		switch {
		case r.Index < 0 || r.Index >= n:
			return fmt.Sprintf("ranks document %d of %d", r.Index, n)
		case seen[r.Index]:
			return fmt.Sprintf("ranks document %d twice", r.Index)
		case math.IsNaN(r.RelevanceScore) || math.IsInf(r.RelevanceScore, 0):
			return fmt.Sprintf("scores document %d %v", r.Index, r.RelevanceScore)
		}
		seen[r.Index] = true
	}
	return ""
}

// byRelevance orders results most relevant first, equal scores in the documents' order.
func byRelevance(x, y providers.RerankResult) int {
	if c := cmp.Compare(y.RelevanceScore, x.RelevanceScore); c != 0 {
		return c
	}
	return x.Index - y.Index
}

// rerankResults is the answer's results: most relevant first (whatever order a Reranker
// gave), with their documents when req asks.
func rerankResults(rs []providers.RerankResult, req *RerankRequest) []RerankResult {
	out := make([]RerankResult, len(rs))
	for i, r := range rs {
		out[i] = RerankResult{Index: r.Index, RelevanceScore: r.RelevanceScore}
		if req.ReturnDocuments {
			out[i].Document = &RerankResultDocument{Text: string(req.Documents[r.Index])}
			if r.Index < len(req.objects) {
				out[i].Document.Fields = req.objects[r.Index]
			}
		}
	}
	byRelevance := func(x, y RerankResult) int {
		if c := cmp.Compare(y.RelevanceScore, x.RelevanceScore); c != 0 {
			return c
		}
		return x.Index - y.Index
	}
	if !slices.IsSortedFunc(out, byRelevance) {
		slices.SortStableFunc(out, byRelevance)
	}
	return out
}

// billedUnits is what u says the upstream billed: search units and tokens when it reported
// them (a local count is no bill: usage.estimated says one was made).
func billedUnits(u providers.RerankUsage) RerankBilledUnits {
	var b RerankBilledUnits
	if !u.SearchUnitsEstimated {
		b.SearchUnits = u.SearchUnits
	}
	if !u.TokensEstimated {
		b.TotalTokens = u.Tokens
	}
	return b
}

// rankingFromCache answers a rerank request the cache had: no model is called and nothing
// is charged (a spent budget is still refused).
func (g *Gateway) rankingFromCache(ctx context.Context, p *plan, req *RerankRequest, rc *rerankCache) (*RerankResponse, error) {
	if err := g.budgetUsable(ctx, p.scope); err != nil {
		return nil, err
	}
	h := rc.hit
	results := make([]providers.RerankResult, len(h.Results))
	for i, r := range h.Results {
		results[i] = providers.RerankResult{Index: r.Index, RelevanceScore: r.Score}
	}
	if fault := rankingFault(results, len(req.Documents)); fault != "" {
		return nil, fmt.Errorf("completions: the cached ranking of %s %s", h.Model, fault)
	}
	used := p.targets[0]
	for _, t := range p.targets {
		if t.name == h.Model {
			used = t // the member that made the ranking
		}
	}
	now := g.opts.Now()
	costs := Costs{PriceKnown: true}
	resp := &RerankResponse{ID: uuid.NewString(), Model: used.name, Results: rerankResults(results, req),
		Usage: RerankUsage{TotalTokens: h.Tokens, Estimated: h.Estimated, Costs: &costs}, Cache: rc.status(now)}
	g.observeOpAnswer(ctx, p, OperationRerank, used, Usage{PromptTokens: h.Tokens, TotalTokens: h.Tokens, Costs: costs}, h.Estimated, resp.Cache, now)
	return resp, nil
}

// errNoRanking is returned for a Reranker that answered nothing and no error.
var errNoRanking = errors.New("completions: the reranker answered no ranking")
