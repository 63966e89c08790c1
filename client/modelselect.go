package client

import (
	"context"
	"net/http"
	"strings"
)

// Message is one turn of a model selection conversation.
type Message struct {
	// Role is "system", "user" or "assistant".
	Role string `json:"role"`
	// Content is the text of the message.
	Content string `json:"content"`
}

// Provider is a candidate LLM for model selection. Give either Name, or Provider and Model
// (the two shapes the spec shows); the answer names the choice in the same shape.
type Provider struct {
	Name       string         `json:"name,omitempty"`
	Provider   string         `json:"provider,omitempty"`
	Model      string         `json:"model,omitempty"`
	Price      *float64       `json:"price,omitempty"`
	Latency    *float64       `json:"latency,omitempty"`
	Attributes map[string]any `json:"attributes,omitempty"`
	// InputPrice and OutputPrice (USD per 1M tokens, as Not Diamond's SDKs send them) are
	// the candidate's price when Price is nil (their mean).
	InputPrice  *float64 `json:"input_price,omitempty"`
	OutputPrice *float64 `json:"output_price,omitempty"`
	// ContextLength is the context window in tokens: a conversation estimated larger
	// skips the candidate.
	ContextLength *int `json:"context_length,omitempty"`
	// IsCustom marks your own model: never matched by name to a measured one.
	IsCustom bool `json:"is_custom,omitempty"`
}

// Tool is a function the conversation may call.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

// ModelSelectRequest is the body of POST /api/v1/model-select.
type ModelSelectRequest struct {
	Messages     []Message  `json:"messages"`
	LLMProviders []Provider `json:"llm_providers"`
	Tools        []Tool     `json:"tools,omitempty"`
	// MaxModelDepth cuts the ranked list (nil: all candidates).
	MaxModelDepth *int `json:"max_model_depth,omitempty"`
	// Tradeoff is "", "cost" or "latency".
	Tradeoff string `json:"tradeoff,omitempty"`
	// TradeoffTolerance (Switchyard extension) is how much estimated quality, 0-1, the
	// tradeoff may give up against the best candidate; nil means the router's default.
	TradeoffTolerance *float64 `json:"tradeoff_tolerance,omitempty"`
	// PreferenceID names a trained router model whose predictions drive the ranking, or a
	// preference (pref_..., CreatePreference) that learns from Feedback.
	PreferenceID string `json:"preference_id,omitempty"`
	// HashContent stores SHA-256 hashes of the messages with the session.
	HashContent bool `json:"hash_content,omitempty"`
	// PreviousSession links this call to an earlier session id.
	PreviousSession string `json:"previous_session,omitempty"`
	// Timeout (seconds) bounds the selection; past it Default answers alone, or without
	// one the server answers 504.
	Timeout *float64 `json:"timeout,omitempty"`
	// Default is the candidate to answer with when the selection cannot finish: a
	// "provider/model" string, a Provider, or the candidate's index (an int).
	Default any `json:"default,omitempty"`
	// Metric is "accuracy" (the only one; Not Diamond's SDKs send it).
	Metric string `json:"metric,omitempty"`
}

// RankedProvider is one entry of the ranked candidate list, in the caller's shape.
type RankedProvider struct {
	// Name is set for candidates given as {"name": ...}.
	Name string `json:"name,omitempty"`
	// Provider and Model are set for candidates given as {"provider","model"} or strings.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Rank is the position, 1 = best.
	Rank int `json:"rank"`
	// Score is what the candidate was ranked by.
	Score float64 `json:"score"`
	// Quality is the estimated probability, 0-1, that the candidate answers well.
	Quality float64 `json:"quality"`
	// ScoreSource says where the score came from: learned (the server's built-in default
	// router), learned_relative (its nearest measured relative, named by EstimatedFrom),
	// router (a trained router), a prior (attribute, benchmark, unknown), each possibly
	// with a "+feedback" suffix under a preference; default (the request's default,
	// answered alone because the selection could not finish) or default_replaced (the best
	// remaining candidate by the prior, answered alone because the filters removed the
	// default).
	ScoreSource string `json:"score_source,omitempty"`
	// EstimatedFrom names the measured model a learned_relative estimate comes from.
	EstimatedFrom string `json:"estimated_from,omitempty"`
}

