package completions

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/invopop/jsonschema"
	"github.com/switchyard-ai/switchyard/providers"
)

// OpenAITextCompletionRequest is OpenAI's legacy POST /v1/completions body, which
// autocomplete tools and older libraries still send. As LiteLLM does for chat models, the
// prompt becomes one user message of a chat request (ToChatRequest): every model the
// gateway serves answers it, with the chat surface's fallbacks, retries, budgets and
// cache. logprobs (0 to 5) asks the chat request for log probabilities with that many
// alternatives, answered in the legacy shape (see OpenAITextLogprobs); best_of above 1 and
// suffix (fill-in-the-middle) are refused with a 400 naming the field.
type OpenAITextCompletionRequest struct {
	Model string `json:"model" jsonschema:"required"`
	// Prompt is a string, or an array of strings answered one by one (choices in prompt
	// order; not streamed). Token-id prompts are refused.
	Prompt OpenAIPrompt `json:"prompt" jsonschema:"required"`
	// Suffix is refused unless empty: chat models do not fill in the middle.
	Suffix      *string              `json:"suffix,omitempty"`
	MaxTokens   *int                 `json:"max_tokens,omitempty" jsonschema:"minimum=0"`
	Temperature *float64             `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=2"`
	TopP        *float64             `json:"top_p,omitempty" jsonschema:"minimum=0,maximum=1"`
	N           *int                 `json:"n,omitempty" jsonschema:"minimum=1,maximum=16"`
	Stream      bool                 `json:"stream,omitempty"`
	StreamOpts  *OpenAIStreamOptions `json:"stream_options,omitempty"`
	Stop        OpenAIStop           `json:"stop,omitempty"`
	// Echo puts the prompt before the answer in each choice's text.
	Echo bool `json:"echo,omitempty"`
	// Logprobs asks for the log probability of each token of the answer and of that many
	// likeliest alternatives at each position (0 to 5; null for none): each choice's
	// logprobs (see OpenAITextLogprobs). Only models that give them are tried, as on chat
	// completions.
	Logprobs *int `json:"logprobs,omitempty" jsonschema:"minimum=0,maximum=5,description=Return the log probability of each token of the answer with that many likeliest alternatives (0 to 5)"`
	// BestOf is refused above 1 (the gateway makes one answer per choice).
	BestOf *int `json:"best_of,omitempty" jsonschema:"-"`
	// OpenAIOptions are seed, frequency_penalty, presence_penalty, logit_bias and user, as on
	// chat completions.
	providers.OpenAIOptions
	FallbackModels []string `json:"fallback_models,omitempty"`
	MaxRetries     *int     `json:"max_retries,omitempty" jsonschema:"minimum=0,maximum=10"`
	// LiteLLMFallbacks are LiteLLM's request fallbacks and context_window_fallbacks, as on
	// chat completions.
	LiteLLMFallbacks
	FaultPolicy
	Cache *CacheControl `json:"cache,omitempty"`
	// Guardrails names opt-in guardrails to run on the request (an extension, LiteLLM's
	// request-body "guardrails"; see Request.Guardrails).
	Guardrails []string `json:"guardrails,omitempty"`
	// Metadata's "tags" become the request's tags, as on chat completions.
	Metadata json.RawMessage `json:"metadata,omitempty" jsonschema:"type=object"`
	// Tags is LiteLLM's request-body "tags" (an array of strings or one comma-separated
	// string), as on chat completions: the request's tags beside metadata's.
	Tags json.RawMessage `json:"tags,omitempty" jsonschema:"oneof_type=array;string,description=LiteLLM's request tags (an array of strings or one comma-separated string): added to metadata.tags"`
	// LiteLLMMetadata is LiteLLM's litellm_metadata: its user names the request's end user
	// when the body's user does not.
	LiteLLMMetadata *LiteLLMMetadata `json:"litellm_metadata,omitempty" jsonschema:"description=LiteLLM's metadata for the gateway (never sent upstream): its user names the request's end user"`
	// LiteLLMMocks are LiteLLM's testing switches, as on chat completions: a mock_response
	// is each choice's text.
	LiteLLMMocks
}

// OpenAIPrompt is a legacy completion's prompt: a string or an array of strings.
type OpenAIPrompt []string

