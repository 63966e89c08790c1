package client

import (
	"context"
	"net/http"
)

// moderationsPath is the OpenAI-compatible moderations endpoint of the gateway.
const moderationsPath = "/v1/moderations"

// ModerationRequest asks the gateway to classify Input for harm.
type ModerationRequest struct {
	// Model is "provider/model", a bare OpenAI moderation model ("omni-moderation-latest",
	// the gateway's default when empty) or a model group.
	Model string `json:"model,omitempty"`
	// Input is a string, a []string (a result each) or a []ModerationPart (one result).
	Input any `json:"input"`
}

// ModerationPart is one part of a multi-modal input: a text, or an image by URL (a data URL
// too).
type ModerationPart struct {
	Type     string              `json:"type"` // "text" or "image_url"
	Text     string              `json:"text,omitempty"`
	ImageURL *ModerationImageURL `json:"image_url,omitempty"`
}

// ModerationImageURL is an image_url part's image.
type ModerationImageURL struct {
	URL string `json:"url"`
}

// ModerationResponse is the classification of a ModerationRequest's input.
type ModerationResponse struct {
	ID string `json:"id"`
	// Model is the "provider/model" that classified the input.
	Model   string             `json:"model"`
	Results []ModerationResult `json:"results"`
}

// ModerationResult is one input's classification: whether any category was flagged, each
// category's verdict and score, and the input types each applies to.
type ModerationResult struct {
	Flagged                   bool                `json:"flagged"`
	Categories                map[string]bool     `json:"categories"`
	CategoryScores            map[string]float64  `json:"category_scores"`
	CategoryAppliedInputTypes map[string][]string `json:"category_applied_input_types,omitempty"`
}

// Moderate classifies req.Input with POST /v1/moderations. Errors are *Error values for
// the gateway's refusals (400 naming the field, a 401 key_model_access_denied (ErrForbidden) for a model the key may not call, 404
// for an unknown model).
func (c *Client) Moderate(ctx context.Context, req *ModerationRequest) (*ModerationResponse, error) {
	var out ModerationResponse
	if err := c.do(ctx, http.MethodPost, moderationsPath, nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
