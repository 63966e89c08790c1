package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// Moderator is implemented by adapters whose provider classifies content for harm with
// OpenAI's moderations API: the OpenAI format (OpenAI's own API, and servers that copy it).
// Azure OpenAI has no such API (its content filters run on every call) and does not serve
// it (ServesModeration).
type Moderator interface {
	// Moderate classifies req.Input. Failures are *Error values.
	Moderate(ctx context.Context, req *ModerationRequest) (*ModerationResponse, error)
}

// ModerationRequest asks a moderation model to classify Input.
type ModerationRequest struct {
	// Model is the provider's model name ("omni-moderation-latest").
	Model string
	// Input is OpenAI's input as the caller sent it (a string, an array of strings, or an
	// array of text and image_url parts), checked by the caller.
	Input json.RawMessage
	// Results is how many results the answer must carry: one per string of an array of
	// strings, one for a string or for an array of parts.
	Results int
}

// ModerationResponse is a moderation model's answer: one result per input, each as the
// provider sent it (flagged, categories, category_scores, category_applied_input_types:
// OpenAI adds categories over time, so they are passed on whole).
type ModerationResponse struct {
	ID      string
	Model   string
	Results []json.RawMessage
}

// maxModerationBody bounds a moderation answer: a result is about 1.5 KB of JSON.
const maxModerationBody = 16 << 20

type openAIModerationRequest struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
}

type openAIModerationResponse struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Results []json.RawMessage `json:"results"`
}

// Moderate implements Moderator with POST {base}/moderations. An answer without one
// result per input is a bad response (KindBadResponse: not retried on the model).
func (o *OpenAI) Moderate(ctx context.Context, req *ModerationRequest) (*ModerationResponse, error) {
	if o.azure != nil {
		return nil, &UnsupportedError{Provider: o.Name(), Field: "model", Reason: "Azure OpenAI has no moderations API"}
	}
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	h := http.Header{}
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	c, err := o.ep.send(ctx, req.Model, o.url("/moderations", req.Model), h, openAIModerationRequest{Model: req.Model, Input: req.Input}, parseOpenAIError)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var r openAIModerationResponse
	if err := c.decodeAll(maxModerationBody, &r, "moderations response"); err != nil {
		return nil, err
	}
	if want := max(req.Results, 1); len(r.Results) != want {
		return nil, c.failure(KindBadResponse, "moderations response has "+strconv.Itoa(len(r.Results))+" results for "+strconv.Itoa(want)+" inputs", nil)
	}
	for _, res := range r.Results {
		if len(res) == 0 || res[0] != '{' {
			return nil, c.failure(KindBadResponse, "moderations response has a result that is not an object", nil)
		}
	}
	return &ModerationResponse{ID: r.ID, Model: r.Model, Results: r.Results}, nil
}

// ServesModeration reports whether p answers moderation requests: an OpenAI-format
// provider other than Azure OpenAI that serves chat (not an embeddings- or rerank-only
// one, whose servers have no such API).
func ServesModeration(p Provider) bool {
	if _, ok := p.(Moderator); !ok || !ServesChat(p) {
		return false
	}
	if o, ok := p.(*Azure); ok && o != nil {
		return false
	}
	return true
}
