package completions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/providers"
)

// MaxEmbeddingInputs is how many inputs one embeddings request may carry (OpenAI's bound).
const MaxEmbeddingInputs = 2048

// OperationEmbeddings is RequestRecord.Operation for an embeddings request (chat requests
// leave it empty).
const OperationEmbeddings = "embeddings"

// EmbeddingsRequest is OpenAI's POST /v1/embeddings body. The model is "provider/model",
// a bare name one configured provider catalogues ("text-embedding-3-small"), or a model
// group, whose members are tried in order: they should be deployments of one embedding
// model, since vectors of different models cannot be compared.
type EmbeddingsRequest struct {
	// Model names the embedding model.
	Model string `json:"model" jsonschema:"required,minLength=1"`
	// Input is a string, an array of strings, an array of token ids or an array of arrays
	// of token ids (OpenAI's forms; token ids only for OpenAI-format providers).
	Input EmbeddingInput `json:"input" jsonschema:"required"`
	// EncodingFormat is "float" (default) or "base64" (little-endian float32s, which
	// OpenAI's Node SDK asks for by default).
	EncodingFormat string `json:"encoding_format,omitempty" jsonschema:"enum=float,enum=base64"`
	// Dimensions shortens the vectors where the model allows it.
	Dimensions *int `json:"dimensions,omitempty" jsonschema:"minimum=1"`
	// User is passed to OpenAI-format providers.
	User string `json:"user,omitempty"`
	// Cache is the request's say over the gateway's response cache (an extension, as on
	// chat requests); each input is cached on its own.
	Cache *CacheControl `json:"cache,omitempty"`
	// Tags label the request for cost attribution, as on chat requests (Request.Tags).
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=16"`
}

// EmbeddingInput is the input of an embeddings request: texts, or token-id arrays.
type EmbeddingInput struct {
	Texts  []string
	Tokens [][]int
}

// UnmarshalJSON takes OpenAI's four forms: "text", ["a", "b"], [1, 2, 3], [[1, 2], [3]].
func (in *EmbeddingInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*in = EmbeddingInput{}
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil // absent: "input is required"
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		in.Texts = []string{s}
		return nil
	case len(b) == 0 || b[0] != '[':
		return &json.UnmarshalTypeError{Value: "a value other than a string or an array", Type: reflect.TypeFor[EmbeddingInput]()}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	if len(items) == 0 {
		in.Texts = []string{}
		return nil
	}
	switch first := bytes.TrimSpace(items[0]); {
	case len(first) > 0 && first[0] == '"':
		return json.Unmarshal(b, &in.Texts)
	case len(first) > 0 && first[0] == '[':
		return json.Unmarshal(b, &in.Tokens)
	}
	var one []int
	if err := json.Unmarshal(b, &one); err != nil {
		// Named by the decoder: "input".
		return &json.UnmarshalTypeError{Value: "an array of neither strings, token ids nor arrays of token ids", Type: reflect.TypeFor[EmbeddingInput]()}
	}
	in.Tokens = [][]int{one}
	return nil
}

// MarshalJSON writes the input back in the array form.
func (in EmbeddingInput) MarshalJSON() ([]byte, error) {
	if in.Tokens != nil {
		return json.Marshal(in.Tokens)
	}
	return json.Marshal(in.Texts)
}

// JSONSchema describes input for invopop/jsonschema.
func (EmbeddingInput) JSONSchema() *jsonschema.Schema {
	maxItems := uint64(MaxEmbeddingInputs)
	ids := &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "integer", Minimum: json.Number("0")}, MinItems: ptrUint(1)}
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", MinLength: ptrUint(1)},
		{Type: "array", Items: &jsonschema.Schema{Type: "string", MinLength: ptrUint(1)}, MinItems: ptrUint(1), MaxItems: &maxItems},
		ids,
		{Type: "array", Items: ids, MinItems: ptrUint(1), MaxItems: &maxItems},
	}}
}

func ptrUint(n uint64) *uint64 { return &n }

