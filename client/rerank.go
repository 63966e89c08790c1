package client

import (
	"context"
	"net/http"
)

// rerankPath is the Cohere-compatible rerank endpoint of the gateway.
const rerankPath = "/v1/rerank"

// RerankRequest asks the gateway to rank Documents by their relevance to Query.
type RerankRequest struct {
	// Model is "provider/model" ("cohere/rerank-v3.5"), a bare name one configured provider
	// catalogues ("rerank-v3.5") or a model group.
	Model string `json:"model"`
	// Query is what the documents are ranked against.
	Query string `json:"query"`
	// Documents are the texts to rank (at most 1,000, none empty).
	Documents []string `json:"documents"`
	// TopN keeps the TopN most relevant results; 0 keeps them all.
	TopN int `json:"top_n,omitempty"`
	// ReturnDocuments puts each result's document in the answer.
	ReturnDocuments bool `json:"return_documents,omitempty"`
	// MaxTokensPerDoc truncates each document to this many tokens (Cohere's models only);
	// 0 leaves the provider's default.
	MaxTokensPerDoc int `json:"max_tokens_per_doc,omitempty"`
}

// RerankResponse is the ranking of a RerankRequest's documents.
type RerankResponse struct {
	ID string `json:"id"`
	// Results are the documents' relevance, most relevant first.
	Results []RerankResult `json:"results"`
	Meta    struct {
		// BilledUnits are what the provider billed: Cohere's search units, or tokens.
		BilledUnits struct {
			SearchUnits int `json:"search_units,omitempty"`
			TotalTokens int `json:"total_tokens,omitempty"`
		} `json:"billed_units"`
	} `json:"meta"`
	// Model is the "provider/model" that answered.
	Model string `json:"model"`
	Usage struct {
		TotalTokens int  `json:"total_tokens"`
		Estimated   bool `json:"estimated,omitempty"`
		Costs       *struct {
			TotalTokensCost float64 `json:"total_tokens_cost"`
			PriceKnown      bool    `json:"price_known"`
		} `json:"costs,omitempty"`
	} `json:"usage"`
}

// RerankResult is one document's relevance: its index in the request's documents, the
// model's score (higher is more relevant), and the document when asked.
type RerankResult struct {
	Index          int     `json:"index"`
	RelevanceScore float64 `json:"relevance_score"`
	Document       *struct {
		Text string `json:"text"`
	} `json:"document,omitempty"`
}

// Indexes returns the documents' indexes, most relevant first.
func (r *RerankResponse) Indexes() []int {
	out := make([]int, len(r.Results))
	for i, res := range r.Results {
		out[i] = res.Index
	}
	return out
}

// Rerank ranks req.Documents with POST /v1/rerank. Errors are *Error values for the
// gateway's refusals (400 naming the field, a 401 key_model_access_denied (ErrForbidden) for a model the key may not call, 404 for
// an unknown model).
func (c *Client) Rerank(ctx context.Context, req *RerankRequest) (*RerankResponse, error) {
	var out RerankResponse
	if err := c.do(ctx, http.MethodPost, rerankPath, nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
