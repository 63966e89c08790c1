package providers

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ./internal/catalogfilter -in ../../shared/data/fixtures/catalogs/litellm_model_prices_and_context_window.json -out catalogdata/litellm_chat_prices.json

// litellmChatPrices is the LiteLLM catalogue (MIT, see catalogdata/LICENSE.litellm)
// reduced to chat models.
//
//go:embed catalogdata/litellm_chat_prices.json
var litellmChatPrices []byte

// ErrInvalidCatalog is matched by errors from parsing a price catalogue.
var ErrInvalidCatalog = errors.New("providers: invalid price catalogue")

// Price is one chat model's catalogue entry. Rates are USD per token. A rate the catalogue
// does not give separately (cache read, cache write, reasoning) equals the plain input or
// output rate.
type Price struct {
	// Key is the catalogue key the model matched (e.g. "gpt-4o", "gemini/gemini-2.5-flash").
	Key string
	// Provider is the catalogue's provider name (LiteLLM's litellm_provider).
	Provider string
	// Known is false when the entry lacks an input or output rate; Cost then reports an
	// unknown price rather than a made-up one.
	Known                 bool
	InputPerToken         float64
	OutputPerToken        float64
	CacheReadPerToken     float64
	CacheCreationPerToken float64
	// CacheCreation1hPerToken prices writes to Anthropic's one-hour cache
	// (Usage.CacheCreation1hTokens): the catalogue's rate, else twice the input rate.
	CacheCreation1hPerToken float64
	ReasoningPerToken       float64
	// InputPerAudioToken prices the audio part of a chat prompt (Usage.PromptAudioTokens:
	// input_audio parts): LiteLLM's input_cost_per_audio_token; 0 for the input rate.
	InputPerAudioToken float64
	// OutputPerAudioToken prices a spoken answer's tokens (Usage.CompletionAudioTokens):
	// LiteLLM's output_cost_per_audio_token; 0 for the output rate.
	OutputPerAudioToken     float64
	MaxInputTokens          int // 0 when the catalogue does not say
	MaxOutputTokens         int
	SupportsFunctionCalling bool
	SupportsWebSearch       bool
	SupportsReasoning       bool
	// SupportsVision says the model takes images in user turns (LiteLLM's supports_vision).
	SupportsVision bool
	// SearchPerQuery is the fee of one search of the provider's own web search (LiteLLM's
	// search_context_cost_per_query at medium context; for OpenAI's models, which the
	// catalogue gives none, the price of its Responses API web_search call), in USD.
	SearchPerQuery float64
	// Tiers are the rates of long prompts, shortest threshold first (LiteLLM's
	// *_above_<N>k_tokens: Gemini 2.5 Pro and Claude Sonnet 4.x above 200,000 prompt tokens,
	// GPT-5.4 above 272,000, Gemini 1.5 above 128,000): a call whose prompt is longer than a
	// tier's threshold is priced, input and output, at that tier's rates.
	Tiers []PriceTier
}

// PriceTier is a model's rates for prompts longer than Above tokens. A rate the catalogue
// does not give for the tier is the base rate (as LiteLLM prices it).
type PriceTier struct {
	Above                 int
	InputPerToken         float64
	OutputPerToken        float64
	CacheReadPerToken     float64
	CacheCreationPerToken float64
}

// at returns p with the rates of the longest tier whose threshold a prompt of n tokens
// passes (p itself when none).
func (p Price) at(n int) Price {
	for i := len(p.Tiers) - 1; i >= 0; i-- {
		if t := p.Tiers[i]; n > t.Above {
			q := p
			q.InputPerToken, q.OutputPerToken, q.CacheReadPerToken, q.CacheCreationPerToken =
				t.InputPerToken, t.OutputPerToken, t.CacheReadPerToken, t.CacheCreationPerToken
			if p.OutputPerToken > 0 {
				q.ReasoningPerToken = p.ReasoningPerToken * t.OutputPerToken / p.OutputPerToken
			}
			if p.InputPerToken > 0 {
				q.CacheCreation1hPerToken = p.CacheCreation1hPerToken * t.InputPerToken / p.InputPerToken
			}
			return q
		}
	}
	return p
}