// EmbeddingsResponse is OpenAI's embeddings answer.
type EmbeddingsResponse struct {
	Object string      `json:"object" jsonschema:"enum=list"`
	Data   []Embedding `json:"data"`
	// Model is the "provider/model" that answered.
	Model string          `json:"model"`
	Usage EmbeddingsUsage `json:"usage"`
	// Cache says how the response cache took part (an extension; absent when it did not):
	// hit (every input from it; usage 0), partial (Hits of them), miss or bypass.
	Cache *CacheStatus `json:"cache,omitempty"`
}

// WriteJSON writes r's JSON to w, as json.Marshal would write it, a vector at a time: an
// answer of 2,048 vectors of 3,072 numbers is about 75 MiB of JSON, which is never held
// whole, and encoding/json would re-read every number a custom marshaller returns (which
// doubles the cost of a large answer).
func (r *EmbeddingsResponse) WriteJSON(w io.Writer) error {
	model, err := json.Marshal(r.Model)
	if err != nil {
		return err
	}
	usage, err := json.Marshal(r.Usage)
	if err != nil {
		return err
	}
	object, _ := json.Marshal(r.Object)
	const flushAt = 32 << 10
	b := make([]byte, 0, 64<<10)
	b = append(b, `{"object":`...)
	b = append(b, object...)
	b = append(b, `,"data":[`...)
	for i, d := range r.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(d.Index), 10)
		b = append(b, `,"embedding":`...)
		b = d.Embedding.appendJSON(b)
		b = append(b, '}')
		if len(b) >= flushAt {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, `],"model":`...)
	b = append(b, model...)
	b = append(b, `,"usage":`...)
	b = append(b, usage...)
	if r.Cache != nil {
		c, err := json.Marshal(r.Cache)
		if err != nil {
			return err
		}
		b = append(b, `,"cache":`...)
		b = append(b, c...)
	}
	b = append(b, '}', '\n')
	_, err = w.Write(b)
	return err
}

// Embedding is one input's vector.
type Embedding struct {
	Object    string          `json:"object" jsonschema:"enum=embedding"`
	Index     int             `json:"index"`
	Embedding EmbeddingVector `json:"embedding"`
}

// EmbeddingVector is a vector written as an array of numbers, or as a base64 string of
// little-endian float32s when the request asked for encoding_format "base64".
type EmbeddingVector struct {
	Values []float32
	Base64 bool
}

// MarshalJSON writes the vector in its encoding.
func (v EmbeddingVector) MarshalJSON() ([]byte, error) { return v.appendJSON(nil), nil }

// appendJSON appends the vector's JSON to out.
func (v EmbeddingVector) appendJSON(out []byte) []byte {
	if v.Base64 {
		raw := make([]byte, 4*len(v.Values))
		for i, f := range v.Values {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
		}
		out = slices.Grow(out, base64.StdEncoding.EncodedLen(len(raw))+2)
		out = append(out, '"')
		out = base64.StdEncoding.AppendEncode(out, raw)
		return append(out, '"')
	}
	out = slices.Grow(out, 12*len(v.Values)+2)
	out = append(out, '[')
	for i, f := range v.Values {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendFloat(out, float64(f), 'g', -1, 32)
	}
	return append(out, ']')
}

// UnmarshalJSON reads either encoding (for clients of this package).
func (v *EmbeddingVector) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(raw)%4 != 0 {
			return errors.New("embedding: not base64 of float32s")
		}
		v.Base64, v.Values = true, make([]float32, len(raw)/4)
		for i := range v.Values {
			v.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return nil
	}
	v.Base64 = false
	return json.Unmarshal(b, &v.Values)
}

// JSONSchema describes the vector for invopop/jsonschema.
func (EmbeddingVector) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "array", Items: &jsonschema.Schema{Type: "number"}},
		{Type: "string", Description: "base64 of little-endian float32s (encoding_format base64)"},
	}}
}

