package completions

import (
	"context"
	"log/slog"
)

// LogLedger is a Ledger that writes one debug-level structured log line per answered
// attempt: owner, tag (e.g. "optimize:<job id>"), model, tokens (usage_estimated when they
// were counted locally because the upstream reported none), USD and latency — never message
// content.
type LogLedger struct {
	Logger *slog.Logger
}

// Record implements Ledger.
func (l LogLedger) Record(ctx context.Context, e LedgerEntry) {
	lg := l.Logger
	if lg == nil {
		lg = slog.Default()
	}
	lg.LogAttrs(ctx, slog.LevelDebug, "usage",
		slog.String("owner", e.Owner), slog.String("tag", e.Tag), slog.String("model", e.Model),
		slog.Bool("complete", e.Complete),
		slog.Int("prompt_tokens", e.Usage.PromptTokens), slog.Int("completion_tokens", e.Usage.CompletionTokens),
		slog.Bool("usage_estimated", e.Estimated), slog.Float64("cost_usd", e.Cost.Spent()), slog.Int64("latency_ms", e.Latency.Milliseconds()),
		slog.Any("tags", e.Tags))
}
