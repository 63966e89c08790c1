package routing

import (
	"context"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// CompletionsRanker orders the models of a completions request (completions.Ranker) and of
// a routed model group (completions.TradeoffRanker) with the selector's scorer: no
// preference, no session stored, a tradeoff only when asked. It reads the task as the user
// states it — the first user turn and the last turns, each cut to its beginning, without
// system turns (rankedView) — so an agent's long system prompt and tool results neither
// drown the task nor cost milliseconds. Models keep their given order where the scorer
// ties.
type CompletionsRanker struct {
	Selector *Selector
}

// Rank returns models ("provider/model") best first for the conversation msgs.
func (r CompletionsRanker) Rank(ctx context.Context, msgs []providers.Message, models []string) ([]string, error) {
	return r.RankTradeoff(ctx, msgs, models, "")
}

// RankTradeoff is Rank with a tradeoff ("cost" or "latency", as in model selection): the
// cheapest (fastest; candidates here carry no latency, so latency keeps the quality order —
// RankFastest gives them one) model whose estimated quality is within the router's
// tolerance of the best comes first (completions.TradeoffRanker, for model groups).
func (r CompletionsRanker) RankTradeoff(ctx context.Context, msgs []providers.Message, models []string, tradeoff string) ([]string, error) {
	return r.rank(ctx, msgs, models, tradeoff, nil)
}

// RankFastest is RankTradeoff "latency" with each model's latency as the gateway measured
// it (completions.LatencyRanker; any unit, lower is faster): the fastest model whose
// estimated quality is within the router's tolerance of the best comes first. A model
// missing from latencies has none, and is never preferred to one that has.
func (r CompletionsRanker) RankFastest(ctx context.Context, msgs []providers.Message, models []string, latencies map[string]float64) ([]string, error) {
	return r.rank(ctx, msgs, models, "latency", latencies)
}

func (r CompletionsRanker) rank(ctx context.Context, msgs []providers.Message, models []string, tradeoff string, latencies map[string]float64) ([]string, error) {
	if tradeoff != "" && tradeoff != "cost" && tradeoff != "latency" {
		return nil, invalid("tradeoff", `must be "cost" or "latency", got %q`, tradeoff)
	}
	req := &Request{Tradeoff: tradeoff, Messages: rankedView(msgs)}
	if len(req.Messages) == 0 || len(models) < 2 {
		return models, nil
	}
	for _, m := range models {
		p, name, _ := strings.Cut(m, "/")
		c := Candidate{Provider: p, Model: name, Name: m}
		if l, ok := latencies[m]; ok {
			c.Latency = &l
		}
		req.Models = append(req.Models, c)
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

// What the ranker reads of a conversation: the router was trained on tasks as users state
// them, so an agent's system prompt (tens of kilobytes, the same on every request) and the
// bulk of long tool results would only drown the task and cost milliseconds per request.
const (
	rankedTurns     = 8    // the last turns read, besides the first user turn
	rankedTurnBytes = 1024 // of each of them, its beginning
	rankedTaskBytes = 4096 // of the first user turn (the task), its beginning
)

// rankedView is the part of msgs the ranker reads: the turns with text other than system
// ones (those too when nothing else has text), the first user turn cut to rankedTaskBytes
// and the last rankedTurns cut to rankedTurnBytes.
func rankedView(msgs []providers.Message) []Message {
	var turns []providers.Message
	first := -1
	for _, m := range msgs {
		if strings.TrimSpace(m.Content) == "" || m.Role == "system" || m.Role == "developer" {
			continue
		}
		if first < 0 && m.Role == "user" {
			first = len(turns)
		}
		turns = append(turns, m)
	}
	if len(turns) == 0 {
		for _, m := range msgs {
			if strings.TrimSpace(m.Content) != "" {
				turns = append(turns, m)
			}
		}
	}
	from := max(len(turns)-rankedTurns, 0)
	var out []Message
	cut := func(m providers.Message, n int) Message {
		c := m.Content
		if len(c) > n {
			c = strings.ToValidUTF8(c[:n], "")
		}
		return Message{Role: m.Role, Content: c}
	}
	if first >= 0 && first < from {
		out = append(out, cut(turns[first], rankedTaskBytes))
	}
	for i := from; i < len(turns); i++ {
		n := rankedTurnBytes
		if i == first {
			n = rankedTaskBytes
		}
		out = append(out, cut(turns[i], n))
	}
	return out
}
