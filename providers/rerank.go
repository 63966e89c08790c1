package providers

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
)

// Reranker is implemented by adapters whose provider reranks documents against a query:
// the OpenAI-format adapter of a provider configured with a rerank API (Config.Rerank:
// Cohere, Jina AI, Voyage AI, or a self-hosted server in Cohere's shape). ServesRerank
// tells whether a provider's adapter does.
type Reranker interface {
	// Rerank scores req.Documents against req.Query and returns the results most relevant
	// first. Failures are *Error values.
	Rerank(ctx context.Context, req *RerankRequest) (*RerankResponse, error)
}

// RerankAPI names the wire shape of a provider's rerank endpoint.
type RerankAPI string

// The rerank APIs the OpenAI-format adapter speaks.
const (
	// RerankCohere is Cohere's v2 rerank: {model, query, documents: [strings], top_n,
	// max_tokens_per_doc} answered with results and meta.billed_units.search_units.
	// Self-hosted servers in Cohere's shape (vLLM, Infinity, …) take it too; their
	// usage.total_tokens is read where they send one.
	RerankCohere RerankAPI = "cohere"
	// RerankJina is Jina AI's rerank: Cohere's request with return_documents (sent false:
	// Jina's default is true) and without max_tokens_per_doc, answered with results and
	// usage.total_tokens.
	RerankJina RerankAPI = "jina"
	// RerankVoyage is Voyage AI's rerank: top_k instead of top_n, answered with data
	// instead of results and usage.total_tokens.
	RerankVoyage RerankAPI = "voyage"
)

// valid reports whether a is one of the rerank APIs, or "" (none).
func (a RerankAPI) valid() bool {
	switch a {
	case "", RerankCohere, RerankJina, RerankVoyage:
		return true
	}
	return false
}

// DefaultRerankPath is where a provider's rerank endpoint is under its base URL unless its
// preset says otherwise (Cohere's is /v2/rerank under https://api.cohere.com).
const DefaultRerankPath = "/rerank"

// RerankRequest asks for the relevance of Documents to Query.
type RerankRequest struct {
	// Model is the provider's model name ("rerank-v3.5").
	Model string
	// Query is what the documents are ranked against.
	Query string
	// Documents are the texts to rank; results refer to them by index.
	Documents []string
	// TopN keeps the TopN most relevant results; 0 keeps them all.
	TopN int
	// MaxTokensPerDoc truncates each document to this many tokens (Cohere's
	// max_tokens_per_doc); 0 leaves the provider's default. Only RerankCohere takes it: the
	// others refuse a request that sets it (KindBadRequest, nothing sent).
	MaxTokensPerDoc int
}

// RerankResponse is the ranking of a RerankRequest's documents.
type RerankResponse struct {
	// ID is the upstream's id of the call ("" when it gives none).
	ID string
	// Results are the documents' scores, most relevant first (equal scores in the
	// documents' order), each document at most once, at most TopN of them.
	Results []RerankResult
	// Model is the model that answered, as the provider names it (may be empty).
	Model string
	// Usage is what the call is billed.
	Usage RerankUsage
	// APIVersion and MetaTokens are Cohere's meta.api_version and meta.tokens as the
	// answer carried them (nil when it did not), passed on as LiteLLM passes them.
	APIVersion *RerankAPIVersion
	MetaTokens *RerankMetaTokens
}

// RerankAPIVersion is Cohere's meta.api_version of a rerank answer.
type RerankAPIVersion struct {
	Version        string `json:"version,omitempty"`
	IsDeprecated   *bool  `json:"is_deprecated,omitempty"`
	IsExperimental *bool  `json:"is_experimental,omitempty"`
}

// RerankMetaTokens is Cohere's meta.tokens of a rerank answer.
type RerankMetaTokens struct {
	InputTokens  *float64 `json:"input_tokens,omitempty"`
	OutputTokens *float64 `json:"output_tokens,omitempty"`
}

