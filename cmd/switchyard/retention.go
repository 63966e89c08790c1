package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"time"

	"github.com/switchyard-ai/switchyard/usagelog"
)

// retentionFlags are serve's flags saying how long the records that pile up with use are
// kept (see README's Retention). Each is swept hourly; a record past its time reads as
// gone at once, whether or not it was swept yet.
type retentionFlags struct {
	// Conversations is --conversation-retention (completions.Options.ConversationRetention).
	Conversations time.Duration
	// OpenAIConversations is --openai-conversation-retention
	// (completions.Options.OpenAIConversationRetention).
	OpenAIConversations time.Duration
	// Spend is --spend-retention (usagelog.RollupOptions.Retention).
	Spend time.Duration
	// Requests is --request-log-retention (usagelog.HistoryOptions.Retention).
	Requests time.Duration
}

// register defines the flags on fs. Their default, 0, is the libraries' default: forever;
// the request history's is the library's 30 days.
func (f *retentionFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.Requests, "request-log-retention", usagelog.DefaultHistoryRetention,
		"how long each request of the request history (/spend/logs, /spend/logs/v2, /api/v1/usage/requests) is kept after it was received: older requests are no longer listed and are deleted (swept hourly); 0 or a negative value keeps them forever")
	fs.DurationVar(&f.Conversations, "conversation-retention", 0,
		"how long a conversation of /api/v1/conversations is kept after its last turn (e.g. 2160h for 90 days): past it, it answers 404 and is deleted with its messages (swept hourly); 0 or a negative value keeps conversations forever (the default)")
	fs.DurationVar(&f.OpenAIConversations, "openai-conversation-retention", 0,
		"how long a conversation of /v1/conversations is kept after its last use (an answer on it, items added or deleted, metadata updated; a request being answered on it keeps it until it ends): past it, it answers 404 and is deleted with its items (swept hourly); 0 or a negative value keeps them forever (the default, as OpenAI)")
	fs.DurationVar(&f.Spend, "spend-retention", 0,
		"how long the daily spend totals per key and tag or model (/api/v1/usage/spend, the console) are kept, in whole days (e.g. 9504h for 396 days): older days are no longer reported and are deleted (swept hourly); 0 or a negative value keeps them forever (the default, as LiteLLM's daily spend)")
}

// check validates the flags.
func (f *retentionFlags) check() error {
	if f.Spend > 0 && f.Spend < 24*time.Hour {
		return errors.New("--spend-retention must be at least 24h (totals are per day), 0 or negative (forever)")
	}
	return nil
}

// libraryRetention maps a flag's value onto a library option's: the flags' 0 and
// negative both mean forever, which the options spell negative.
func libraryRetention(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// sweepEvery runs sweep (what it deletes: what; its metric label: kind) at start and every
// interval until ctx ends: the store's expired records (reads already skip them; this
// frees their room). It logs what each run deleted and counts it with swept (nil: not
// counted).
func sweepEvery(ctx context.Context, what, kind string, sweep func(context.Context, time.Time) (int, error), every time.Duration, log *slog.Logger, swept func(kind string, n int)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := sweep(ctx, time.Now())
		if swept != nil {
			swept(kind, n)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("retention: sweeping expired "+what, "kind", kind, "deleted", n, "err", err)
		case n > 0:
			log.Info("retention: swept expired "+what, "kind", kind, "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