// tierKey matches LiteLLM's long-prompt rates ("input_cost_per_token_above_200k_tokens");
// variants for other service tiers ("…_priority") do not match.
var tierKey = regexp.MustCompile(`^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|cache_creation_input_token_cost)_above_(\d+)k_tokens$`)

// tiers reads the long-prompt tiers of a catalogue entry's raw fields.
func tiers(raw map[string]json.RawMessage, base Price) []PriceTier {
	byAbove := map[int]map[string]float64{}
	for k, v := range raw {
		m := tierKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		var f flexFloat
		if json.Unmarshal(v, &f) != nil || !f.ok {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if byAbove[n*1000] == nil {
			byAbove[n*1000] = map[string]float64{}
		}
		byAbove[n*1000][m[1]] = f.v
	}
	var out []PriceTier
	for above, r := range byAbove {
		in, ok := r["input_cost_per_token"]
		if !ok {
			in = base.InputPerToken
		}
		t := PriceTier{Above: above, InputPerToken: in, OutputPerToken: base.OutputPerToken,
			CacheReadPerToken: base.CacheReadPerToken, CacheCreationPerToken: base.CacheCreationPerToken}
		if v, ok := r["output_cost_per_token"]; ok {
			t.OutputPerToken = v
		}
		if v, ok := r["cache_read_input_token_cost"]; ok {
			t.CacheReadPerToken = v
		}
		if v, ok := r["cache_creation_input_token_cost"]; ok {
			t.CacheCreationPerToken = v
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b PriceTier) int { return a.Above - b.Above })
	return out
}

// Cost is the price of one call's usage in USD.
type Cost struct {
	InputUSD  float64 `json:"input_tokens_cost"`
	OutputUSD float64 `json:"output_tokens_cost"`
	TotalUSD  float64 `json:"total_tokens_cost"`
	// Known is false when the model has no catalogue price; the amounts are then 0 (or,
	// for an audio call priced only in part, the part that could be: Catalog.AudioCost).
	Known bool `json:"price_known"`
	// SearchUSD is the fee of the provider's own web searches (Usage.WebSearches), apart
	// from TotalUSD, which is the tokens' cost.
	SearchUSD float64 `json:"search_cost,omitempty"`
}

// Catalog prices models. It is immutable once built and safe for concurrent use.
type Catalog struct {
	entries map[string]Price
	// canon maps CanonicalModel of every key to the keys, for ids that match no key
	// exactly.
	canon map[string][]string
	// embed is the catalogue of embedding models (mode "embedding"); nil in itself.
	embed *Catalog
	// audio is the catalogue of audio models (modes "audio_transcription" and
	// "audio_speech"), for Lookup; audioRates their rates by catalogue key. Nil in
	// themselves.
	audio      *Catalog
	audioRates map[string]AudioPrice
	// rerank is the catalogue of rerank models (mode "rerank"), for Lookup; rerankRates
	// their rates by catalogue key. Nil in themselves.
	rerank      *Catalog
	rerankRates map[string]RerankPrice
	// images are the rates of image models (mode "image_generation") by catalogue key.
	images map[string]ImagePrice
	// imageCanon maps imageCanonicalKey of every image key to the keys, for image model
	// names that match no key exactly (LookupImage).
	imageCanon map[string][]string
	// realtime is the catalogue of realtime models (mode "realtime"), for Lookup;
	// realtimeRates their rates by catalogue key. Nil in themselves.
	realtime      *Catalog
	realtimeRates map[string]RealtimePrice
	// own are the models priced at their own rates (WithOwnPrices), by their exact
	// "provider/model" name: Lookup finds them before any catalogue key, and no other name
	// finds them. Nil in itself.
	own map[string]Price
}

// newCatalog returns the catalogue of entries with its canonical index.
func newCatalog(entries map[string]Price) *Catalog {
	c := &Catalog{entries: entries, canon: make(map[string][]string, len(entries))}
	for key := range entries {
		k := CanonicalModel(key)
		c.canon[k] = append(c.canon[k], key)
	}
	return c
}

// flexFloat accepts a JSON number or a numeric string.
type flexFloat struct {
	v  float64
	ok bool
}

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	var n float64
	if json.Unmarshal(b, &n) == nil {
		f.v, f.ok = n, true
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			f.v, f.ok = n, true
		}
	}
	return nil // descriptive strings (LiteLLM's sample_spec) are ignored
}

