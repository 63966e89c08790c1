package completions

import (
	"context"
	"errors"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// Resolver hands out the gateway as a providers.Provider, so that library code written
// against providers (the optimizer's proposer, for one) gets the gateway's retries,
// fallbacks, budgets and ledger instead of calling an upstream directly. Every call is made
// with Scope; no conversation is stored.
type Resolver struct {
	Gateway *Gateway
	Scope   Scope
}

// Resolve implements the optimizer's ProviderResolver: it checks that the provider of
// providerModel is known and returns the gateway with the full "provider/model" as the
// model name.
func (r Resolver) Resolve(providerModel string) (providers.Provider, string, error) {
	p, _, err := providers.ParseModel(providerModel)
	if err != nil {
		return nil, "", err
	}
	if _, err := r.Gateway.opts.Providers.Lookup(p); err != nil {
		return nil, "", err
	}
	return gatewayProvider(r), providerModel, nil
}

// gatewayProvider is the gateway seen as one provider; Request.Model is "provider/model".
type gatewayProvider Resolver

func (g gatewayProvider) Name() string { return "switchyard" }

func (g gatewayProvider) request(req *providers.Request) *Request {
	out := &Request{Models: []string{req.Model}, Temperature: req.Temperature, MaxTokens: req.MaxTokens,
		Search: req.Search, maxTemperature: 2, ephemeral: true, unaskedReasoning: true, TopP: req.TopP, Stop: req.Stop,
		Tools: req.Tools, ToolChoice: req.ToolChoice, ParallelToolCalls: req.ParallelToolCalls, ResponseFormat: req.ResponseFormat,
		singleToolCall: req.SingleToolCall, Thinking: req.Thinking, Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs,
		// A library caller (the optimizer's proposer) asks again to get another answer: the
		// response cache would give it the same one.
		Cache: &CacheControl{NoCache: true, NoStore: true}}
	for _, m := range req.Messages {
		content := []ContentBlock{{Type: "text", Text: m.Content}}
		if len(m.Parts) > 0 {
			content = make([]ContentBlock, len(m.Parts))
			for i, p := range m.Parts {
				content[i] = ContentBlock{Type: "text", Text: p.Text}
				if p.Image != nil {
					content[i] = ContentBlock{Type: "image", Image: p.Image}
				}
				if p.File != nil {
					content[i] = ContentBlock{Type: "file", File: p.File}
				}
				if p.Audio != nil {
					content[i] = ContentBlock{Type: "audio", Audio: p.Audio}
				}
			}
		}
		out.Messages = append(out.Messages, Message{Role: m.Role, Content: content,
			ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name, Reasoning: m.Reasoning, AudioID: m.AudioID})
	}
	return out
}

// Complete runs req through the gateway. A deadline on ctx is the call's whole budget: it
// replaces the gateway's request and per-attempt limits (a caller that allows a 300 s call
// is not cut at the gateway's 120 s). Failures keep their *providers.Error when one
// upstream error decided the outcome.
func (g gatewayProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	scope := g.Scope
	if dl, ok := ctx.Deadline(); ok {
		scope.CallTimeout = max(time.Until(dl), time.Millisecond)
	}
	resp, err := g.Gateway.Complete(ctx, scope, g.request(req))
	if err != nil {
		var all *AllFailedError
		if errors.As(err, &all) && len(all.Attempts) > 0 {
			// Keep the last failure's kind so callers can still tell retry from give-up.
			last := all.Attempts[len(all.Attempts)-1]
			return nil, &providers.Error{Provider: g.Name(), Model: req.Model, Kind: kindNamed(last.Kind), Message: last.Error, Err: err}
		}
		return nil, err
	}
	return &providers.Response{
		Text:         resp.Text(),
		ToolCalls:    resp.ToolCalls,
		Refusal:      resp.Refusal,
		Reasoning:    resp.Reasoning,
		FinishReason: resp.FinishReason,
		Model:        resp.Model,
		Logprobs:     resp.Logprobs,
		Usage: providers.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			ReasoningTokens: resp.Usage.ReasoningTokens, CachedTokens: resp.Usage.CachedTokens, CacheCreationTokens: resp.Usage.CacheCreationTokens},
	}, nil
}

// Stream is not offered: callers of this adapter want whole answers.
func (g gatewayProvider) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return nil, &providers.Error{Provider: g.Name(), Model: req.Model, Kind: providers.KindBadRequest,
		Message: "streaming is not available through the gateway's provider adapter; use Gateway.Stream"}
}

// kindNamed returns the providers.ErrorKind whose name is name (KindUnknown if none).
func kindNamed(name string) providers.ErrorKind {
	k, _ := providers.ParseErrorKind(name)
	return k
}
