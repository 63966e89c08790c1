package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// responsesFlags are serve's flags for the /v1/responses answers the gateway keeps
// (completions.StoredResponsesOptions).
type responsesFlags struct {
	Store bool
	TTL   time.Duration
	// BackgroundTimeout is --responses-background-timeout.
	BackgroundTimeout time.Duration
	// BackgroundStreamEvents and BackgroundStreamBytes are
	// --responses-background-stream-events and --responses-background-stream-bytes.
	BackgroundStreamEvents int
	BackgroundStreamBytes  int
}

func (f *responsesFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.Store, "responses-store", true, "keep /v1/responses answers in the --store database (unless a request says store: false), as OpenAI does, so previous_response_id continues a conversation and GET /v1/responses/{id} reads one back; false keeps none and refuses previous_response_id")
	fs.DurationVar(&f.TTL, "responses-ttl", completions.DefaultResponsesTTL, "how long a kept /v1/responses answer is kept (expired hourly); 0 keeps answers stored meanwhile until deleted (no sweep removes them, even under a later TTL)")
	fs.DurationVar(&f.BackgroundTimeout, "responses-background-timeout", completions.DefaultBackgroundTimeout, "how long a background /v1/responses run (background: true) may last, one upstream call as long, in place of --request-timeout and --attempt-timeout (a request's own timeout still holds)")
	fs.IntVar(&f.BackgroundStreamEvents, "responses-background-stream-events", completions.DefaultBackgroundStreamMaxEvents, "at most this many events of a streamed background /v1/responses run are recorded for GET ?stream=true&starting_after= (past it, all but the terminal event are dropped)")
	fs.IntVar(&f.BackgroundStreamBytes, "responses-background-stream-bytes", completions.DefaultBackgroundStreamMaxBytes, "at most this many bytes of a streamed background /v1/responses run's events are recorded (past it, all but the terminal event are dropped)")
}

func (f *responsesFlags) check() error {
	if f.TTL < 0 {
		return fmt.Errorf("--responses-ttl must be 0 (keep until deleted) or positive, got %s", f.TTL)
	}
	if f.BackgroundTimeout <= 0 {
		return fmt.Errorf("--responses-background-timeout must be positive, got %s", f.BackgroundTimeout)
	}
	if f.BackgroundStreamEvents < 2 {
		return fmt.Errorf("--responses-background-stream-events must be at least 2, got %d", f.BackgroundStreamEvents)
	}
	if f.BackgroundStreamBytes <= 0 {
		return fmt.Errorf("--responses-background-stream-bytes must be positive, got %d", f.BackgroundStreamBytes)
	}
	return nil
}

// options are the gateway's StoredResponsesOptions; a conversation may hold eight
// requests' worth (maxBody, --max-body-bytes), as the server allows.
func (f *responsesFlags) options(maxBody int64) completions.StoredResponsesOptions {
	return completions.StoredResponsesOptions{Off: !f.Store, TTL: f.TTL, NoExpiry: f.TTL == 0, MaxHistoryBytes: 8 * maxBody, BackgroundTimeout: f.BackgroundTimeout,
		BackgroundStreamMaxEvents: f.BackgroundStreamEvents, BackgroundStreamMaxBytes: f.BackgroundStreamBytes}
}
