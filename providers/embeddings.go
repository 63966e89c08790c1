package providers

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Embedder is implemented by adapters whose provider computes embeddings: the OpenAI
// format (OpenAI and every OpenAI-compatible server: Azure, Mistral, Together, Fireworks,
// Voyage AI, vLLM, Ollama, ...) and Gemini. Anthropic has no embeddings API (it recommends
// Voyage AI's).
type Embedder interface {
	// Embed returns one vector per input, in the inputs' order. Failures are *Error values.
	Embed(ctx context.Context, req *EmbeddingRequest) (*EmbeddingResponse, error)
}

// EmbeddingRequest asks for the embeddings of Input (texts) or Tokens (token ids, which
// only the OpenAI format takes); exactly one is set.
type EmbeddingRequest struct {
	// Model is the provider's model name ("text-embedding-3-small").
	Model string
	// Input are the texts to embed.
	Input []string
	// Tokens are pre-tokenised inputs (OpenAI's array-of-token-arrays form).
	Tokens [][]int
	// Dimensions shortens the vectors where the model allows it (OpenAI's text-embedding-3
	// models, Gemini's outputDimensionality); 0 keeps the model's size.
	Dimensions int
	// User is OpenAI's end-user identifier, passed through; others ignore it.
	User string
}

// EmbeddingResponse is the vectors of an EmbeddingRequest's inputs, in order.
type EmbeddingResponse struct {
	Vectors [][]float32
	// Model is the model that answered, as the provider names it (may be empty).
	Model string
	// Usage counts the input tokens (PromptTokens); UsageEstimated says the provider
	// reported none and they were counted locally (Gemini).
	Usage          Usage
	UsageEstimated bool
}

// inputCount is how many inputs r carries.
func (r *EmbeddingRequest) inputCount() int { return len(r.Input) + len(r.Tokens) }

// maxEmbeddingBody bounds an embeddings answer: 2,048 vectors of 3,072 numbers are about
// 120 MiB of JSON, decoded as it is read (into about 25 MiB of float32s).
const maxEmbeddingBody = 160 << 20

type openAIEmbeddingRequest struct {
	Model           string `json:"model"`
	Input           any    `json:"input"`
	Dimensions      int    `json:"dimensions,omitempty"`
	OutputDimension int    `json:"output_dimension,omitempty"` // Voyage AI's name for it
	User            string `json:"user,omitempty"`
}

type openAIEmbeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	// Usage is OpenAI's (prompt_tokens), or Voyage's (total_tokens only).
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// Embed implements Embedder with POST {base}/embeddings, floats asked for (every
// OpenAI-compatible server speaks them; base64 is not universal).
func (o *OpenAI) Embed(ctx context.Context, req *EmbeddingRequest) (*EmbeddingResponse, error) {
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	body := openAIEmbeddingRequest{Model: req.Model, Dimensions: req.Dimensions, User: req.User, Input: req.Input}
	if o.ep.cfg.EmbeddingDimensionsField == "output_dimension" {
		body.Dimensions, body.OutputDimension = 0, req.Dimensions
	}
	if req.Tokens != nil {
		body.Input = req.Tokens
	}
	h := http.Header{}
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	c, err := o.ep.send(ctx, req.Model, o.url("/embeddings", req.Model), h, body, parseOpenAIError)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var r openAIEmbeddingResponse
	if err := c.decodeAll(maxEmbeddingBody, &r, "embeddings response"); err != nil {
		return nil, err
	}
	n := req.inputCount()
	// Vectors refused are a bad answer (KindBadResponse: not retried on the model, which
	// billed it), carrying the tokens the upstream said it billed.
	refuse := func(msg string) error {
		e := c.failure(KindBadResponse, msg, nil)
		if r.Usage != nil {
			if t := cmp.Or(r.Usage.PromptTokens, r.Usage.TotalTokens); t > 0 {
				e.Usage = &Usage{PromptTokens: t}
			}
		}
		return e
	}
	if len(r.Data) != n {
		return nil, refuse("embeddings response has " + strconv.Itoa(len(r.Data)) + " vectors for " + strconv.Itoa(n) + " inputs")
	}
	out := &EmbeddingResponse{Vectors: make([][]float32, n), Model: r.Model}
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out.Vectors[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, refuse("embeddings response has a missing, repeated or empty vector")
		}
		out.Vectors[d.Index] = d.Embedding
	}
	if r.Usage != nil {
		out.Usage.PromptTokens = cmp.Or(r.Usage.PromptTokens, r.Usage.TotalTokens)
	}
	switch {
	case out.Usage.PromptTokens > 0:
	case req.Tokens != nil: // the ids are the tokens: an exact count
		for _, ids := range req.Tokens {
			out.Usage.PromptTokens += len(ids)
		}
	default:
		out.Usage.PromptTokens, out.UsageEstimated = countInputs(req.Model, req.Input), true
	}
	return out, nil
}

