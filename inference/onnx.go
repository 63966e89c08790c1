package inference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/pipelines"
)

// ONNXOptions configures NewONNXEmbedder.
type ONNXOptions struct {
	// BatchSize is how many texts go through the model at once. 0 means 32.
	BatchSize int
}

// ONNXEmbedder runs a sentence-embedding model (for example all-MiniLM-L6-v2 exported from
// Hugging Face) with hugot's pure-Go backend: no cgo, no build tags. The directory holds
// model.onnx and tokenizer.json (and optionally Hugging Face's config.json, whose
// max_position_embeddings caps the tokens per text; longer texts are truncated). The token
// embeddings of the model's first output are mean-pooled over the attention mask and
// L2-normalised, as sentence-transformers does.
//
// Speed: hugot's Go backend runs 4–5× faster when the binary is built with
// GOEXPERIMENT=simd (Go 1.26+), e.g. `GOEXPERIMENT=simd go build ./cmd/switchyard`
// (measured 4.5–6.6× on a MiniLM-size model; see BENCHMARKS.md).
type ONNXEmbedder struct {
	dir       string
	name      string
	sha       string
	dim       int
	batchSize int

	mu       sync.Mutex // the pipeline is run one batch at a time
	session  *hugot.Session
	pipeline *pipelines.FeatureExtractionPipeline
}

// onnxState is what a saved Model records about its ONNX embedder.
type onnxState struct {
	Name   string
	SHA256 string
	Dim    int
}

// NewONNXEmbedder loads dir/model.onnx and dir/tokenizer.json. Errors match
// ErrUnavailable (files missing or the model cannot be loaded).
func NewONNXEmbedder(ctx context.Context, dir string, opts ONNXOptions) (*ONNXEmbedder, error) {
	modelPath := filepath.Join(dir, "model.onnx")
	for _, f := range []string{modelPath, filepath.Join(dir, "tokenizer.json")} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("%w: onnx embedder: %w", ErrUnavailable, err)
		}
	}
	sha, err := fileSHA256(modelPath)
	if err != nil {
		return nil, fmt.Errorf("%w: onnx embedder: %w", ErrUnavailable, err)
	}
	session, err := hugot.NewGoSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: onnx embedder: new session: %w", ErrUnavailable, err)
	}
	base := filepath.Base(filepath.Clean(dir))
	cfg := hugot.FeatureExtractionConfig{
		ModelPath:    dir,
		Name:         "embed-" + sha[:16],
		OnnxFilename: "model.onnx",
		Options:      []hugot.FeatureExtractionOption{pipelines.WithNormalization()},
	}
	p, err := hugot.NewPipeline(session, cfg)
	if err != nil {
		session.Destroy()
		return nil, fmt.Errorf("%w: onnx embedder: load %s: %w", ErrUnavailable, dir, err)
	}
	e := &ONNXEmbedder{dir: dir, name: "onnx/" + base, sha: sha, batchSize: opts.BatchSize, session: session, pipeline: p}
	if e.batchSize <= 0 {
		e.batchSize = 32
	}
	// The output width is only known for sure after a run.
	out, err := e.run(ctx, []string{"dimension probe"})
	if err != nil {
		session.Destroy()
		return nil, err
	}
	e.dim = len(out[0].Values)
	return e, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Name returns "onnx/" plus the model directory's base name, e.g. "onnx/all-MiniLM-L6-v2".
func (e *ONNXEmbedder) Name() string { return e.name }

// Dim returns the embedding width (384 for all-MiniLM-L6-v2).
func (e *ONNXEmbedder) Dim() int { return e.dim }

// ModelSHA256 returns the hex SHA-256 of model.onnx.
func (e *ONNXEmbedder) ModelSHA256() string { return e.sha }

// Embed returns unit-length dense vectors, one per text.
func (e *ONNXEmbedder) Embed(ctx context.Context, texts []string) ([]Vector, error) {
	return e.raw(ctx, texts)
}

// Close releases the runtime session.
func (e *ONNXEmbedder) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.session == nil {
		return nil
	}
	err := e.session.Destroy()
	e.session, e.pipeline = nil, nil
	return err
}

func (e *ONNXEmbedder) state() *onnxState {
	return &onnxState{Name: e.name, SHA256: e.sha, Dim: e.dim}
}

func (e *ONNXEmbedder) cacheNamespace() string { return "onnx/" + e.sha }

func (e *ONNXEmbedder) raw(ctx context.Context, texts []string) ([]Vector, error) {
	out := make([]Vector, 0, len(texts))
	for start := 0; start < len(texts); start += e.batchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		vs, err := e.run(ctx, texts[start:min(start+e.batchSize, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *ONNXEmbedder) run(ctx context.Context, texts []string) ([]Vector, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pipeline == nil {
		return nil, fmt.Errorf("%w: onnx embedder is closed", ErrUnavailable)
	}
	res, err := e.pipeline.RunPipeline(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("%w: onnx embedder: run: %w", ErrUnavailable, err)
	}
	if len(res.Embeddings) != len(texts) {
		return nil, fmt.Errorf("%w: onnx embedder: %d embeddings for %d texts", ErrUnavailable, len(res.Embeddings), len(texts))
	}
	out := make([]Vector, len(texts))
	for i, emb := range res.Embeddings {
		out[i] = Vector{Values: emb}
	}
	return out, nil
}

func (e *ONNXEmbedder) finish(raw []Vector) []Vector { return raw }
