package main

import (
	"context"

	"github.com/switchyard-ai/switchyard/client"
)

// servedAsAnother returns the first of names (each "provider/model" in form) the server
// serves as another model (GET /v1/models/{name} answers another id): a name a LiteLLM
// wildcard model_name ("custom/*") matches, whose "provider" is none, which only the
// OpenAI-compatible route resolves — the native route refuses it as of an unknown
// provider. A name the server serves as itself (a provider's model, a LiteLLM model_name
// with '/', served on every route) or does not serve (the native route then says why) is
// the native route's. "" when all are.
func servedAsAnother(ctx context.Context, c *client.Client, names []string) string {
	for _, n := range names {
		if m, err := c.GatewayModel(ctx, n); err == nil && m.ID != n {
			return n
		}
	}
	return ""
}
