package providers

// The catalogue modes of the other requests a gateway answers, beside ImageMode,
// RerankMode, AudioTranscription and AudioSpeech (LiteLLM's names).
const (
	// EmbeddingMode is the mode of embedding models (text-embedding-3-small, …).
	EmbeddingMode = "embedding"
	// ModerationMode is the mode of moderation models (omni-moderation-latest, …); the
	// catalogue keeps none (moderation is free), so no model is listed as one.
	ModerationMode = "moderation"
)

// ChatModelNotOf reports whether the catalogue lists model ("provider/model", found as
// Lookup finds it) as a chat model and not as a model of mode (EmbeddingMode,
// AudioTranscription, AudioSpeech, RerankMode, ImageMode, ModerationMode): a request of
// that mode naming it would reach an API the model does not serve. A model the catalogue
// does not list as a chat model, or lists as one of mode too, is not; so is any model for
// another mode (realtime, chat itself).
func (c *Catalog) ChatModelNotOf(model, mode string) bool {
	if c == nil {
		return false
	}
	if _, chat := c.Lookup(model); !chat || c.OwnEmbedding(model) {
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
