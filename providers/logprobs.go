package providers

// MaxTopLogprobs is the most alternatives per token a request may ask for
// (Request.TopLogprobs), as OpenAI bounds top_logprobs.
const MaxTopLogprobs = 20

// TokenLogprob is the log probability of one token of an answer (OpenAI's
// ChatCompletionTokenLogprob): the token, its natural-log probability, its UTF-8 bytes and
// the likeliest tokens at its position (TopLogprobs, at most the Request.TopLogprobs
// asked; empty when none were asked). Bytes is nil when the provider gave none for a
// token that is not valid text on its own (a piece of a character).
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes" jsonschema:"nullable"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one of the likeliest tokens at a position of an answer.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes" jsonschema:"nullable"`
}

// Logprobs are the log probabilities of an answer's tokens: of its text (Content) and of
// its refusal (Refusal, OpenAI's logprobs.refusal), in order.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
	Refusal []TokenLogprob `json:"refusal"`
}

// Empty reports whether l holds no token.
func (l *Logprobs) Empty() bool { return l == nil || len(l.Content) == 0 && len(l.Refusal) == 0 }

// Append adds more's tokens after l's.
func (l *Logprobs) Append(more *Logprobs) {
	if more == nil {
		return
	}
	l.Content = append(l.Content, more.Content...)
	l.Refusal = append(l.Refusal, more.Refusal...)
}

// LogprobsSupporter is implemented by adapters that can return log probabilities
// (Request.Logprobs): SupportsLogprobs reports whether model gives them for req, and
// why not when it does not. An adapter without it gives none, and Check refuses a
// request that asks for them (Anthropic, Bedrock, Vertex AI's Claude).
type LogprobsSupporter interface {
	SupportsLogprobs(model string, req *Request) (ok bool, why string)
}

// checkLogprobs is p's objection to req's log probabilities for model, or nil.
func checkLogprobs(p Provider, model string, req *Request) error {
	if !req.Logprobs {
		return nil
	}
	why := p.Name() + "'s API returns no log probabilities"
	if s, ok := p.(LogprobsSupporter); ok {
		var yes bool
		if yes, why = s.SupportsLogprobs(model, req); yes {
			return nil
		}
	}
	return &UnsupportedError{Provider: p.Name(), Field: "logprobs", Reason: why}
}

// tokenBytes is the UTF-8 bytes of token as OpenAI's bytes field lists them.
func tokenBytes(token string) []int {
	out := make([]int, len(token))
	for i := 0; i < len(token); i++ {
		out[i] = int(token[i])
	}
	return out
}

// openAILogprobs is a choice's logprobs object in OpenAI's chat format.
type openAILogprobs struct {
	Content []TokenLogprob `json:"content"`
	Refusal []TokenLogprob `json:"refusal"`
}

// decodeOpenAILogprobs reads a choice's logprobs value: nil for null, an empty object or
// one without tokens. A top_logprobs null becomes an empty list.
func decodeOpenAILogprobs(raw []byte) (*Logprobs, error) {
	if len(raw) == 0 || raw[0] == 'n' {
		return nil, nil
	}
	var l openAILogprobs
	if err := decodeUpstream(raw, &l); err != nil {
		return nil, err
	}
	out := &Logprobs{Content: l.Content, Refusal: l.Refusal}
	if out.Empty() {
		return nil, nil
	}
	for _, list := range [][]TokenLogprob{out.Content, out.Refusal} {
		for i := range list {
			if list[i].TopLogprobs == nil {
				list[i].TopLogprobs = []TopLogprob{}
			}
		}
	}
	return out, nil
}

// geminiLogprobsResult is a candidate's logprobsResult: the chosen token of each step and
// the likeliest tokens at it.
type geminiLogprobsResult struct {
	TopCandidates []struct {
		Candidates []geminiLogprobCandidate `json:"candidates"`
	} `json:"topCandidates"`
	ChosenCandidates []geminiLogprobCandidate `json:"chosenCandidates"`
}

type geminiLogprobCandidate struct {
	Token          string  `json:"token"`
	TokenID        int64   `json:"tokenId"`
	LogProbability float64 `json:"logProbability"`
}

// logprobs is r as OpenAI's per-token log probabilities: the chosen tokens, each with the
// step's top candidates; Gemini gives no bytes, so they are the token's own. nil when r
// has no chosen token.
func (r *geminiLogprobsResult) logprobs() *Logprobs {
	if r == nil || len(r.ChosenCandidates) == 0 {
		return nil
	}
	out := &Logprobs{Content: make([]TokenLogprob, len(r.ChosenCandidates))}
	for i, c := range r.ChosenCandidates {
		t := TokenLogprob{Token: c.Token, Logprob: c.LogProbability, Bytes: tokenBytes(c.Token), TopLogprobs: []TopLogprob{}}
		if i < len(r.TopCandidates) {
			for _, a := range r.TopCandidates[i].Candidates {
				t.TopLogprobs = append(t.TopLogprobs, TopLogprob{Token: a.Token, Logprob: a.LogProbability, Bytes: tokenBytes(a.Token)})
			}
		}
		out.Content[i] = t
	}
	return out
}

// openAIRefusesLogprobs reports whether OpenAI's (or an Azure deployment's) model refuses log
// probabilities: its reasoning models do (the catalogue's supports_reasoning, and the
// families openAIReasoningModel knows, for models the catalogue lacks).
func openAIRefusesLogprobs(family string) bool {
	if openAIReasoningModel(family) {
		return true
	}
	if p, ok := DefaultCatalog().Lookup("openai/" + family); ok && p.SupportsReasoning {
		return true
	}
	return false
}