// EmbeddingsUsage is OpenAI's usage of an embeddings call, with Switchyard's extensions.
type EmbeddingsUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
	// Estimated: the provider reported no token count and the inputs were counted locally.
	Estimated bool `json:"estimated,omitempty"`
	// Costs prices the call from the catalogue (an extension; OpenAI SDKs ignore it).
	Costs *Costs `json:"costs,omitempty"`
}

// validate checks r and returns the provider request it stands for (model left empty).
func (r *EmbeddingsRequest) validate() (*providers.EmbeddingRequest, error) {
	if strings.TrimSpace(r.Model) == "" {
		return nil, invalid("model", "is required")
	}
	switch r.EncodingFormat {
	case "", "float", "base64":
	default:
		return nil, invalid("encoding_format", "must be float or base64, got %q", r.EncodingFormat)
	}
	if err := r.Cache.check("cache"); err != nil {
		return nil, err
	}
	if err := CheckTags("tags", r.Tags); err != nil {
		return nil, err
	}
	pr := &providers.EmbeddingRequest{User: r.User}
	if r.Dimensions != nil {
		if *r.Dimensions < 1 {
			return nil, invalid("dimensions", "must be at least 1, got %d", *r.Dimensions)
		}
		pr.Dimensions = *r.Dimensions
	}
	n := len(r.Input.Texts) + len(r.Input.Tokens)
	switch {
	case r.Input.Texts == nil && r.Input.Tokens == nil:
		return nil, invalid("input", "is required")
	case n == 0:
		return nil, invalid("input", "must not be empty")
	case n > MaxEmbeddingInputs:
		return nil, invalid("input", "at most %d inputs, got %d", MaxEmbeddingInputs, n)
	}
	for i, t := range r.Input.Texts {
		if t == "" {
			return nil, invalid(fmt.Sprintf("input[%d]", i), "must not be empty")
		}
	}
	for i, ids := range r.Input.Tokens {
		if len(ids) == 0 {
			return nil, invalid(fmt.Sprintf("input[%d]", i), "must not be empty")
		}
		if slices.ContainsFunc(ids, func(id int) bool { return id < 0 }) {
			return nil, invalid(fmt.Sprintf("input[%d]", i), "token ids must not be negative")
		}
	}
	pr.Input, pr.Tokens = r.Input.Texts, r.Input.Tokens
	return pr, nil
}

// embeddingVendors maps embedding model-name prefixes to the provider that makes them,
// for bare names the catalogue does not list.
var embeddingVendors = []struct{ prefix, provider string }{
	{"text-embedding-3", "openai"}, {"text-embedding-ada", "openai"}, {"gemini-embedding", "gemini"},
	{"mistral-embed", "mistral"}, {"codestral-embed", "mistral"}, {"voyage-", "voyage"}, {"jina-embeddings", "jina"},
}

// embeddingModel returns the "provider/model" a bare embedding model name stands for
// (kindModel over the catalogued embedding models and their makers).
func (g *Gateway) embeddingModel(field, name string) (string, error) {
	return g.kindModel(field, name, g.embedIndex.build(g.EmbeddingModels).bare, embeddingVendors)
}

// kindModel returns the "provider/model" a bare model name of a kind other than chat
// (embeddings, audio) stands for: the one configured provider whose catalogued models of
// the kind (bare: bare name to provider/model) include it, else the configured maker of
// its family (vendors), else the chat model it names, which the caller refuses by name when
// its provider lacks the kind's API.
func (g *Gateway) kindModel(field, name string, bare map[string][]string, vendors []struct{ prefix, provider string }) (string, error) {
	choices := bare[name]
	switch {
	case len(choices) == 1:
		return choices[0], nil
	case len(choices) > 1:
		return "", invalid(field, "%q is served by several providers; name one: %s", name, strings.Join(choices, ", "))
	}
	if full := g.familyModel(name, vendors); full != "" {
		return full, nil
	}
	if full, _ := g.bareModel(name); full != "" {
		return full, nil
	}
	ve := invalid(field, "the model %q does not exist or no configured provider serves it; name it as provider/model", name)
	ve.Err = ErrUnknownModel
	return "", ve
}