type catalogEntry struct {
	Provider          string    `json:"litellm_provider"`
	Mode              string    `json:"mode"`
	Input             flexFloat `json:"input_cost_per_token"`
	Output            flexFloat `json:"output_cost_per_token"`
	CacheRead         flexFloat `json:"cache_read_input_token_cost"`
	CacheCreation     flexFloat `json:"cache_creation_input_token_cost"`
	CacheCreation1h   flexFloat `json:"cache_creation_input_token_cost_above_1hr"`
	Reasoning         flexFloat `json:"output_cost_per_reasoning_token"`
	MaxInput          flexFloat `json:"max_input_tokens"`
	MaxOutput         flexFloat `json:"max_output_tokens"`
	FunctionCalling   bool      `json:"supports_function_calling"`
	WebSearch         bool      `json:"supports_web_search"`
	SupportsReasoning bool      `json:"supports_reasoning"`
	Vision            bool      `json:"supports_vision"`
	// The rates of audio models (AudioPrice).
	InputPerSecond      flexFloat `json:"input_cost_per_second"`
	OutputPerSecond     flexFloat `json:"output_cost_per_second"`
	InputPerCharacter   flexFloat `json:"input_cost_per_character"`
	InputPerAudioToken  flexFloat `json:"input_cost_per_audio_token"`
	OutputPerAudioToken flexFloat `json:"output_cost_per_audio_token"`
	// The cached audio input rates of realtime models (RealtimePrice).
	CacheReadAudio     flexFloat `json:"cache_read_input_audio_token_cost"`
	CacheCreationAudio flexFloat `json:"cache_creation_input_audio_token_cost"`
	// The rate of rerank models priced per query (RerankPrice).
	InputPerQuery flexFloat `json:"input_cost_per_query"`
	// The rates of image models (ImagePrice).
	InputPerImage       flexFloat `json:"input_cost_per_image"`
	InputPerPixel       flexFloat `json:"input_cost_per_pixel"`
	InputPerImageToken  flexFloat `json:"input_cost_per_image_token"`
	OutputPerImageToken flexFloat `json:"output_cost_per_image_token"`
	SearchCost          *struct {
		Low    flexFloat `json:"search_context_size_low"`
		Medium flexFloat `json:"search_context_size_medium"`
		High   flexFloat `json:"search_context_size_high"`
	} `json:"search_context_cost_per_query"`
}

func (e catalogEntry) price(key string) Price {
	p := Price{
		Key: key, Provider: e.Provider, Known: e.Input.ok && e.Output.ok,
		InputPerToken: e.Input.v, OutputPerToken: e.Output.v,
		CacheReadPerToken: e.Input.v, CacheCreationPerToken: e.Input.v, ReasoningPerToken: e.Output.v,
		MaxInputTokens: int(e.MaxInput.v), MaxOutputTokens: int(e.MaxOutput.v),
		SupportsFunctionCalling: e.FunctionCalling, SupportsWebSearch: e.WebSearch, SupportsReasoning: e.SupportsReasoning, SupportsVision: e.Vision,
	}
	if e.CacheRead.ok {
		p.CacheReadPerToken = e.CacheRead.v
	}
	if e.CacheCreation.ok {
		p.CacheCreationPerToken = e.CacheCreation.v
	}
	p.CacheCreation1hPerToken = 2 * e.Input.v
	if e.CacheCreation1h.ok {
		p.CacheCreation1hPerToken = e.CacheCreation1h.v
	}
	if e.Reasoning.ok {
		p.ReasoningPerToken = e.Reasoning.v
	}
	if e.InputPerAudioToken.ok {
		p.InputPerAudioToken = e.InputPerAudioToken.v
	}
	if e.OutputPerAudioToken.ok {
		p.OutputPerAudioToken = e.OutputPerAudioToken.v
	}
	if sc := e.SearchCost; sc != nil {
		for _, f := range []flexFloat{sc.Medium, sc.Low, sc.High} {
			if f.ok {
				p.SearchPerQuery = f.v
				break
			}
		}
	}
	if p.SearchPerQuery == 0 && e.Provider == "openai" {
		p.SearchPerQuery = openAISearchCall(key)
	}
	return p
}

