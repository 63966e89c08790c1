package completions

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// PassThroughUsage is the usage of a pass-through request's answer, for PassThrough.End.
type PassThroughUsage struct {
	// Usage is the usage billed.
	Usage providers.Usage
	// Reported: the answer reported Usage (providers.UsageMeter).
	Reported bool
	// Estimated: the answer reported none and Usage was counted locally
	// (PassThrough.EstimateUsage), or it reported only part (a stream cut before its last
	// usage) and the completion was counted from its text; it is billed all the same and
	// marked estimated in the ledger and the history.
	Estimated bool
	// Embeddings: the request is an embeddings call (OpenAI's embeddings, Gemini's
	// embedContent and batchEmbedContents), priced as Gateway.Embed prices one, its input
	// tokens at the catalogue's embedding price, not as chat.
	Embeddings bool
	// Audio, when not nil, is a transcription's or translation's usage (its audio's
	// length: PassThroughAudioUsage), priced as Gateway.Transcribe prices one (Usage's
	// tokens are then not priced); Images likewise an image call's (PassThroughImageUsage),
	// priced as Gateway.GenerateImages prices one. Estimated marks them too.
	Audio  *providers.AudioUsage
	Images *providers.ImageUsage
}

// EstimateUsage counts the usage of a forwarded request whose answer reported none (an
// OpenAI chat stream without stream_options.include_usage, OpenAI's default; a JSON answer
// over providers.MaxMeteredBody), as LiteLLM works it out for its pass-through endpoints:
// the prompt from the request body (EstimatePassThroughPrompt) and the completion from
// the answer's text (providers.UsageMeter.AnswerTokens), in the tokenizer of the model
// the request names. whole is false when the answer could not be read (answer nil, or
// over providers.MaxMeteredBody): only the prompt is counted then.
func (pt *PassThrough) EstimateUsage(body []byte, answer *providers.UsageMeter) (u providers.Usage, whole bool) {
	u = estimatePassThroughPrompt(pt.t.provider, pt.t.name, body)
	if answer == nil {
		return u, false
	}
	u.CompletionTokens = answer.AnswerTokens(pt.t.name)
	return u, answer.Whole()
}

// EstimatePassThroughPrompt counts the prompt tokens of body, a request forwarded as it is
// to provider's own API ("openai", "anthropic", "gemini"), in model's tokenizer (see
// providers.TokenEncoding), as EstimatePromptTokens counts a gateway request: OpenAI's chat
// messages and tools, Anthropic's system, messages and tools, Gemini's contents,
// systemInstruction and tools, each read through the gateway's own translation of that
// API. A body of another shape (OpenAI's embeddings, legacy completions or Responses API
// input), or one the translation refuses, is counted as the text of its string values
// (the model's name aside), without chat formatting.
func EstimatePassThroughPrompt(provider, model string, body []byte) int {
	return estimatePassThroughPrompt(provider, model, body).PromptTokens
}

// estimatePassThroughPrompt is EstimatePassThroughPrompt with the part a conversation's
// recordings (OpenAI's input_audio parts) make as PromptAudioTokens,
// priced at the audio input rate.
func estimatePassThroughPrompt(provider, model string, body []byte) providers.Usage {
	if req := passThroughChat(provider, body); req != nil {
		if req.Model == "" {
			req.Model = model // ToRequest requires one; the count does not use it
		}
		if r, err := (&OpenAIChatRequest{Model: req.Model, Messages: req.Messages, Tools: req.Tools}).ToRequest(); err == nil {
			return EstimatePromptUsage(model, r)
		}
	}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return providers.Usage{}
	}
	var text strings.Builder
	bodyText(&text, doc, "")
	return providers.Usage{PromptTokens: providers.CountTokens(model, text.String())}
}

// passThroughChat is body's conversation as an OpenAI chat request (only its model,
// messages and tools), or nil when body has none this provider's translation reads.
func passThroughChat(provider string, body []byte) *OpenAIChatRequest {
	switch provider {
	case "openai":
		var c struct {
			Model    string          `json:"model"`
			Messages []OpenAIMessage `json:"messages"`
			Tools    []OpenAITool    `json:"tools"`
		}
		if json.Unmarshal(body, &c) != nil || len(c.Messages) == 0 {
			return nil
		}
		return &OpenAIChatRequest{Model: c.Model, Messages: c.Messages, Tools: c.Tools}
	case "anthropic":
		var a struct {
			Model    string             `json:"model"`
			System   AnthropicContent   `json:"system"`
			Messages []AnthropicMessage `json:"messages"`
			Tools    []AnthropicTool    `json:"tools"`
		}
		if json.Unmarshal(body, &a) != nil || len(a.Messages) == 0 {
			return nil
		}
		one := 1
		c, err := (&AnthropicMessagesRequest{Model: a.Model, MaxTokens: &one, System: a.System, Messages: a.Messages, Tools: a.Tools}).ToChatRequest()
		if err != nil {
			return nil
		}
		return c
	case "gemini":
		norm, err := NormalizeGeminiJSON(body, GeminiGenerateTopLevel)
		if err != nil {
			return nil
		}
		var g struct {
			Contents          []GeminiContent `json:"contents"`
			SystemInstruction *GeminiContent  `json:"systemInstruction"`
			Tools             []GeminiTool    `json:"tools"`
		}
		if json.Unmarshal(norm, &g) != nil || len(g.Contents) == 0 {
			return nil
		}
		c, err := (&GeminiGenerateRequest{Model: "gemini", Contents: g.Contents, SystemInstruction: g.SystemInstruction, Tools: g.Tools}).ToChatRequest()
		if err != nil {
			return nil
		}
		return c
	}
	return nil
}

// bodyText writes the string values of a decoded JSON document v to b, a line each,
// leaving out the value of a "model" key (key is the key v is under).
func bodyText(b *strings.Builder, v any, key string) {
	switch v := v.(type) {
	case string:
		if key != "model" {
			b.WriteString(v)
			b.WriteByte('\n')
		}
	case []any:
		for _, e := range v {
			bodyText(b, e, key)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) { // in one order: the count is the same every time
			bodyText(b, v[k], k)
		}
	}
}
