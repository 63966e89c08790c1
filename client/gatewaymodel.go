package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// GatewayModel is a model the server's gateway routes to, as OpenAI's GET /v1/models/{model}
// describes it.
type GatewayModel struct {
	// ID is the "provider/model" (or model group) the name asked for stands for: the name
	// itself, or what the server resolves it to (a bare name's provider, a LiteLLM wildcard
	// model_name's model).
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	// OwnedBy is the model's provider ("switchyard" for a model group).
	OwnedBy string `json:"owned_by"`
}

// GatewayModel asks the server which model name stands for and whether its gateway serves
// it (GET /v1/models/{name}): a name it does not serve, or the key may not call, is an
// *Error of status 404.
func (c *Client) GatewayModel(ctx context.Context, name string) (*GatewayModel, error) {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	var out GatewayModel
	if err := c.do(ctx, http.MethodGet, "/v1/models/"+strings.Join(segs, "/"), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
