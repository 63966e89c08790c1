package server

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// spendCalculatePath is LiteLLM's cost calculator route.
const spendCalculatePath = "/spend/calculate"

// spendCalculateRequest is the body of LiteLLM's POST /spend/calculate: a request's
// model and messages (its cost before the call: the prompt's tokens, counted locally), or
// an answer (its cost after the call: the usage it reports).
type spendCalculateRequest struct {
	Model              string                      `json:"model,omitempty" jsonschema:"description=the model priced: a model group (priced as its most expensive deployment for the tokens priced: an upper bound whichever deployment the router picks) or provider/model or a bare name; with messages or with completion_response (whose usage it prices)"`
	Messages           []completions.OpenAIMessage `json:"messages,omitempty" jsonschema:"description=OpenAI chat messages: their tokens counted as /utils/token_counter counts them\\, priced as prompt tokens (no completion)"`
	CompletionResponse *spendCalculateAnswer       `json:"completion_response,omitempty" jsonschema:"description=an OpenAI chat completion (its model and usage): priced by the usage it reports at the price of model when given else of its own model (which may be a dated version of a model the key may call)"`
}

// spendCalculateAnswer is the part of a chat completion /spend/calculate prices.
type spendCalculateAnswer struct {
	Model string `json:"model" jsonschema:"description=the model that answered"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens" jsonschema:"description=the prompt's tokens\\, cache reads and writes included"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
			AudioTokens  int `json:"audio_tokens,omitempty"`
		} `json:"prompt_tokens_details,omitempty" jsonschema:"description=OpenAI's cached_tokens: the part of prompt_tokens read from the cache; audio_tokens: the part input_audio made (priced at the audio input rate)"`
		CompletionTokensDetails *struct {
			AudioTokens int `json:"audio_tokens,omitempty"`
		} `json:"completion_tokens_details,omitempty" jsonschema:"description=OpenAI's audio_tokens: the part of completion_tokens a spoken answer made (priced at the audio output rate)"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty" jsonschema:"description=Anthropic's (as LiteLLM reports it): the part of prompt_tokens written to the cache"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty" jsonschema:"description=Anthropic's (as LiteLLM reports it): the part of prompt_tokens read from the cache"`
	} `json:"usage"`
}

// spendCalculateResult is LiteLLM's answer: the cost in USD.
type spendCalculateResult struct {
	Cost float64 `json:"cost" jsonschema:"description=the cost in USD at the catalogue's prices (0 for a model it does not price)"`
}

// spendCalculateRoute registers LiteLLM's POST /spend/calculate: what a request would cost
// (its prompt) or what an answer cost (its usage, cache reads and writes priced at their
// rates), priced from the gateway's catalogue without calling any model.
func (s *Server) spendCalculateRoute(g *completions.Gateway) {
	s.Handle(Route{Method: "POST", Path: spendCalculatePath, Summary: "LiteLLM's cost calculator: the cost of a request's prompt or of an answer's usage, priced from the catalogue",
		Tags: []string{"LiteLLM compatibility"}, Request: spendCalculateRequest{}, Response: spendCalculateResult{}, ScopedKeys: true,
		Errors: map[int]string{
			400: "neither model with messages nor completion_response, or a malformed message: the message names the field (param)",
			401: "key_model_access_denied (LiteLLM's): the key may not call the model",
		}},
		func(w http.ResponseWriter, r *http.Request) error { return s.handleSpendCalculate(g, w, r) })
}

func (s *Server) handleSpendCalculate(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	var req spendCalculateRequest
	if err := decodeJSON(r, &req, decodeOptions{AllowUnknownFields: true, ValidationStatus: http.StatusBadRequest}); err != nil {
		return s.openAIError(w, r, err)
	}
	// A key's alias is priced as the model it stands for.
	asked := keyAliasTarget(r, strings.TrimSpace(req.Model))
	name := asked
	var u providers.Usage
	switch {
	case req.CompletionResponse != nil:
		a := req.CompletionResponse
		// The model asked, when given, is what is priced (a group's own price, which the
		// answer's model, as the upstream names it, does not carry); else the answer's.
		name = cmp.Or(asked, strings.TrimSpace(a.Model))
		if name == "" {
			return s.openAIBadParam(w, r, "completion_response.model", "completion_response.model: is required")
		}
		cached := a.Usage.CacheReadInputTokens
		if d := a.Usage.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
			cached = d.CachedTokens
		}
		if a.Usage.PromptTokens < 0 || a.Usage.CompletionTokens < 0 || cached < 0 || a.Usage.CacheCreationInputTokens < 0 {
			return s.openAIBadParam(w, r, "completion_response.usage", "completion_response.usage: token counts must not be negative")
		}
		u = providers.Usage{PromptTokens: a.Usage.PromptTokens, CompletionTokens: a.Usage.CompletionTokens,
			CachedTokens: min(cached, a.Usage.PromptTokens), CacheCreationTokens: min(a.Usage.CacheCreationInputTokens, a.Usage.PromptTokens-min(cached, a.Usage.PromptTokens))}
		// Audio counts are bounded by Price.Cost (to the uncached prompt, the completion).
		if d := a.Usage.PromptTokensDetails; d != nil {
			u.PromptAudioTokens = max(d.AudioTokens, 0)
		}
		if d := a.Usage.CompletionTokensDetails; d != nil {
			u.CompletionAudioTokens = max(d.AudioTokens, 0)
		}
	case name == "":
		return s.openAIBadParam(w, r, "model", "model: is required (with messages), or give completion_response")
	case len(req.Messages) == 0:
		return s.openAIBadParam(w, r, "messages", "messages: at least one message is required (or give completion_response)")
	}
	counted, _ := tokenCounterModel(g, name)
	// The model asked is held to the key's models as a request naming it is; an answer's
	// model as an answer to such a request may name it (gpt-4o-2024-08-06 for a key's gpt-4o).
	scope := completionsScope(r, time.Now())
	if asked != "" && !g.Allows(scope, asked) || asked == "" && !g.AllowsAnswer(scope, name) {
		return s.openAIError(w, r, fmt.Errorf("%w: %s", completions.ErrModelNotAllowed, name))
	}
	if req.CompletionResponse == nil {
		chat := completions.OpenAIChatRequest{Model: name, Messages: req.Messages}
		creq, err := chat.ToRequest()
		if err != nil {
			return s.openAIError(w, r, err)
		}
		est := completions.EstimatePromptUsage(counted, creq) // recordings at the audio input rate
		u.PromptTokens, u.PromptAudioTokens = est.PromptTokens, est.PromptAudioTokens
	}
	// Priced as the gateway bills a call of it (a deployment's own price, an Azure
	// deployment's base model); a group at its dearest member, whichever the router picks.
	writeJSON(w, http.StatusOK, spendCalculateResult{Cost: g.CostAs(name, u).TotalUSD})
	return nil
}