// EmbeddingModels lists the "provider/model" embedding models of the configured providers
// the price catalogue enumerates, as Models lists chat models.
func (g *Gateway) EmbeddingModels() []string {
	cat, _ := g.prices().(interface {
		EmbeddingModels(provider string) []string
	})
	if cat == nil {
		return nil
	}
	return g.catalogModels(providers.ServesEmbeddings, cat.EmbeddingModels)
}

// catalogModels lists the models list gives for each configured provider that serves a
// kind (embeddings, rerank).
func (g *Gateway) catalogModels(serves func(providers.Provider) bool, list func(provider string) []string) []string {
	var out []string
	for _, name := range g.configuredProviders(serves) {
		out = append(out, list(name)...)
	}
	return out
}

// HasEmbeddingModel reports whether model ("provider/model") is one of EmbeddingModels.
func (g *Gateway) HasEmbeddingModel(model string) bool {
	return g.embedIndex.build(g.EmbeddingModels).listed[model]
}

// ResolveEmbeddingModel returns the "provider/model" an embeddings request's model name
// stands for, and whether a configured provider with an embeddings API serves it.
func (g *Gateway) ResolveEmbeddingModel(name string) (string, bool) {
	return resolveOne(name, g.embeddingTargets)
}

// resolveOne returns the "provider/model" name stands for through targets, and whether a
// configured provider serves it; a model group (several targets) or an unknown name is
// name itself, unserved.
func resolveOne(name string, targets func(string) ([]target, error)) (string, bool) {
	ts, err := targets(name)
	if err != nil || len(ts) != 1 {
		return name, false
	}
	return ts[0].name, providers.IsConfigured(ts[0].p)
}

// embeddingTargets resolves an embeddings request's model: a model group's members in
// order, else the model itself.
func (g *Gateway) embeddingTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.embeddingModel, providers.ServesEmbeddings,
		func(field, provider, model string) error {
			return invalid(field, "provider %q of %q has no embeddings API", provider, model)
		})
}

// groupTargets resolves the model of a request other than chat: a model group's members
// in order, a deployment's own name's deployments (Options.DeploymentNames), else the
// model itself; bare names by bare, each model's provider checked by
// serves (else the error lacks makes).
func (g *Gateway) groupTargets(name string, bare func(field, name string) (string, error), serves func(providers.Provider) bool,
	lacks func(field, provider, model string) error) ([]target, error) {
	rt := g.routes()
	ts, err := g.groupTargetsIn(rt, name, bare, serves, lacks)
	if errors.Is(err, providers.ErrUnknownProvider) && g.routes() != rt {
		// A member whose provider was removed after the routes were swapped (validate's case).
		return g.groupTargetsIn(g.routes(), name, bare, serves, lacks)
	}
	return ts, err
}

// groupTargetsIn is groupTargets with the model groups of rt.
func (g *Gateway) groupTargetsIn(rt *routeTable, name string, bare func(field, name string) (string, error), serves func(providers.Provider) bool,
	lacks func(field, provider, model string) error) ([]target, error) {
	models := []string{name}
	grp, isGroup := rt.groups[name]
	if isGroup {
		models = grp.Models
	} else if members := rt.namedMembers(name); members != nil {
		models, isGroup = members, true // a deployment's own name, served as its deployments
	}
	out := make([]target, 0, len(models))
	for i, s := range models {
		field := "model"
		if len(models) > 1 || s != name {
			field = fmt.Sprintf("model (member %d of group %q)", i, name)
		}
		if !strings.Contains(s, "/") {
			full, err := bare(field, s)
			if err != nil {
				if !isGroup && !g.servesAsked(name, "") {
					return nil, notServed("model", name) // as LiteLLM's proxy refuses it
				}
				return nil, err
			}
			s = full
		}
		if !isGroup && !g.servesAsked(name, s) {
			return nil, notServed("model", name)
		}
		pn, m, err := providers.ParseModel(s)
		if err != nil {
			return nil, invalid(field, "%q is not of the form provider/model", s)
		}
		p, err := g.opts.Providers.Lookup(pn)
		if err != nil || p == nil {
			ve := invalid(field, "unknown provider %q in %q", pn, s)
			ve.Err = providers.ErrUnknownProvider
			return nil, ve
		}
		if !serves(p) {
			return nil, lacks(field, pn, s)
		}
		out = append(out, target{name: s, provider: pn, model: m, p: p})
	}
	return out, nil
}