// RerankResult is one document's relevance.
type RerankResult struct {
	// Index is the document's position in RerankRequest.Documents.
	Index int
	// RelevanceScore is the model's score of the document, higher is more relevant (its
	// scale is the model's own: scores of two models cannot be compared).
	RelevanceScore float64
}

// RerankUsage is what a rerank call is billed: search units (Cohere's unit: a query with up
// to 100 documents) or tokens (Jina AI's and Voyage AI's).
type RerankUsage struct {
	// SearchUnits are the search units the call is billed (RerankCohere only; 0 for the
	// others).
	SearchUnits int
	// Tokens are the tokens the model read: as reported, else estimated as Voyage AI
	// defines them (the query's tokens times the documents, plus every document's), at four
	// bytes a token.
	Tokens int
	// SearchUnitsEstimated and TokensEstimated say the upstream reported none and they were
	// counted locally (search units by Cohere's rule: see cohereSearchUnits).
	SearchUnitsEstimated, TokensEstimated bool
}

// Estimated reports whether any of u was counted locally.
func (u RerankUsage) Estimated() bool { return u.SearchUnitsEstimated || u.TokensEstimated }

// ServesRerank reports whether p answers rerank requests: it implements Reranker and, for
// the OpenAI-format adapter, is configured with a rerank API (Config.Rerank).
func ServesRerank(p Provider) bool {
	if _, ok := p.(Reranker); !ok {
		return false
	}
	c, ok := p.(interface{ ServesRerank() bool })
	return !ok || c.ServesRerank()
}

// TakesMaxTokensPerDoc reports whether p's rerank API takes RerankRequest.MaxTokensPerDoc
// (Cohere's does; Jina's and Voyage's do not). A Reranker that does not say is assumed to.
func TakesMaxTokensPerDoc(p Provider) bool {
	c, ok := p.(interface{ RerankAPI() RerankAPI })
	return !ok || c.RerankAPI() == RerankCohere
}

// RerankAPI is the provider's rerank API (Config.Rerank; "" for none).
func (o *OpenAI) RerankAPI() RerankAPI { return o.ep.cfg.Rerank }

// ServesRerank reports whether the provider has a rerank API (Config.Rerank).
func (o *OpenAI) ServesRerank() bool { return o.ep.cfg.Rerank != "" }

// maxRerankBody bounds a rerank answer: 1,000 results with their documents echoed back
// (Jina's default) fit many times over.
const maxRerankBody = 64 << 20

// rerankBody is the request of every rerank API: the fields one does not take are left
// empty (and so out of the JSON).
type rerankBody struct {
	Model           string   `json:"model"`
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	TopN            int      `json:"top_n,omitempty"`
	TopK            int      `json:"top_k,omitempty"` // Voyage AI's name for top_n
	MaxTokensPerDoc int      `json:"max_tokens_per_doc,omitempty"`
	// ReturnDocuments is false for Jina and Voyage (Jina's default is true): the gateway
	// has the documents, so the answer need not carry them back.
	ReturnDocuments *bool `json:"return_documents,omitempty"`
}