// Label is the entry's name, or "provider/model".
func (p RankedProvider) Label() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Provider + "/" + p.Model
}

// Candidate returns the entry as the Provider it was sent as: Name for a candidate given
// as {"name": ...}, else Provider and Model. It is what a later call about this selection
// takes (FeedbackRequest.Provider, LatencyReport.Provider) and what a next
// ModelSelectRequest can list; its prices, latency and attributes are not in the answer,
// so it carries none. Not Diamond's SDKs answer model_select with this pair as
// (session_id, provider).
func (p RankedProvider) Candidate() Provider {
	if p.Name != "" {
		return Provider{Name: p.Name}
	}
	return Provider{Provider: p.Provider, Model: p.Model}
}

// Chosen returns the selected candidate (LLMLabel) as a Provider, ready for Feedback,
// ReportLatency or a next ModelSelect: the first ranked entry when the answer has the
// ranked list, else LLMLabel read as "provider/model" (split at its first slash), or as a
// name when it has none. Call Label on the ranked entry, or use LLMLabel, for a
// CompletionRequest's Models.
func (r *ModelSelectResponse) Chosen() Provider {
	if len(r.Providers) > 0 {
		return r.Providers[0].Candidate()
	}
	if prov, model, ok := strings.Cut(r.LLMLabel, "/"); ok {
		return Provider{Provider: prov, Model: model}
	}
	return Provider{Name: r.LLMLabel}
}

// Labels returns the ranked candidates' labels, best first ("provider/model", or the
// name): Labels()[0] as CompletionRequest.Models and the rest as its FallbackModels call
// the selection's choice and fall back in its order. Without the ranked list it is
// LLMLabel alone.
func (r *ModelSelectResponse) Labels() []string {
	if len(r.Providers) == 0 {
		if r.LLMLabel == "" {
			return nil
		}
		return []string{r.LLMLabel}
	}
	out := make([]string, len(r.Providers))
	for i, p := range r.Providers {
		out[i] = p.Label()
	}
	return out
}

// ModelSelectResponse is the answer of model selection.
type ModelSelectResponse struct {
	// LLMLabel is the chosen candidate: its name, or "provider/model".
	LLMLabel string `json:"llm_label"`
	// Providers is the ranked candidate list, best first (beyond the spec).
	Providers []RankedProvider `json:"providers,omitempty"`
	// SessionID identifies this recommendation; pass it as PreviousSession to link calls.
	SessionID string `json:"session_id,omitempty"`
	// RouterFallback, under a pref_ preference, says why the router it follows did not
	// rank: "router_deleted" (its trained router model was deleted: the learned default
	// router ranked) or "training_job_deleted" (its training job was deleted before it
	// trained a router: its earlier router ranked, else the learned default router); empty
	// when its router ranked or it has none yet.
	RouterFallback string `json:"router_fallback,omitempty"`
	// TradeoffFallback says the request's tradeoff could not reorder the ranking, so the
	// quality order stands: "no_latency_data" (tradeoff "latency", but no candidate had a
	// latency: none given, reported for the preference or measured by the server) or
	// "no_price_data" (tradeoff "cost", but no candidate had a price); empty when the
	// tradeoff had figures to compare, or without one.
	TradeoffFallback string `json:"tradeoff_fallback,omitempty"`
}

// ModelSelect asks the server which candidate should answer the conversation.
func (c *Client) ModelSelect(ctx context.Context, req *ModelSelectRequest) (*ModelSelectResponse, error) {
	var out ModelSelectResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/model-select", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ModelSelectRaw sends a request body as given (e.g. read from a file in either shape the
// spec allows, or with "models" in place of "llm_providers") and decodes the answer.
func (c *Client) ModelSelectRaw(ctx context.Context, body any) (*ModelSelectResponse, error) {
	var out ModelSelectResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/model-select", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
