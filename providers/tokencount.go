package providers

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Local token counting, for upstreams that report no usage (some OpenAI-compatible
// servers, streams cut short, gateways in front of other gateways). The counts come from
// github.com/tiktoken-go/tokenizer, a pure-Go port of OpenAI's tiktoken with the BPE
// vocabularies embedded (nothing is downloaded at run time):
//
//   - OpenAI models use their own encoding: o200k_base for gpt-4o, gpt-4.1, gpt-4.5,
//     gpt-5, gpt-oss, chatgpt-4o and the o1/o3/o4 reasoning models; cl100k_base for gpt-4
//     and gpt-3.5. These counts are those of OpenAI's tokenizer.
//   - Every other family (Anthropic, Gemini, Llama, Mistral, DeepSeek, ...) has no Go
//     tokenizer, so its text is counted with cl100k_base: an estimate, usually within
//     10-20% of the model's own count for English text and code.
//
// Either way the result is an estimate of what the upstream billed (chat formatting is
// approximated the way OpenAI documents it: 3 tokens per message plus 3 to prime the
// reply), and callers mark it as such.

// Tokenizer encodings used by TokenEncoding.
const (
	EncodingO200k  = "o200k_base"
	EncodingCl100k = "cl100k_base"
)

// Chat formatting overhead, as OpenAI documents it for its chat models: every message
// costs 3 tokens besides its role and content, and the reply is primed with 3 more.
const (
	tokensPerMessage = 3
	tokensPerReply   = 3
	// tokensPerName is what a message's name costs besides its own tokens (OpenAI's
	// tokens_per_name, as LiteLLM's token_counter counts it).
	tokensPerName = 1
)

// maxExactTokenize bounds the text tokenized at once; the count of a longer text is
// extrapolated from its first part (tokenizing megabytes on the request path is not worth
// the precision).
const maxExactTokenize = 1 << 20

var codecs struct {
	o200k, cl100k         tokenizer.Codec
	o200kOnce, cl100kOnce sync.Once
}

// codec returns the codec of encoding (EncodingO200k or EncodingCl100k), loaded once on
// first use: the vocabularies are large.
func codec(encoding string) tokenizer.Codec {
	load := func(enc tokenizer.Encoding) tokenizer.Codec {
		c, err := tokenizer.Get(enc)
		if err != nil {
			panic("providers: tokenizer encoding " + string(enc) + " missing: " + err.Error())
		}
		return c
	}
	if encoding == EncodingO200k {
		codecs.o200kOnce.Do(func() { codecs.o200k = load(tokenizer.O200kBase) })
		return codecs.o200k
	}
	codecs.cl100kOnce.Do(func() { codecs.cl100k = load(tokenizer.Cl100kBase) })
	return codecs.cl100k
}

// TokenEncoding returns the tokenizer encoding used to count model's tokens (model is
// "provider/model", a bare model name, or a router's "openrouter/openai/gpt-4o"), and
// whether it is the model's own tokenizer (exact is true for OpenAI models only; other
// families are counted with cl100k_base as an estimate).
func TokenEncoding(model string) (encoding string, exact bool) {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if name == p || strings.HasPrefix(name, p+"-") || strings.HasPrefix(name, p+".") || strings.HasPrefix(name, p+":") {
				return true
			}
		}
		return false
	}
	switch {
	case has("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4", "ft:gpt-4o"):
		return EncodingO200k, true
	case has("gpt-4", "gpt-3.5", "gpt-35", "ft:gpt-4", "ft:gpt-3.5"):
		return EncodingCl100k, true
	}
	return EncodingCl100k, false
}

// CountTokens returns the number of tokens of text in model's encoding (see TokenEncoding).
func CountTokens(model, text string) int {
	enc, _ := TokenEncoding(model)
	return countTokens(codec(enc), text)
}

func countTokens(c tokenizer.Codec, text string) int {
	if text == "" {
		return 0
	}
	if len(text) > maxExactTokenize {
		head := strings.ToValidUTF8(text[:maxExactTokenize], "")
		n := countTokens(c, head)
		return int(float64(n) * float64(len(text)) / float64(max(len(head), 1)))
	}
	n, err := c.Count(text)
	if err != nil { // the codecs fail only in their strict UTF-8 mode, which is not used
		return (len(text) + 3) / 4
	}
	return n
}

// EstimateUsage counts the usage of a call of model locally, for an upstream that reported
// none: the prompt over req's messages (role, text, name, tool calls and the call id a tool
// result answers; an image as OpenAI counts one of 1024×1024 pixels, a PDF by its size), tool definitions (name, description, parameter schema) and assistant
// prefix, with OpenAI's documented chat overhead (3 tokens per message, 3 for the reply);
// a recording (input_audio) by its size, those tokens also in PromptAudioTokens so that
// they are priced at the audio input rate where the catalogue has one; the completion over
// the answer's text (a spoken answer's transcript), refusal and tool calls (names and
// arguments).
// req or resp may be nil. The counts are exact tokenizer counts for OpenAI models and a
// cl100k_base estimate for other families (see TokenEncoding); the result is always an
// estimate of what was billed.
func EstimateUsage(model string, req *Request, resp *Response) Usage {
	enc, _ := TokenEncoding(model)
	c := codec(enc)
	var u Usage
	if req != nil {
		n := tokensPerReply
		for _, m := range req.Messages {
			n += tokensPerMessage + countTokens(c, m.Role) + countTokens(c, m.Content) + countTokens(c, m.ToolCallID)
			if m.Name != "" {
				n += tokensPerName + countTokens(c, m.Name)
			}
			n += countCalls(c, m.ToolCalls)
			for _, p := range m.Parts {
				if p.Image != nil {
					n += imageTokens(p.Image)
				}
				if p.File != nil {
					n += fileTokens(p.File)
				}
				if p.Audio != nil {
					a := audioTokens(p.Audio)
					n += a
					u.PromptAudioTokens += a // priced at the audio input rate, as reported ones
				}
			}
		}
		for _, t := range req.Tools {
			n += tokensPerMessage + countTokens(c, t.Name) + countTokens(c, t.Description) + countTokens(c, string(t.Parameters))
		}
		n += countTokens(c, req.AssistantPrefix)
		u.PromptTokens = n
	}
	if resp != nil {
		for _, r := range resp.Reasoning {
			u.ReasoningTokens += countTokens(c, r.Text) // shown reasoning; redacted is not counted
		}
		u.CompletionTokens = countTokens(c, resp.Text) + countTokens(c, resp.Refusal) + countCalls(c, resp.ToolCalls) + u.ReasoningTokens
		if resp.Audio != nil {
			// A spoken answer's text is its transcript (OpenAI bills it as the answer's text
			// tokens); its audio tokens are not guessed (the voice's pace is unknown).
			u.CompletionTokens += countTokens(c, resp.Audio.Transcript)
		}
	}
	return u
}

func countCalls(c tokenizer.Codec, calls []ToolCall) int {
	n := 0
	for _, tc := range calls {
		n += tokensPerMessage + countTokens(c, tc.Name) + countTokens(c, tc.Arguments)
	}
	return n
}