// UnmarshalJSON reads a string or an array of strings; token ids are refused by name.
// null leaves the prompt unset (so "prompt is required"), as a missing prompt does.
func (p *OpenAIPrompt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*p = OpenAIPrompt{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err == nil {
		*p = many
		return nil
	}
	// Named by the decoder: "prompt".
	return &json.UnmarshalTypeError{Value: "neither a string nor an array of strings (token-id prompts are not supported)", Type: reflect.TypeFor[OpenAIPrompt]()}
}

// JSONSchema describes prompt for invopop/jsonschema.
func (OpenAIPrompt) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "array", Items: &jsonschema.Schema{Type: "string"}}}}
}

// MaxPrompts bounds the prompts of one legacy completion request.
const MaxPrompts = 16

// ToChatRequests returns the chat request of each prompt, in order.
func (r *OpenAITextCompletionRequest) ToChatRequests() ([]*OpenAIChatRequest, error) {
	switch {
	case r.Model == "":
		return nil, invalid("model", "is required")
	case len(r.Prompt) == 0:
		return nil, invalid("prompt", "is required")
	case len(r.Prompt) > MaxPrompts:
		return nil, invalid("prompt", "at most %d prompts, got %d", MaxPrompts, len(r.Prompt))
	case len(r.Prompt) > 1 && r.Stream:
		return nil, invalid("prompt", "several prompts are not streamed; send them one by one or without stream")
	case r.Suffix != nil && *r.Suffix != "":
		return nil, invalid("suffix", "is not supported: chat models do not fill in the middle")
	case r.MaxTokens != nil && *r.MaxTokens < 0:
		return nil, invalid("max_tokens", "must not be negative, got %d", *r.MaxTokens)
	case r.Logprobs != nil && (*r.Logprobs < 0 || *r.Logprobs > MaxTextLogprobs):
		return nil, invalid("logprobs", "must be between 0 and %d, got %d", MaxTextLogprobs, *r.Logprobs)
	case r.BestOf != nil && *r.BestOf > 1:
		return nil, invalid("best_of", "is not supported above 1; ask for n choices instead")
	}
	out := make([]*OpenAIChatRequest, len(r.Prompt))
	for i, p := range r.Prompt {
		if strings.TrimSpace(p) == "" {
			field := "prompt"
			if len(r.Prompt) > 1 {
				field = "prompt[" + strconv.Itoa(i) + "]"
			}
			return nil, invalid(field, "must not be empty")
		}
		c := &OpenAIChatRequest{Model: r.Model, Temperature: r.Temperature, MaxTokens: r.MaxTokens, TopP: r.TopP, N: r.N,
			Stream: r.Stream, StreamOptions: r.StreamOpts, Stop: r.Stop, FallbackModels: r.FallbackModels, MaxRetries: r.MaxRetries,
			FaultPolicy: r.FaultPolicy, Cache: r.Cache, Metadata: r.Metadata, Tags: r.Tags, LiteLLMMetadata: r.LiteLLMMetadata, Guardrails: r.Guardrails,
			LiteLLMMocks: r.LiteLLMMocks, LiteLLMFallbacks: r.LiteLLMFallbacks,
			Messages: []OpenAIMessage{{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: p}}, IsString: true}}}}
		if r.MaxTokens != nil && *r.MaxTokens == 0 {
			// OpenAI's legacy completions take 0 (its minimum; chat's is 1): the model's
			// default here, as it always was.
			c.MaxTokens = nil
		}
		c.OpenAIOptions = r.OpenAIOptions
		if r.Logprobs != nil {
			c.Logprobs, c.TopLogprobs = json.RawMessage("true"), json.RawMessage(strconv.Itoa(*r.Logprobs))
		}
		out[i] = c
	}
	return out, nil
}

// OpenAITextCompletion is OpenAI's "text_completion" object.
type OpenAITextCompletion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []OpenAITextChoice `json:"choices"`
	Usage   *OpenAIUsage       `json:"usage,omitempty"`
	// Switchyard carries the gateway's costs and attempts (extension; those of the first
	// prompt's answer, with every answer's attempts).
	Switchyard *OpenAIExtension `json:"switchyard,omitempty"`
}

// OpenAITextChoice is one choice of a text_completion; Logprobs is null unless the
// request asked for them (logprobs).
type OpenAITextChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *OpenAITextLogprobs `json:"logprobs" jsonschema:"nullable"`
	FinishReason string              `json:"finish_reason"`
}