// rerankAnswer reads every rerank API's answer: Cohere's and Jina's results, Voyage's
// data; Cohere's meta.billed_units, the others' usage.
type rerankAnswer struct {
	ID      string        `json:"id"`
	Model   string        `json:"model"`
	Results []rerankScore `json:"results"`
	Data    []rerankScore `json:"data"`
	Meta    *struct {
		APIVersion  *RerankAPIVersion `json:"api_version"`
		Tokens      *RerankMetaTokens `json:"tokens"`
		BilledUnits *struct {
			SearchUnits *float64 `json:"search_units"`
			InputTokens *float64 `json:"input_tokens"`
		} `json:"billed_units"`
	} `json:"meta"`
	Usage *struct {
		TotalTokens  int `json:"total_tokens"`
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

type rerankScore struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
}

// Rerank implements Reranker with POST {base}{path} in the provider's rerank API
// (Config.Rerank, Config.RerankPath). The answer is checked (every result a distinct
// document, as many results as asked) and sorted most relevant first; search units and
// tokens the upstream does not report are estimated (RerankUsage). A provider without
// a rerank API, or one other than Cohere's given MaxTokensPerDoc, fails with KindBadRequest
// before anything is sent.
func (o *OpenAI) Rerank(ctx context.Context, req *RerankRequest) (*RerankResponse, error) {
	api := o.ep.cfg.Rerank
	switch {
	case api == "":
		return nil, o.ep.errorf(req.Model, KindBadRequest, "provider %q has no rerank API", o.Name())
	case req.MaxTokensPerDoc > 0 && api != RerankCohere:
		return nil, o.ep.errorf(req.Model, KindBadRequest, "provider %q's rerank API takes no max_tokens_per_doc (it truncates documents itself); leave it unset", o.Name())
	}
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	n := len(req.Documents)
	topN := req.TopN
	if topN <= 0 || topN > n {
		topN = n
	}
	body := rerankBody{Model: req.Model, Query: req.Query, Documents: req.Documents}
	switch api {
	case RerankVoyage:
		body.TopK = req.TopN
	default:
		body.TopN = req.TopN
	}
	if api == RerankCohere {
		body.MaxTokensPerDoc = req.MaxTokensPerDoc
	} else {
		no := false
		body.ReturnDocuments = &no
	}
	h := http.Header{}
	if o.ep.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.ep.cfg.APIKey)
	}
	path := cmp.Or(o.ep.cfg.RerankPath, DefaultRerankPath)
	c, err := o.ep.send(ctx, req.Model, operationURL(o.baseURL, path), h, body, parseRerankError)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var a rerankAnswer
	if err := c.decodeAll(maxRerankBody, &a, "rerank response"); err != nil {
		return nil, err
	}
	scores := a.Results
	if api == RerankVoyage || scores == nil {
		scores = a.Data
	}
	// A ranking refused is a bad answer (KindBadResponse: not retried on the model, which
	// billed it), carrying what the upstream said it billed.
	refuse := func(msg string) error {
		e := c.failure(KindBadResponse, msg, nil)
		if u := rerankUsage(api, req, &a); api == RerankCohere && !u.SearchUnitsEstimated || api != RerankCohere && !u.TokensEstimated {
			e.RerankUsage = &u
		}
		return e
	}
	if len(scores) != topN {
		return nil, refuse("rerank response has " + strconv.Itoa(len(scores)) + " results, want " + strconv.Itoa(topN))
	}
	out := &RerankResponse{ID: a.ID, Model: a.Model, Results: make([]RerankResult, len(scores))}
	seen := make([]bool, n)
	for i, s := range scores {
		if s.Index == nil || *s.Index < 0 || *s.Index >= n || seen[*s.Index] || s.RelevanceScore == nil {
			return nil, refuse("rerank response has a result without a score or with a missing or repeated index")
		}
		seen[*s.Index] = true
		out.Results[i] = RerankResult{Index: *s.Index, RelevanceScore: *s.RelevanceScore}
	}
	slices.SortStableFunc(out.Results, func(x, y RerankResult) int {
		if c := cmp.Compare(y.RelevanceScore, x.RelevanceScore); c != 0 {
			return c
		}
		return x.Index - y.Index
	})
	out.Usage = rerankUsage(api, req, &a)
	if a.Meta != nil {
		out.APIVersion, out.MetaTokens = a.Meta.APIVersion, a.Meta.Tokens
	}
	return out, nil
}