// embeddingCost prices an embeddings call of t, a target of request p (priceAt).
func (g *Gateway) embeddingCost(p *plan, t target, u providers.Usage) Costs {
	return priceAt(g, p, t, u, embeddingPricer.EmbeddingCost)
}

// embeddingPricer is what the gateway's Prices implements to price embeddings.
type embeddingPricer interface {
	EmbeddingCost(model string, u providers.Usage) providers.Cost
}

// Embed answers an embeddings request: it validates req, checks the caller's budget and
// calls the model, retrying it (and, for a model group, its other members in order) as
// chat completions are retried, with the same circuit breakers; it falls back to another
// model only when the scope's or the model group's fallbacks name one (opFallbacks), as
// LiteLLM's router does, whose vectors answer every input (none from the cache). The call is billed to
// the scope's budget and recorded in the ledger and by the observer (operation
// "embeddings"). Errors: *ValidationError (ErrInvalid), ErrModelNotAllowed,
// ErrBudgetExceeded, *AllFailedError, or the context's error.
func (g *Gateway) Embed(ctx context.Context, scope Scope, req *EmbeddingsRequest) (*EmbeddingsResponse, error) {
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
	targets, err := g.embeddingTargets(req.Model)
	if err != nil {
		return nil, err
	}
	p, err := g.opPlan(scope, req.Model, req.Tags, targets)
	if err != nil {
		return nil, err
	}
	// Keyed on the members the request may reach (tag routing's), not the whole group: an
	// answer of a member its tags do not select is not its answer.
	ec := embedCache{keys: g.embedCacheKeys(scope, req, p.targets)}
	if ec.keys != nil && req.Cache != nil {
		ec.ctl, ec.bypass = *req.Cache, req.Cache.NoCache
	}
	g.lookupEmbeddings(ctx, &ec, p.targets)
	if ec.keys != nil && ec.hits == len(ec.keys) {
		return g.embeddingsFromCache(ctx, p, req, &ec)
	}
	// The fallbacks (opFallbacks) after the cache, whose keys are the models asked'.
	asked := p.targets
	p.targets = append(slices.Clip(p.targets), g.opFallbacks(ctx, scope, req.Model, providers.EmbeddingMode, req.Tags, p.targets, g.embeddingTargets, nil)...)
	if b := scope.Budget; b != nil {
		if _, err := g.enterBudget(ctx, p, b, false, &p.targets); err != nil {
			return nil, err
		}
	}
	// Every way out of Embed ends the request: its budget's admission, and the slots in
	// flight its calls hold (MemberLimits), with a budget or without.
	defer p.ended()
	sent, idx := ec.misses(preq)
	var out *providers.EmbeddingResponse
	used, begin, err := g.callAttempts(ctx, p, "no embeddings", func(ctx, actx context.Context, t target, begin time.Time) error {
		r := *sent
		if fallingBack(t, asked) {
			r = *preq // a fallback's vectors are not comparable with the cached ones: every input
		}
		r.Model = t.model
		res, err := t.p.(providers.Embedder).Embed(actx, &r)
		var pe *providers.Error
		if errors.As(err, &pe) && pe.Usage != nil && pe.Kind != providers.KindContentFilter {
			// Part of the call was answered (and billed) before it failed: the attempt and
			// a request that then fails carry it. (A content filter's billed usage is
			// accounted by run, as for chat.)
			g.chargeFailedAttempt(ctx, p, t, *pe.Usage, g.embeddingCost(p, t, *pe.Usage), pe.UsageEstimated, begin)
		} else if err != nil {
			g.chargeOversized(ctx, p, t, err, begin, func() providers.Usage { return providers.Usage{PromptTokens: embeddingInputTokens(&r)} },
				func(u providers.Usage) Costs { return g.embeddingCost(p, t, u) })
		}
		out = res
		return err
	})
	if err != nil {
		g.observeOpFailure(ctx, p, OperationEmbeddings, false, err)
		return nil, err
	}
	if fallingBack(used, asked) {
		// Another model's vectors, for every input: none of the cache's kept, none stored
		// under the keys of the models asked.
		ec.hits, ec.vectors, ec.tokens, ec.saved, ec.ctl.NoStore = 0, nil, 0, 0, true
		_, idx = ec.misses(preq)
	}
	now := g.opts.Now()
	costs := g.embeddingCost(p, used, out.Usage)
	g.account(ctx, p, used, out.Usage, costs, true, out.UsageEstimated, now.Sub(begin))
	if len(out.Vectors) != len(idx) {
		return nil, fmt.Errorf("completions: %s answered %d vectors for %d inputs", used.name, len(out.Vectors), len(idx))
	}
	g.storeEmbeddings(&ec, preq, idx, used.name, out.Vectors, costs.Spent(), out.Usage.PromptTokens)
	vectors := out.Vectors
	if ec.hits > 0 {
		vectors = ec.vectors
		for j, i := range idx {
			vectors[i] = out.Vectors[j]
		}
	}
	// The usage counts every input, as a chat hit reports its answer's tokens; the costs
	// are the call's alone.
	tokens := out.Usage.PromptTokens + ec.tokens
	resp := &EmbeddingsResponse{Object: "list", Model: used.name, Data: make([]Embedding, len(vectors)),
		Usage: EmbeddingsUsage{PromptTokens: tokens, TotalTokens: tokens, Estimated: out.UsageEstimated || ec.hits > 0, Costs: &costs},
		Cache: ec.status()}
	for i, v := range vectors {
		resp.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: EmbeddingVector{Values: v, Base64: req.EncodingFormat == "base64"}}
	}
	g.observeOpAnswer(ctx, p, OperationEmbeddings, used, Usage{PromptTokens: out.Usage.PromptTokens, TotalTokens: out.Usage.PromptTokens, Costs: costs},
		out.UsageEstimated, resp.Cache, now)
	return resp, nil
}