// NewOpenAITextCompletion renders the answers of a legacy completion request: answers[i]
// are prompt i's choices (fewer than n when some failed), at least one in all. A choice's
// index is OpenAI's, prompt × n + its place among the prompt's choices, so that a client
// pairs it with its prompt even when a choice before it failed. With echo each choice's
// text starts with its prompt.
func NewOpenAITextCompletion(req *OpenAITextCompletionRequest, answers [][]*Response, created time.Time) *OpenAITextCompletion {
	var all []*Response
	for _, a := range answers {
		all = append(all, a...)
	}
	n := 1
	if req.N != nil {
		n = max(*req.N, 1)
	}
	chat := NewOpenAIChatCompletionN(all, created)
	out := &OpenAITextCompletion{ID: "cmpl-" + strings.TrimPrefix(chat.ID, "chatcmpl-"), Object: "text_completion", Created: chat.Created,
		Model: chat.Model, Usage: chat.Usage, Switchyard: chat.Switchyard}
	for p, a := range answers {
		for j, r := range a {
			text := r.Text()
			offset := 0
			if req.Echo {
				text = req.Prompt[p] + text
				offset = utf8.RuneCountInString(req.Prompt[p])
			}
			var lp *OpenAITextLogprobs
			if r.Logprobs != nil {
				lp, _ = textLogprobs(r.Logprobs.Content, offset)
			}
			out.Choices = append(out.Choices, OpenAITextChoice{Text: text, Index: p*n + j, Logprobs: lp, FinishReason: finishReason(r.FinishReason)})
		}
	}
	return out
}

// WriteOpenAITextFiltered writes resp, a content filter's refusal (no text, finish reason
// content_filter), as a text_completion: whole, or as a one-chunk stream (with its usage
// when asked, then [DONE]), as the chat surface answers one.
func WriteOpenAITextFiltered(w http.ResponseWriter, req *OpenAITextCompletionRequest, resp *Response, created time.Time, stream bool) {
	tc := NewOpenAITextCompletion(&OpenAITextCompletionRequest{Prompt: req.Prompt}, [][]*Response{{resp}}, created)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode(tc)
		return
	}
	sse := NewSSEWriter(w)
	fr := tc.Choices[0].FinishReason
	ck := openAITextChunk{ID: tc.ID, Object: tc.Object, Created: tc.Created, Model: tc.Model,
		Choices: []openAITextChoice{{FinishReason: &fr}}}
	if err := sse.Buffer("", ck); err != nil {
		return
	}
	if req.StreamOpts != nil && req.StreamOpts.IncludeUsage {
		ck.Choices, ck.Usage = []openAITextChoice{}, tc.Usage
		if err := sse.Buffer("", ck); err != nil {
			return
		}
	}
	_ = sse.Done()
}

// openAITextChunk is a streamed text_completion chunk.
type openAITextChunk struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []openAITextChoice `json:"choices"`
	Usage   *OpenAIUsage       `json:"usage,omitempty"`
}

type openAITextChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *OpenAITextLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