type geminiEmbedContent struct {
	Parts []geminiPart `json:"parts"`
}

type geminiEmbedRequest struct {
	Model                string             `json:"model"`
	Content              geminiEmbedContent `json:"content"`
	OutputDimensionality int                `json:"outputDimensionality,omitempty"`
}

type geminiEmbedResponse struct {
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
	// UsageMetadata is sent by newer versions of the API only.
	UsageMetadata *struct {
		PromptTokenCount int `json:"promptTokenCount"`
	} `json:"usageMetadata"`
}

// Embed implements Embedder with Gemini's models/{model}:batchEmbedContents, in batches of
// 100 inputs (Gemini's limit), four at a time (on Vertex AI, {model}:predict in the batches
// Vertex takes: see Vertex); one batch failing fails the request (no
// further batch is sent; those in flight finish, and their tokens come with the failure). Where an answer has no token count
// (usageMetadata is recent) the inputs are counted locally (UsageEstimated).
// Token-id inputs are refused (KindBadRequest).
func (g *Gemini) Embed(ctx context.Context, req *EmbeddingRequest) (*EmbeddingResponse, error) {
	if err := g.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	if req.Tokens != nil {
		return nil, g.ep.errorf(req.Model, KindBadRequest, "model %s/%s takes text inputs, not token ids", g.Name(), req.Model)
	}
	model := strings.TrimPrefix(req.Model, "models/")
	out := &EmbeddingResponse{Vectors: make([][]float32, len(req.Input)), Model: model}
	bounds := g.embedBatches(model, req.Input)
	n := len(bounds) - 1
	type result struct {
		tokens  int
		counted bool
	}
	results := make([]result, n)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error // the first batch's failure
	)
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return failure != nil }
	sem := make(chan struct{}, geminiEmbedConcurrency)
	for b := range n {
		start := bounds[b]
		batch := req.Input[start:bounds[b+1]]
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil || failed() {
			break // no more batches once one failed: the request fails
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			// A failure does not cut the batches in flight: Google bills them anyway, and
			// their tokens are recorded with the failure.
			tokens, counted, err := g.embedBatch(ctx, req, model, batch, out.Vectors[start:start+len(batch)])
			if err != nil {
				mu.Lock()
				if failure == nil {
					failure = err
				}
				mu.Unlock()
				return
			}
			results[b] = result{tokens, counted}
		}()
	}
	wg.Wait()
	if failure == nil && ctx.Err() != nil {
		failure = ctx.Err()
	}
	if failure != nil {
		// The batches answered before it are billed by Google all the same: the failure
		// carries their tokens (Error.Usage), for the caller to record.
		billed, estimated := 0, false
		for _, r := range results {
			billed += r.tokens
			estimated = estimated || r.tokens > 0 && !r.counted
		}
		var pe *Error
		if billed > 0 && errors.As(failure, &pe) {
			cp := *pe
			cp.Usage, cp.UsageEstimated = &Usage{PromptTokens: billed}, estimated
			return nil, &cp
		}
		return nil, failure
	}
	for _, r := range results {
		out.Usage.PromptTokens += r.tokens
		out.UsageEstimated = out.UsageEstimated || !r.counted
	}
	return out, nil
}