// rerankUsage is what the answer a says the call of req is billed, and what it does not
// say estimated.
func rerankUsage(api RerankAPI, req *RerankRequest, a *rerankAnswer) RerankUsage {
	var u RerankUsage
	unitsKnown := false
	if a.Meta != nil && a.Meta.BilledUnits != nil {
		if su := a.Meta.BilledUnits.SearchUnits; su != nil && *su > 0 {
			u.SearchUnits, unitsKnown = int(math.Ceil(*su)), true
		}
		if it := a.Meta.BilledUnits.InputTokens; it != nil && *it > 0 {
			u.Tokens = int(math.Ceil(*it))
		}
	}
	if a.Usage != nil && u.Tokens == 0 {
		u.Tokens = cmp.Or(a.Usage.TotalTokens, a.Usage.PromptTokens)
	}
	needUnits := api == RerankCohere && !unitsKnown
	if u.Tokens > 0 && !needUnits {
		return u
	}
	query := roughTokens(req.Query)
	docs := make([]int, len(req.Documents))
	for i, d := range req.Documents {
		docs[i] = roughTokens(d)
	}
	if u.Tokens == 0 {
		u.Tokens, u.TokensEstimated = query*len(docs), true
		for _, t := range docs {
			u.Tokens += t
		}
	}
	if needUnits {
		u.SearchUnits, u.SearchUnitsEstimated = cohereSearchUnits(query, docs, req.MaxTokensPerDoc), true
	}
	return u
}

// EstimateRerankUsage is what a call of req to p is billed when its answer says nothing
// of it (an answer refused unread, as larger than the cap on its size): the tokens as
// Voyage AI defines them (the query's times the documents, plus every document's, at four
// bytes a token) and, for Cohere's rerank API (or a Reranker that does not say its API),
// the search units by Cohere's rule, all marked estimated.
func EstimateRerankUsage(p Provider, req *RerankRequest) RerankUsage {
	api := RerankCohere
	if c, ok := p.(interface{ RerankAPI() RerankAPI }); ok {
		api = c.RerankAPI()
	}
	return rerankUsage(api, req, &rerankAnswer{})
}

// roughTokens estimates the tokens of s at four bytes a token (English text's usual
// ratio). A rerank's documents are not put through the tokenizer (CountTokens): for a
// call of 100 passages that would take a millisecond and 13,000 allocations, more than
// the rest of the call, for a count that prices nothing Cohere bills.
func roughTokens(s string) int { return (len(s) + 3) / 4 }

// Cohere's billing rule (its pricing page): a search unit is one query with up to 100
// documents; a document longer than 500 tokens with the query counts as one document per
// 500 tokens. Documents are first cut to max_tokens_per_doc (4,096 by default).
const (
	cohereDocsPerUnit         = 100
	cohereChunkTokens         = 500
	cohereDefaultMaxDocTokens = 4096
)

// cohereSearchUnits counts the search units of a query of queryTokens over documents of
// docTokens each by Cohere's billing rule, for an answer that does not report them.
func cohereSearchUnits(queryTokens int, docTokens []int, maxPerDoc int) int {
	if maxPerDoc <= 0 {
		maxPerDoc = cohereDefaultMaxDocTokens
	}
	chunks := 0
	for _, t := range docTokens {
		chunks += max(1, (queryTokens+min(t, maxPerDoc)+cohereChunkTokens-1)/cohereChunkTokens)
	}
	return max(1, (chunks+cohereDocsPerUnit-1)/cohereDocsPerUnit)
}

// parseRerankError reads an error body of the rerank APIs: OpenAI's envelope, Cohere's
// {"message"}, or Jina's and Voyage's {"detail"} (a string, or FastAPI's list of problems).
func parseRerankError(body []byte) (code, msg string) {
	if code, msg = parseOpenAIError(body); msg != "" {
		return code, msg
	}
	var d struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &d) != nil || len(d.Detail) == 0 {
		return "", ""
	}
	var s string
	if json.Unmarshal(d.Detail, &s) == nil {
		return "", s
	}
	var items []struct {
		Msg string `json:"msg"`
		Loc []any  `json:"loc"`
	}
	if json.Unmarshal(d.Detail, &items) == nil && len(items) > 0 {
		return "", items[0].Msg
	}
	return "", string(d.Detail)
}

// RerankOnly reports whether the provider serves rerank and nothing else (Config.RerankOnly).
func (o *OpenAI) RerankOnly() bool { return o.ep.cfg.RerankOnly }
