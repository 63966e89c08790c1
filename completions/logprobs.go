package completions

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/providers"
)

// answerLogprobs is an answer's Response.Logprobs: nil when preq did not ask for them,
// else got's tokens (an empty set when the upstream gave none), so that a surface answers
// a request that asked with a logprobs object.
func answerLogprobs(preq *providers.Request, got *providers.Logprobs) *providers.Logprobs {
	if !preq.Logprobs {
		return nil
	}
	out := &providers.Logprobs{}
	if got != nil {
		out.Content, out.Refusal = got.Content, got.Refusal
	}
	return out
}

// OpenAILogprobs is a chat choice's logprobs object (OpenAI's): the log probabilities of
// the answer's tokens (Content) and of its refusal's (Refusal; null when it has none).
type OpenAILogprobs struct {
	Content []providers.TokenLogprob `json:"content" jsonschema:"description=The log probability of each token of the answer's text with the likeliest alternatives (top_logprobs) at its position"`
	Refusal []providers.TokenLogprob `json:"refusal" jsonschema:"nullable,description=The log probability of each token of the model's refusal; null without one"`
}

// openAILogprobs is a chat choice's logprobs for an answer's lp (Response.Logprobs): nil
// (null) when the request did not ask, else its tokens, content an empty list when the
// answer has none but a refusal's.
func openAILogprobs(lp *providers.Logprobs) *OpenAILogprobs {
	if lp == nil {
		return nil
	}
	out := &OpenAILogprobs{Content: lp.Content, Refusal: lp.Refusal}
	if out.Content == nil {
		out.Content = []providers.TokenLogprob{}
	}
	return out
}

// chatLogprobs reads chat completions' logprobs (a boolean or null) and top_logprobs (an
// integer from 0 to 20, or null; with logprobs only, as OpenAI asks).
func chatLogprobs(logprobs, top json.RawMessage) (bool, int, error) {
	var on bool
	if present(logprobs) {
		if err := json.Unmarshal(logprobs, &on); err != nil {
			return false, 0, invalid("logprobs", "must be a boolean, got %s", logprobs)
		}
	}
	var n int
	if present(top) {
		if err := json.Unmarshal(top, &n); err != nil {
			return false, 0, invalid("top_logprobs", "must be an integer from 0 to %d, got %s", providers.MaxTopLogprobs, top)
		}
		if n < 0 || n > providers.MaxTopLogprobs {
			return false, 0, invalid("top_logprobs", "must be between 0 and %d, got %d", providers.MaxTopLogprobs, n)
		}
		if n > 0 && !on {
			return false, 0, invalid("top_logprobs", "needs logprobs: true")
		}
	}
	return on, n, nil
}

// MaxTextLogprobs is the most alternatives per token a legacy completion's logprobs may
// ask for (OpenAI's bound).
const MaxTextLogprobs = 5

// OpenAITextLogprobs is a legacy text_completion choice's logprobs: per token of the
// answer, its text, its log probability, the likeliest alternatives at its position (token
// to log probability) and its character offset in the choice's text (after the prompt,
// with echo).
type OpenAITextLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// textLogprobs is the legacy logprobs of tokens, the first at character offset of the
// choice's text, and the offset after the last.
func textLogprobs(tokens []providers.TokenLogprob, offset int) (*OpenAITextLogprobs, int) {
	out := &OpenAITextLogprobs{Tokens: make([]string, len(tokens)), TokenLogprobs: make([]float64, len(tokens)),
		TopLogprobs: make([]map[string]float64, len(tokens)), TextOffset: make([]int, len(tokens))}
	for i, t := range tokens {
		out.Tokens[i], out.TokenLogprobs[i], out.TextOffset[i] = t.Token, t.Logprob, offset
		top := make(map[string]float64, len(t.TopLogprobs))
		for _, a := range t.TopLogprobs {
			top[a.Token] = a.Logprob
		}
		out.TopLogprobs[i] = top
		offset += utf8.RuneCountInString(t.Token)
	}
	return out, offset
}

// ResponsesLogprobsInclude is the include value of a Responses request that asks for the
// log probabilities of the answer's tokens.
const ResponsesLogprobsInclude = "message.output_text.logprobs"
