package routing

import (
	"context"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// CompletionsRanker orders the models of a completions request (completions.Ranker) with
// the selector's scorer: no preference, no tradeoff, no session stored. Models keep their
// given order where the scorer ties.
type CompletionsRanker struct {
	Selector *Selector
}

// Rank returns models ("provider/model") best first for the conversation msgs.
func (r CompletionsRanker) Rank(ctx context.Context, msgs []providers.Message, models []string) ([]string, error) {
	return r.RankTradeoff(ctx, msgs, models, "")
}

// RankTradeoff is Rank with a tradeoff ("cost" or "latency", as in model selection): the
// cheapest (fastest) model whose estimated quality is within the router's tolerance of the
// best comes first (completions.TradeoffRanker, for model groups).
func (r CompletionsRanker) RankTradeoff(ctx context.Context, msgs []providers.Message, models []string, tradeoff string) ([]string, error) {
	if tradeoff != "" && tradeoff != "cost" && tradeoff != "latency" {
		return nil, invalid("tradeoff", `must be "cost" or "latency", got %q`, tradeoff)
	}
	req := &Request{Tradeoff: tradeoff}
	for _, m := range msgs {
		if strings.TrimSpace(m.Content) != "" {
			req.Messages = append(req.Messages, Message{Role: m.Role, Content: m.Content})
		}
	}
	if len(req.Messages) == 0 || len(models) < 2 {
		return models, nil
	}
	for _, m := range models {
		p, name, _ := strings.Cut(m, "/")
		req.Models = append(req.Models, Candidate{Provider: p, Model: name, Name: m})
	}
	ranked, err := r.Selector.rank(ctx, "", req)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ranked))
	for _, s := range ranked {
		out = append(out, s.Candidate.Provider+"/"+s.Candidate.Model)
	}
	return out, nil
}