// openAISearchCall is the price of one web_search call of OpenAI's Responses API for model
// (OpenAI's pricing page, 2025: $10 per 1,000 calls for its reasoning models and GPT-5,
// $25 per 1,000 for GPT-4o and GPT-4.1, whose search content tokens are free); 0 for
// models that do not search there.
func openAISearchCall(model string) float64 {
	switch {
	case !openAIResponsesSearch(model):
		return 0
	case strings.HasPrefix(model, "gpt-4o"), strings.HasPrefix(model, "gpt-4.1"):
		return 0.025
	}
	return 0.010
}

// ParseCatalog parses a catalogue in LiteLLM's model_prices_and_context_window.json format,
// keeping chat models (entries whose mode is "chat" or absent, and OpenAI's of mode
// "responses": the models only its Responses API serves, which the OpenAI adapter calls
// there), embedding models (Embeddings), audio models (AudioPrice) and rerank models
// (RerankPrice), each apart.
func ParseCatalog(data []byte) (*Catalog, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidCatalog, err)
	}
	entries := make(map[string]Price, len(raw))
	embed := map[string]Price{}
	audio, rates := map[string]Price{}, map[string]AudioPrice{}
	rerank, rerankRates := map[string]Price{}, map[string]RerankPrice{}
	images := map[string]ImagePrice{}
	realtime, realtimeRates := map[string]Price{}, map[string]RealtimePrice{}
	for key, msg := range raw {
		var e catalogEntry
		if json.Unmarshal(msg, &e) != nil {
			continue // e.g. LiteLLM's top-level "last_updated" string
		}
		if e.Mode == AudioTranscription || e.Mode == AudioSpeech {
			// Kept apart: chat model lists and prices never see them.
			audio[key], rates[key] = Price{Key: key, Provider: e.Provider}, e.audioPrice(key)
			continue
		}
		if e.Mode == RerankMode {
			rerank[key], rerankRates[key] = Price{Key: key, Provider: e.Provider}, e.rerankPrice(key)
			continue
		}
		if e.Mode == ImageMode {
			images[key] = e.imagePrice(key)
			continue
		}
		if e.Mode == RealtimeMode {
			// Kept apart: chat model lists and prices never see them.
			realtime[key], realtimeRates[key] = Price{Key: key, Provider: e.Provider}, e.realtimePrice(key)
			continue
		}
		if e.Mode == "embedding" {
			p := e.price(key)
			p.Known = e.Input.ok // embeddings have no output tokens
			embed[key] = p
			continue
		}
		if e.Mode != "" && e.Mode != "chat" && (e.Mode != "responses" || e.Provider != "openai") {
			continue
		}
		p := e.price(key)
		if bytes.Contains(msg, []byte("k_tokens")) {
			var raw map[string]json.RawMessage
			if json.Unmarshal(msg, &raw) == nil {
				p.Tiers = tiers(raw, p)
			}
		}
		entries[key] = p
	}
	c := newCatalog(entries)
	c.embed = newCatalog(embed)
	c.audio, c.audioRates = newCatalog(audio), rates
	c.rerank, c.rerankRates = newCatalog(rerank), rerankRates
	c.images, c.imageCanon = images, imageIndex(images)
	c.realtime, c.realtimeRates = newCatalog(realtime), realtimeRates
	return c, nil
}

var defaultCatalog = sync.OnceValue(func() *Catalog {
	c, err := ParseCatalog(litellmChatPrices)
	if err != nil {
		panic("providers: embedded catalogue is invalid: " + err.Error())
	}
	return c
})

// DefaultCatalog returns the embedded LiteLLM catalogue, parsed on first use.
func DefaultCatalog() *Catalog { return defaultCatalog() }

