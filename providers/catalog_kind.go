package providers

import "strings"

// The catalogue modes of the other requests a gateway answers, beside ImageMode,
// RerankMode, AudioTranscription and AudioSpeech (LiteLLM's names).
const (
	// EmbeddingMode is the mode of embedding models (text-embedding-3-small, …).
	EmbeddingMode = "embedding"
	// ModerationMode is the mode of moderation models (omni-moderation-latest, …); the
	// catalogue keeps none (moderation is free), so no model is listed as one.
	ModerationMode = "moderation"
)

// ChatModelNotOf reports whether the catalogue lists model ("provider/model") as a chat
// model and not as a model of mode (EmbeddingMode, AudioTranscription, AudioSpeech,
// RerankMode, ImageMode, ModerationMode): a request of that mode naming it would reach an
// API the model does not serve. A model the catalogue does not list as a chat model of its
// own provider (see listsAsOwnChat), or lists as one of mode too, is not; so is any model
// for another mode (realtime, chat itself).
func (c *Catalog) ChatModelNotOf(model, mode string) bool {
	if c == nil {
		return false
	}
	if !c.listsAsOwnChat(model) || c.OwnEmbedding(model) {
		return false
	}
	switch mode {
	case EmbeddingMode:
		_, ok := c.Embeddings().Lookup(model)
		return !ok
	case AudioTranscription, AudioSpeech:
		p, ok := c.LookupAudio(model)
		return !ok || p.Mode != mode
	case RerankMode:
		_, ok := c.LookupRerank(model)
		return !ok
	case ImageMode:
		prov, m, err := ParseModel(model)
		if err != nil {
			return false
		}
		_, ok := c.LookupImage(prov, m)
		return !ok
	case ModerationMode:
		return true
	}
	return false
}

// listsAsOwnChat reports whether the catalogue lists model as a chat model by its own name
// (an operator's price, the provider's catalogue key, "provider/model" or the bare name, a
// fine-tuned model's base) or by another spelling of it at the same provider (Lookup's
// canonical match: "anthropic/claude-haiku-4-5-latest"). Another provider's entry of the
// same canonical name does not count: resellers list some models of other kinds as chat
// (Vercel AI Gateway's mistral/mistral-embed), so such a near miss would pass over, as a
// chat model, an embedding model the embedding catalogue does not know
// ("azure/mistral-embed"), where trying it costs one failed attempt at worst.
func (c *Catalog) listsAsOwnChat(model string) bool {
	p, ok := c.Lookup(model)
	if !ok {
		return false
	}
	if _, own := c.own[model]; own {
		return true
	}
	prov, m, err := ParseModel(model)
	if err != nil {
		return true // a bare catalogue key, found as it is
	}
	cp := catalogProvider(prov)
	ownProvider := func(p Price) bool {
		return p.Provider == cp || strings.HasPrefix(p.Provider, cp+"-") || strings.HasPrefix(p.Provider, cp+"_")
	}
	if ownProvider(p) || p.Key == model || p.Key == m || strings.HasPrefix(m, "ft:") {
		return true
	}
	if pre, ok := catalogPrefix(prov); ok && p.Key == pre+m {
		return true
	}
	_, ok = c.lookupCanonicalWhere(cp, CanonicalModel(model), ownProvider)
	return ok
}
