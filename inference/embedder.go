package inference

import "context"

// Embedder turns texts into vectors. Implementations are safe for concurrent use once
// constructed (and, for the n-gram embedder, fitted).
type Embedder interface {
	// Name is a stable identifier of the embedding method, e.g. "ngram-tfidf-v1"; it is
	// reported as a router's embedding_model and keys the embedding cache.
	Name() string
	// Dim is the number of dimensions of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order. It stops with ctx.Err() when ctx is
	// cancelled.
	Embed(ctx context.Context, texts []string) ([]Vector, error)
}

// stagedEmbedder splits an embedder into an expensive per-text stage that does not depend
// on fitted state (cacheable by text) and a cheap finishing stage that may (the n-gram
// embedder applies its fitted IDF there).
type stagedEmbedder interface {
	Embedder
	// cacheNamespace identifies the raw stage's output: same namespace and text, same vector.
	cacheNamespace() string
	// raw computes the cacheable stage for texts.
	raw(ctx context.Context, texts []string) ([]Vector, error)
	// finish turns raw vectors into final embeddings, in place or not.
	finish(raw []Vector) []Vector
}

// embedBatchSize is how many texts are embedded between cancellation checks.
const embedBatchSize = 64