// WithOverrides returns a new catalogue with o's entries added or replacing c's.
func (c *Catalog) WithOverrides(o *Catalog) *Catalog {
	entries := maps.Clone(c.entries)
	maps.Copy(entries, o.entries)
	out := newCatalog(entries)
	embed := map[string]Price{}
	for _, x := range []*Catalog{c.embed, o.embed} {
		if x != nil {
			maps.Copy(embed, x.entries)
		}
	}
	out.embed = newCatalog(embed)
	audio, rates := map[string]Price{}, map[string]AudioPrice{}
	for _, x := range []*Catalog{c, o} {
		if x.audio != nil {
			maps.Copy(audio, x.audio.entries)
			maps.Copy(rates, x.audioRates)
		}
	}
	out.audio, out.audioRates = newCatalog(audio), rates
	rerank, rerankRates := map[string]Price{}, map[string]RerankPrice{}
	for _, x := range []*Catalog{c, o} {
		if x.rerank != nil {
			maps.Copy(rerank, x.rerank.entries)
			maps.Copy(rerankRates, x.rerankRates)
		}
	}
	out.rerank, out.rerankRates = newCatalog(rerank), rerankRates
	realtime, realtimeRates := map[string]Price{}, map[string]RealtimePrice{}
	for _, x := range []*Catalog{c, o} {
		if x.realtime != nil {
			maps.Copy(realtime, x.realtime.entries)
			maps.Copy(realtimeRates, x.realtimeRates)
		}
	}
	out.realtime, out.realtimeRates = newCatalog(realtime), realtimeRates
	out.images = map[string]ImagePrice{}
	maps.Copy(out.images, c.images)
	maps.Copy(out.images, o.images)
	out.imageCanon = imageIndex(out.images)
	// Own prices (WithOwnPrices) stay the most specific.
	for _, x := range []*Catalog{c, o} {
		if len(x.own) > 0 {
			if out.own == nil {
				out.own = map[string]Price{}
			}
			maps.Copy(out.own, x.own)
		}
		if x.embed != nil && len(x.embed.own) > 0 {
			if out.embed.own == nil {
				out.embed.own = map[string]Price{}
			}
			maps.Copy(out.embed.own, x.embed.own)
		}
	}
	return out
}

// Embeddings returns the catalogue of embedding models (LiteLLM's mode "embedding"), whose
// Lookup, Cost and ChatModels work as this catalogue's do for chat models. It is never nil.
func (c *Catalog) Embeddings() *Catalog {
	if c == nil || c.embed == nil {
		return newCatalog(nil)
	}
	return c.embed
}

// EmbeddingCost prices the usage of an embeddings call of model ("provider/model"): its
// prompt tokens at the embedding model's input rate.
func (c *Catalog) EmbeddingCost(model string, u Usage) Cost { return c.Embeddings().Cost(model, u) }

// EmbeddingModels lists a provider's text embedding models as "provider/model" strings,
// as ChatModels lists its chat models.
func (c *Catalog) EmbeddingModels(provider string) []string {
	// Text models only: multimodal and contextualized ones have endpoints of their own.
	return slices.DeleteFunc(c.Embeddings().ChatModels(provider), func(m string) bool {
		return strings.Contains(m, "multimodal") || strings.Contains(m, "-context-")
	})
}

