package client

import (
	"context"
	"net/http"
)

// embeddingsPath is the OpenAI-compatible embeddings endpoint of the gateway.
const embeddingsPath = "/v1/embeddings"

// EmbeddingsRequest asks the gateway for the embeddings of Input.
type EmbeddingsRequest struct {
	// Model is "provider/model", a bare name one configured provider catalogues
	// ("text-embedding-3-small") or a model group of deployments of one model.
	Model string `json:"model"`
	// Input are the texts to embed (at most 2,048, none empty).
	Input []string `json:"input"`
	// Dimensions shortens the vectors where the model allows it; 0 keeps its size.
	Dimensions int `json:"dimensions,omitempty"`
}

// EmbeddingsResponse is the vectors of an EmbeddingsRequest's inputs.
type EmbeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	// Model is the "provider/model" that answered.
	Model string `json:"model"`
	Usage struct {
		PromptTokens int  `json:"prompt_tokens"`
		TotalTokens  int  `json:"total_tokens"`
		Estimated    bool `json:"estimated,omitempty"`
		Costs        *struct {
			TotalTokensCost float64 `json:"total_tokens_cost"`
			PriceKnown      bool    `json:"price_known"`
		} `json:"costs,omitempty"`
	} `json:"usage"`
}

// Vectors returns the vectors in the inputs' order.
func (r *EmbeddingsResponse) Vectors() [][]float32 {
	out := make([][]float32, len(r.Data))
	for _, d := range r.Data {
		if d.Index >= 0 && d.Index < len(out) {
			out[d.Index] = d.Embedding
		}
	}
	return out
}

// Embeddings embeds req.Input with POST /v1/embeddings (floats). Errors are *Error
// values for the gateway's refusals (400 naming the field, 404 for an unknown model).
func (c *Client) Embeddings(ctx context.Context, req *EmbeddingsRequest) (*EmbeddingsResponse, error) {
	var out EmbeddingsResponse
	if err := c.do(ctx, http.MethodPost, embeddingsPath, nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