// embeddingsFromCache answers an embeddings request every input of which the cache had:
// no model is called and nothing is charged (a spent budget is still refused).
func (g *Gateway) embeddingsFromCache(ctx context.Context, p *plan, req *EmbeddingsRequest, ec *embedCache) (*EmbeddingsResponse, error) {
	if err := g.budgetUsable(ctx, p.scope); err != nil {
		return nil, err
	}
	used := p.targets[0]
	for _, t := range p.targets {
		if t.name == ec.model {
			used = t // the member that made the vectors
		}
	}
	costs := Costs{PriceKnown: true}
	resp := &EmbeddingsResponse{Object: "list", Model: used.name, Data: make([]Embedding, len(ec.vectors)),
		Usage: EmbeddingsUsage{PromptTokens: ec.tokens, TotalTokens: ec.tokens, Estimated: true, Costs: &costs}, Cache: ec.status()}
	for i, v := range ec.vectors {
		resp.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: EmbeddingVector{Values: v, Base64: req.EncodingFormat == "base64"}}
	}
	g.observeOpAnswer(ctx, p, OperationEmbeddings, used, Usage{PromptTokens: ec.tokens, TotalTokens: ec.tokens, Costs: costs}, true, resp.Cache, g.opts.Now())
	return resp, nil
}

// embeddingInputTokens counts r's inputs locally: its token ids as they are, its texts
// with its model's tokenizer (providers.CountTokens).
func embeddingInputTokens(r *providers.EmbeddingRequest) int {
	n := 0
	for _, ids := range r.Tokens {
		n += len(ids)
	}
	if r.Tokens == nil {
		for _, text := range r.Input {
			n += providers.CountTokens(r.Model, text)
		}
	}
	return n
}