// LoadCatalog returns the embedded catalogue overridden by the LiteLLM-format file at
// path (an empty path returns DefaultCatalog; a leading UTF-8 byte order mark is skipped).
func LoadCatalog(path string) (*Catalog, error) {
	if path == "" {
		return DefaultCatalog(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("providers: reading price catalogue override: %w", err)
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: %w: the file is empty (a JSON object of model name to prices is expected)", path, ErrInvalidCatalog)
	}
	o, err := ParseCatalog(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return DefaultCatalog().WithOverrides(o), nil
}

// Len returns the number of models in the catalogue.
func (c *Catalog) Len() int { return len(c.entries) }

// catalogPrefix maps our provider names to LiteLLM key prefixes ("" = bare model name).
func catalogPrefix(provider string) (string, bool) {
	switch provider {
	case "openai", "anthropic", "cohere", "jina":
		return "", true
	case "together":
		return "together_ai/", true
	case "fireworks":
		return "fireworks_ai/", true
	case "gemini", "mistral", "groq", "deepseek", "xai", "openrouter", "ollama", "voyage":
		return provider + "/", true
	}
	return "", false
}

// catalogProvider maps our provider names to LiteLLM's litellm_provider where they differ.
func catalogProvider(provider string) string {
	switch provider {
	case "together":
		return "together_ai"
	case "fireworks":
		return "fireworks_ai"
	case "jina":
		return "jina_ai"
	}
	return provider
}

// Lookup finds a model given as "provider/model" (or a bare catalogue key). It tries the
// provider's LiteLLM key (e.g. "openai/gpt-4o" → "gpt-4o", "together/x" → "together_ai/x"),
// then "provider/model" verbatim, then the bare model name. An id that matches no key is
// then looked up by its CanonicalModel form, so "anthropic/claude-3.5-haiku-latest",
// "anthropic/claude-3-5-haiku-20241022" and "openrouter/anthropic/claude-3.5-haiku" all
// find a claude-3-5-haiku entry. Among the entries of that canonical form it prefers one
// with a price, then one of the same provider, then one of a gateway that resells at the
// vendor's list price (OpenRouter, Vercel AI Gateway), then a cloud's (Bedrock, Vertex
// AI, Azure), then any other; the shortest key first, then the first in lexical order.
func (c *Catalog) Lookup(model string) (Price, bool) {
	if c == nil {
		return Price{}, false
	}
	if p, ok := c.own[model]; ok {
		return p, true
	}
	var keys []string
	prov, m, err := ParseModel(model)
	if err == nil && prov == "bedrock" {
		return c.lookupBedrock(m)
	}
	if err == nil {
		if pre, ok := catalogPrefix(prov); ok {
			keys = append(keys, pre+m)
		}
		keys = append(keys, model, m)
	} else {
		keys = append(keys, model)
	}
	for _, k := range keys {
		if p, ok := c.entries[k]; ok {
			return p, true
		}
	}
	if p, ok := c.lookupFineTune(keys[len(keys)-1]); ok {
		return p, true
	}
	canon := CanonicalModel(model)
	if p, ok := c.lookupCanonical(catalogProvider(prov), canon); ok {
		return p, true
	}
	if strings.HasPrefix(canon, "claude-3-5-sonnet-v2") {
		// Vertex AI's name of Claude 3.5 Sonnet's second version (claude-3-5-sonnet-v2@20241022),
		// which costs what the first does.
		return c.lookupCanonical(catalogProvider(prov), "claude-3-5-sonnet")
	}
	return Price{}, false
}

// lookupFineTune prices an OpenAI fine-tuned model's id ("ft:gpt-4o-mini-2024-07-18:org::abc",
// "ft:gpt-3.5-turbo-0613:org:suffix:id", checkpoints too) at its base model's fine-tuning
// entry ("ft:gpt-4o-mini-2024-07-18"), as LiteLLM's cost calculator does: the base's
// own name, else its name without trailing "-…" parts ("ft:gpt-3.5-turbo"). Fine-tuned
// models cost more than their base, so the base model's own price is not used.
func (c *Catalog) lookupFineTune(m string) (Price, bool) {
	rest, ok := strings.CutPrefix(m, "ft:")
	if !ok {
		return Price{}, false
	}
	base, _, _ := strings.Cut(rest, ":")
	for base != "" {
		if p, ok := c.entries["ft:"+base]; ok {
			return p, true
		}
		i := strings.LastIndexByte(base, '-')
		if i < 0 {
			break
		}
		base = base[:i]
	}
	return Price{}, false
}

// lookupBedrock finds the Bedrock model m (a "bedrock/…" string without its prefix) among
// the catalogue's Bedrock entries only, as another provider's price for the same model is
// not Bedrock's: "bedrock/"+m as it is (LiteLLM's region entries, "bedrock/us-gov-west-1/…"),
// the region's entry for a region-prefixed id or an ARN's model (a GovCloud ARN costs
// GovCloud's rates), the bare model id ("anthropic.claude-3-5-sonnet-20240620-v1:0",
// "us.anthropic.…" profiles), an ARN's model or inference profile id. Nothing else: an id
// the catalogue does not list (an unlisted geo profile, another version, a name that is not
// a Bedrock id) has no price, rather than a guess from an entry of the same canonical form
// (a geo profile can cost more than its base id).
func (c *Catalog) lookupBedrock(m string) (Price, bool) {
	id, region := bedrockTarget(m)
	keys := []string{"bedrock/" + m}
	model := id
	if i := strings.LastIndexByte(id, '/'); strings.HasPrefix(id, "arn:") && i >= 0 {
		model = id[i+1:] // a foundation model's or a system inference profile's id
	}
	if region != "" {
		keys = append(keys, "bedrock/"+region+"/"+model)
	}
	keys = append(keys, id)
	if model != id {
		keys = append(keys, model)
	}
	for _, k := range keys {
		if p, ok := c.entries[k]; ok && strings.HasPrefix(p.Provider, "bedrock") {
			return p, true
		}
	}
	return Price{}, false
}

// inProviderFamily reports whether a catalogue entry listed under entryProvider is
// provider's own: the same provider, or one of its partner lists (vertex_ai's
// vertex_ai-anthropic_models and the like).
func inProviderFamily(entryProvider, provider string) bool {
	return entryProvider == provider || strings.HasPrefix(entryProvider, provider+"-")
}

// lookupCanonical picks the best entry of canonical form canon for provider (a LiteLLM
// provider name; "" for none), as Lookup describes.
func (c *Catalog) lookupCanonical(provider, canon string) (Price, bool) {
	return c.lookupCanonicalWhere(provider, canon, nil)
}

// lookupCanonicalWhere is lookupCanonical among the entries keep accepts (all for nil).
func (c *Catalog) lookupCanonicalWhere(provider, canon string, keep func(Price) bool) (Price, bool) {
	if canon == "" {
		return Price{}, false
	}
	rank := func(p Price) [3]int {
		known := 0
		if !p.Known {
			known = 1
		}
		// Among equals, an entry whose cache reads are discounted prices cached prompts right
		// (several gateways list Claude 3.5 Sonnet, some with cache reads at the input rate).
		noCache := 0
		if p.CacheReadPerToken <= 0 || p.CacheReadPerToken >= p.InputPerToken {
			noCache = 1
		}
		class := 3
		switch {
		case provider != "" && inProviderFamily(p.Provider, provider):
			class = 0
		case p.Provider == "openrouter" || p.Provider == "vercel_ai_gateway":
			class = 1
		case strings.HasPrefix(p.Provider, "bedrock") || strings.HasPrefix(p.Provider, "vertex_ai") || strings.HasPrefix(p.Provider, "azure"):
			class = 2
		}
		return [3]int{known, class, noCache}
	}
	var best Price
	found := false
	for _, k := range c.canon[canon] {
		p := c.entries[k]
		if keep != nil && !keep(p) {
			continue
		}
		if !found {
			best, found = p, true
			continue
		}
		rp, rb := rank(p), rank(best)
		if c := slices.Compare(rp[:], rb[:]); c < 0 || c == 0 && (len(k) < len(best.Key) || len(k) == len(best.Key) && k < best.Key) {
			best = p
		}
	}
	return best, found
}

// Cost prices u for model. Cached prompt tokens are priced at the cache-read rate, cache
// writes at the cache-creation rate, the prompt's and the answer's audio tokens at the
// audio rates and reasoning tokens at the reasoning rate where the catalogue has them. An
// unknown model costs 0 with Known false. Tiered (long-context) rates are not applied.
func (c *Catalog) Cost(model string, u Usage) Cost {
	p, ok := c.Lookup(model)
	if !ok || !p.Known {
		return Cost{}
	}
	return p.Cost(u)
}

// Cost prices u at p's rates.
func (p Price) Cost(u Usage) Cost {
	if !p.Known {
		return Cost{}
	}
	p = p.at(u.PromptTokens)
	uncached := max(u.PromptTokens-u.CachedTokens-u.CacheCreationTokens, 0)
	// The prompt's audio (uncached: a recording's tokens are its own) at the audio rate.
	audio, audioRate := min(u.PromptAudioTokens, uncached), p.InputPerAudioToken
	if audioRate == 0 {
		audioRate = p.InputPerToken
	}
	plainOut := max(u.CompletionTokens-u.ReasoningTokens, 0)
	audioOut, audioOutRate := min(u.CompletionAudioTokens, plainOut), p.OutputPerAudioToken
	if audioOutRate == 0 {
		audioOutRate = p.OutputPerToken
	}
	oneHour := min(u.CacheCreation1hTokens, u.CacheCreationTokens)
	in := float64(uncached-audio)*p.InputPerToken + float64(audio)*audioRate + float64(u.CachedTokens)*p.CacheReadPerToken +
		float64(u.CacheCreationTokens-oneHour)*p.CacheCreationPerToken + float64(oneHour)*p.CacheCreation1hPerToken
	out := float64(plainOut-audioOut)*p.OutputPerToken + float64(audioOut)*audioOutRate + float64(u.ReasoningTokens)*p.ReasoningPerToken
	return Cost{InputUSD: in, OutputUSD: out, TotalUSD: in + out, Known: true, SearchUSD: float64(u.WebSearches) * p.SearchPerQuery}
}

// SupportsFunctionCalling reports whether the catalogue says model takes tools.
func (c *Catalog) SupportsFunctionCalling(model string) bool {
	p, ok := c.Lookup(model)
	return ok && p.SupportsFunctionCalling
}

// MaxInputTokens returns the model's context limit from the catalogue, 0 when unknown.
func (c *Catalog) MaxInputTokens(model string) int {
	p, _ := c.Lookup(model)
	return p.MaxInputTokens
}

// ChatModels returns the catalogue's chat models served by provider, as "provider/model"
// strings, sorted: for openai, anthropic, cohere and jina the bare LiteLLM keys of that
// provider (LiteLLM's jina_ai for jina), for the others the keys under the provider's
// LiteLLM prefix (gemini/..., together_ai/...). A
// provider the catalogue does not cover has none. Entries no chat request can name are left
// out: fine-tuning price templates ("ft:…"), realtime models and Gemini's native-audio
// (Live API) models. Chat-mode audio models (gpt-4o-audio-preview, gpt-audio) are listed:
// chat requests call them, for spoken answers too. Transcription and speech models are
// not in the chat catalogue (AudioModels lists them).
func (c *Catalog) ChatModels(provider string) []string {
	return c.listed(provider, callableChatKey)
}

// listed lists the models of provider whose catalogue keys keep accepts, as ChatModels
// lists them.
func (c *Catalog) listed(provider string, keep func(key string) bool) []string {
	if c == nil {
		return nil
	}
	pre, ok := catalogPrefix(provider)
	if !ok && provider != "bedrock" {
		return nil
	}
	var out []string
	for key, p := range c.entries {
		if provider == "bedrock" {
			// Bedrock's model ids and inference profiles are the bare keys of its entries.
			if (p.Provider == "bedrock" || p.Provider == "bedrock_converse") && !strings.Contains(key, "/") && keep(key) {
				out = append(out, "bedrock/"+key)
			}
			continue
		}
		if !keep(key) {
			continue
		}
		switch {
		case pre == "":
			if p.Provider == catalogProvider(provider) && !strings.Contains(key, "/") {
				out = append(out, provider+"/"+key)
			}
		case strings.HasPrefix(key, pre):
			out = append(out, provider+"/"+strings.TrimPrefix(key, pre))
		}
	}
	slices.Sort(out)
	return out
}

// callableChatKey reports whether a catalogue key of the chat catalogue names a model a
// chat request can call: not a fine-tuning price template ("ft:gpt-4o-2024-08-06"), nor a
// realtime model, nor one of Gemini's native-audio models (catalogued as chat, served by
// the Live API only). OpenAI's chat-mode audio models (gpt-4o-audio-preview, gpt-audio)
// are callable.
func callableChatKey(key string) bool {
	name := key[strings.LastIndexByte(key, '/')+1:]
	return !fineTuningTemplate(key) && !strings.Contains(name, "realtime") && !strings.Contains(name, "native-audio")
}

// fineTuningTemplate reports whether a catalogue key is a fine-tuning price template
// ("ft:gpt-4o-2024-08-06"), which prices a caller's fine-tuned models and names none.
func fineTuningTemplate(key string) bool {
	return strings.HasPrefix(key[strings.LastIndexByte(key, '/')+1:], "ft:")
}
