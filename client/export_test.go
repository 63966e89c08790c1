package client

import (
	"context"
	"time"
)

// WithSleep replaces the wait between retries (tests record the waits instead of sleeping).
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(c *config) { c.sleep = sleep }
}

// SleepContext is the real wait between retries, for tests that observe it begin.
var SleepContext = sleepContext