// geminiEmbedConcurrency is how many batches of one request are in flight at once.
const geminiEmbedConcurrency = 4

// geminiEmbedBatch is the most inputs one batchEmbedContents call takes (Gemini refuses
// more: "at most 100 requests can be in one batch").
const geminiEmbedBatch = 100

// embedBatches splits inputs into the batches of one call each: bounds[i] is the first
// input of batch i, and the last bound len(inputs). Gemini's are of geminiEmbedBatch
// inputs, Vertex AI's as vertexEmbedBatches makes them.
func (g *Gemini) embedBatches(model string, inputs []string) []int {
	if g.tokens != nil {
		return vertexEmbedBatches(model, inputs)
	}
	bounds := make([]int, 0, len(inputs)/geminiEmbedBatch+2)
	for i := 0; i < len(inputs); i += geminiEmbedBatch {
		bounds = append(bounds, i)
	}
	return append(bounds, len(inputs))
}

// embedBatch embeds one batch of at most geminiEmbedBatch texts into vectors (one slot per
// text); it returns the batch's prompt tokens and whether Gemini counted them (else they
// were counted locally).
func (g *Gemini) embedBatch(ctx context.Context, req *EmbeddingRequest, model string, batch []string, vectors [][]float32) (int, bool, error) {
	if g.tokens != nil {
		if vertexEmbedContentModel(model) {
			return g.vertexEmbedContent(ctx, req, model, batch, vectors)
		}
		return g.vertexPredict(ctx, req, model, batch, vectors)
	}
	reqs := make([]geminiEmbedRequest, len(batch))
	for i, text := range batch {
		reqs[i] = geminiEmbedRequest{Model: "models/" + model, Content: geminiEmbedContent{Parts: []geminiPart{{Text: text}}},
			OutputDimensionality: req.Dimensions}
	}
	h := http.Header{}
	if err := g.setAuth(ctx, req.Model, h); err != nil {
		return 0, false, err
	}
	u := operationURL(g.baseURL, "/models/"+url.PathEscape(model)+":batchEmbedContents")
	c, err := g.ep.send(ctx, req.Model, u, h, map[string]any{"requests": reqs}, parseGeminiError)
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	var r geminiEmbedResponse
	if err := c.decodeAll(maxEmbeddingBody, &r, "embeddings response"); err != nil {
		return 0, false, err
	}
	if len(r.Embeddings) != len(batch) {
		return 0, false, c.failure(KindStreamBroken, "embeddings response has "+strconv.Itoa(len(r.Embeddings))+" vectors for "+strconv.Itoa(len(batch))+" inputs", nil)
	}
	for i, e := range r.Embeddings {
		if len(e.Values) == 0 {
			return 0, false, c.failure(KindStreamBroken, "embeddings response has an empty vector", nil)
		}
		vectors[i] = e.Values
	}
	if r.UsageMetadata != nil && r.UsageMetadata.PromptTokenCount > 0 {
		return r.UsageMetadata.PromptTokenCount, true, nil
	}
	return countInputs(req.Model, batch), false, nil
}

// countInputs counts the tokens of texts with the model's tokenizer (or the fallback).
func countInputs(model string, texts []string) int {
	n := 0
	for _, t := range texts {
		n += CountTokens(model, t)
	}
	return n
}

// EmbeddingsOnly reports whether the provider serves embeddings and no chat
// (Config.EmbeddingsOnly).
func (o *OpenAI) EmbeddingsOnly() bool { return o.ep.cfg.EmbeddingsOnly }

// ServesEmbeddings reports whether p answers embeddings requests: it implements Embedder
// and does not serve rerank only (Cohere's preset, whose embeddings API is not OpenAI's).
func ServesEmbeddings(p Provider) bool {
	if _, ok := p.(Embedder); !ok {
		return false
	}
	r, ok := p.(interface{ RerankOnly() bool })
	return !ok || !r.RerankOnly()
}
