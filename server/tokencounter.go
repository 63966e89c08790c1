package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// tokenCounterPath is LiteLLM's token counter route.
const tokenCounterPath = "/utils/token_counter"

// tokenCounterRequest is the body of LiteLLM's POST /utils/token_counter.
type tokenCounterRequest struct {
	Model    string                      `json:"model" jsonschema:"required,description=the model to count for: a model group (counted for its first deployment; an Azure deployment by its base_model) or provider/model or a bare name; a name no provider here serves is counted by its name"`
	Prompt   *string                     `json:"prompt,omitempty" jsonschema:"description=text counted as it is (no chat formatting); not with messages"`
	Messages []completions.OpenAIMessage `json:"messages,omitempty" jsonschema:"description=OpenAI chat messages counted with OpenAI's chat overhead (3 tokens per message\\, 3 for the reply); not with prompt"`
	Tools    []completions.OpenAITool    `json:"tools,omitempty" jsonschema:"description=function tools counted beside messages (their name\\, description and parameters)"`
}

// tokenCounterAnswer is LiteLLM's TokenCountResponse.
type tokenCounterAnswer struct {
	TotalTokens  int    `json:"total_tokens" jsonschema:"description=the tokens counted"`
	RequestModel string `json:"request_model" jsonschema:"description=the model the request named"`
	ModelUsed    string `json:"model_used" jsonschema:"description=the model counted for: a model group's first deployment without its provider prefix (as LiteLLM reports it)\\, else the request's model"`
	// TokenizerType is LiteLLM's name of the tokenizer: always openai_tokenizer here
	// (tiktoken's encodings; other families are estimated with cl100k_base).
	TokenizerType string `json:"tokenizer_type" jsonschema:"description=openai_tokenizer: tiktoken's o200k_base or cl100k_base (the model's own for OpenAI models\\, an estimate for other families)"`
}

// tokenCounterRoute registers LiteLLM's POST /utils/token_counter: the tokens of a prompt
// or of chat messages, counted locally (providers.CountTokens, completions.EstimatePromptTokens)
// without calling any model.
func (s *Server) tokenCounterRoute(g *completions.Gateway) {
	s.Handle(Route{Method: "POST", Path: tokenCounterPath, Summary: "LiteLLM's token counter: the tokens of a prompt or of chat messages for a model, counted locally (tiktoken)",
		Tags: []string{"LiteLLM compatibility"}, Request: tokenCounterRequest{}, Response: tokenCounterAnswer{}, ScopedKeys: true,
		Errors: map[int]string{
			400: "no prompt and no messages, both, or a malformed message: the message names the field (param)",
			401: "key_model_access_denied (LiteLLM's): the key may not call the model",
		}},
		func(w http.ResponseWriter, r *http.Request) error { return s.handleTokenCounter(g, w, r) })
}

func (s *Server) handleTokenCounter(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	var req tokenCounterRequest
	if err := decodeJSON(r, &req, decodeOptions{AllowUnknownFields: true, ValidationStatus: http.StatusBadRequest}); err != nil {
		return s.openAIError(w, r, err)
	}
	name := strings.TrimSpace(req.Model)
	switch {
	case name == "":
		return s.openAIBadParam(w, r, "model", "model: is required")
	case req.Prompt == nil && req.Messages == nil:
		return s.openAIBadParam(w, r, "messages", "prompt or messages must be provided")
	case req.Prompt != nil && req.Messages != nil:
		return s.openAIBadParam(w, r, "prompt", "prompt: give prompt or messages, not both")
	case req.Messages != nil && len(req.Messages) == 0:
		return s.openAIBadParam(w, r, "messages", "messages: at least one message is required")
	case req.Prompt != nil && len(req.Tools) > 0:
		return s.openAIBadParam(w, r, "tools", "tools: counted only beside messages, not with prompt")
	}
	// A key's alias counts as the model it stands for (request_model stays as asked).
	name = keyAliasTarget(r, name)
	counted, used := tokenCounterModel(g, name)
	// An Azure deployment is counted in its base model's tokenizer (model_info.base_model).
	counted = g.BaseModel(counted)
	if !g.Allows(completionsScope(r, time.Now()), name) {
		return s.openAIError(w, r, fmt.Errorf("%w: %s", completions.ErrModelNotAllowed, name))
	}
	var n int
	if req.Prompt != nil {
		n = providers.CountTokens(counted, *req.Prompt)
	} else {
		chat := completions.OpenAIChatRequest{Model: name, Messages: req.Messages, Tools: req.Tools}
		creq, err := chat.ToRequest()
		if err != nil {
			return s.openAIError(w, r, err)
		}
		n = completions.EstimatePromptTokens(counted, creq)
	}
	writeJSON(w, http.StatusOK, tokenCounterAnswer{TotalTokens: n, RequestModel: req.Model, ModelUsed: used, TokenizerType: "openai_tokenizer"})
	return nil
}

// tokenCounterModel is the model name's tokens are counted for and the model_used LiteLLM
// reports: a model group's first deployment ("provider/model"; reported without the
// provider, as LiteLLM strips it from litellm_params.model), a model the gateway resolves
// (reported as named), else the name itself (LiteLLM counts any name). The caller counts
// in the tokenizer of counted's base model (Gateway.BaseModel).
func tokenCounterModel(g *completions.Gateway, name string) (counted, used string) {
	if g.IsModelGroup(name) {
		for _, d := range g.GroupDeployments() {
			if d.ModelName == name {
				_, model, _ := strings.Cut(d.Model, "/")
				return d.Model, model
			}
		}
	}
	if id, ok := g.ResolveModel(name); ok {
		return id, name
	}
	return name, name
}

// openAIBadParam answers a 400 in OpenAI's envelope whose param is param and whose message
// is format with args (LiteLLM's utility routes: /utils/token_counter, /spend/calculate).
func (s *Server) openAIBadParam(w http.ResponseWriter, r *http.Request, param, format string, args ...any) error {
	ae := Validation(http.StatusBadRequest, format, args...)
	ae.Param = param
	return s.openAIError(w, r, ae)
}