// WriteOpenAITextStreamN sends the n choices of m (Gateway.StreamN) of req's one prompt to
// w as one text_completion stream, as OpenAI streams n choices, and closes m: every chunk
// has the same id and created and carries one choice, by index (the choices that started
// numbered 0 to k-1, as WriteOpenAIStreamN numbers them); with echo each choice starts with
// the prompt; each choice's last chunk has its finish reason; the chunks of different
// choices interleave as they arrive. The usage summed over the choices comes last when
// asked, then "data: [DONE]". A choice failing mid-stream ends the stream with an error
// event and stops the others.
func WriteOpenAITextStreamN(w http.ResponseWriter, m *MultiStream, req *OpenAITextCompletionRequest) error {
	defer m.Close()
	sse := NewSSEWriter(w)
	m.NotifyWait(func() { _ = sse.Flush() })
	first := m.stream(m.Choices()[0])
	index := make(map[int]int, len(m.Choices()))
	model := make(map[int]string, len(m.Choices()))
	offset := make(map[int]int, len(m.Choices())) // characters of each choice's text so far
	chunk := func(i int, text string, finish *string) openAITextChunk {
		return openAITextChunk{ID: "cmpl-" + first.ResponseMessageID(), Object: "text_completion", Created: first.Created().Unix(),
			Model: model[i], Choices: []openAITextChoice{{Text: text, Index: index[i], FinishReason: finish}}}
	}
	for pos, i := range m.Choices() {
		st := m.stream(i)
		index[i], model[i] = pos, st.Provider()+"/"+st.Model()
		if req.Echo {
			offset[i] = utf8.RuneCountInString(req.Prompt[0])
			if err := sse.Buffer("", chunk(i, req.Prompt[0], nil)); err != nil {
				return err
			}
		}
	}
	for {
		ev, err := m.Recv()
		if errors.Is(err, io.EOF) {
			if req.StreamOpts != nil && req.StreamOpts.IncludeUsage {
				var sum Response
				for _, i := range m.Choices() {
					r := m.Response(i)
					sum.Usage = addUsage(sum.Usage, r.Usage)
					sum.UsageEstimated = sum.UsageEstimated || r.UsageEstimated
				}
				ck := chunk(m.Choices()[0], "", nil)
				ck.Choices, ck.Usage = []openAITextChoice{}, openAIUsage(&sum)
				if err := sse.Buffer("", ck); err != nil {
					return err
				}
			}
			return sse.Done()
		}
		if err != nil {
			writeOpenAIStreamError(sse, err)
			return err
		}
		switch c := ev.Chunk; {
		case ev.Done:
			fr := finishReason(m.Response(ev.Choice).FinishReason)
			err = sse.Buffer("", chunk(ev.Choice, "", &fr))
		case c.Type == EventText && c.Text != "":
			if c.Model != "" {
				model[ev.Choice] = c.Provider + "/" + c.Model // a fallback continued the stream
			}
			ck := chunk(ev.Choice, c.Text, nil)
			if c.Logprobs != nil {
				ck.Choices[0].Logprobs, _ = textLogprobs(c.Logprobs.Content, offset[ev.Choice])
			}
			offset[ev.Choice] += utf8.RuneCountInString(c.Text)
			err = sse.Buffer("", ck)
		}
		if err != nil {
			return err
		}
	}
}

// WriteOpenAITextStream relays st as OpenAI's streamed text_completion chunks (the text
// only: a legacy completion has no tool calls or reasoning), then the finish chunk, the
// usage chunk when asked, and "data: [DONE]". A failure after the stream started is an
// error event, as on chat completions.
func WriteOpenAITextStream(w http.ResponseWriter, st *ResponseStream, req *OpenAITextCompletionRequest) error {
	defer st.Close()
	sse := NewSSEWriter(w)
	afterFragment := relay(st, sse)
	chunk := func(text string, finish *string) openAITextChunk {
		return openAITextChunk{ID: "cmpl-" + st.ResponseMessageID(), Object: "text_completion", Created: st.Created().Unix(),
			Model: st.Provider() + "/" + st.Model(), Choices: []openAITextChoice{{Text: text, FinishReason: finish}}}
	}
	offset := 0 // characters of the choice's text so far (text_offset)
	if req.Echo {
		offset = utf8.RuneCountInString(req.Prompt[0])
		if err := sse.Buffer("", chunk(req.Prompt[0], nil)); err != nil {
			return err
		}
	}
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			resp := st.Response()
			fr := finishReason(resp.FinishReason)
			if err := sse.Buffer("", chunk("", &fr)); err != nil {
				return err
			}
			if req.StreamOpts != nil && req.StreamOpts.IncludeUsage {
				ck := chunk("", nil)
				ck.Choices, ck.Usage = []openAITextChoice{}, openAIUsage(resp)
				if err := sse.Buffer("", ck); err != nil {
					return err
				}
			}
			return sse.Done()
		}
		if err != nil {
			code := "stream_failed"
			_ = sse.Event("", OpenAIErrorBody{Error: OpenAIErrorObject{Message: err.Error(), Type: "upstream_error", Code: &code}})
			return err
		}
		if c.Type != EventText || c.Text == "" {
			continue
		}
		ck := chunk(c.Text, nil)
		if c.Logprobs != nil {
			ck.Choices[0].Logprobs, _ = textLogprobs(c.Logprobs.Content, offset)
		}
		offset += utf8.RuneCountInString(c.Text)
		if err := sse.Buffer("", ck); err != nil {
			return err
		}
		if err := afterFragment(); err != nil {
			return err
		}
	}
}
