package batch

import (
	"context"
	"encoding/json"
	"time"
)

// Executor answers batch lines: each as its endpoint would answer it had the key that
// created the batch sent it. The server implements it with its own handlers (the same
// authentication, budgets, model restrictions, tags, usage log and errors as a request
// from the network); tests use a scripted one.
type Executor interface {
	// Execute answers c. An error means the line got no answer: one matching ErrKeyRevoked
	// ends the batch's run (its remaining lines fail with code api_key_revoked), a
	// cancelled ctx leaves the line to run again later, any other fails the line with
	// code internal_error.
	Execute(ctx context.Context, c Call) (Answer, error)
}

// ExecutorFunc is a function that is an Executor.
type ExecutorFunc func(ctx context.Context, c Call) (Answer, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, c Call) (Answer, error) { return f(ctx, c) }

// Call is one line of a batch to answer.
type Call struct {
	// BatchID is the batch the line belongs to; Owner its owner.
	BatchID, Owner string
	// Credential is what the server stored to act as the key that created the batch
	// (Create's credential), never shown.
	Credential string
	// RequestID is the line's id (batch_req_…): send it as the request's id, so the
	// gateway's log lines and usage records of the line carry it.
	RequestID string
	// CustomID is the line's custom_id.
	CustomID string
	// URL is the endpoint (one of Endpoints); Body the request.
	URL  string
	Body json.RawMessage
}

// Answer is the endpoint's answer to a line.
type Answer struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// RequestID is the request id the endpoint answered with ("": the Call's).
	RequestID string
	// Body is the JSON body.
	Body json.RawMessage
	// Retryable marks an answer the client may retry: a 429 (a rate or a budget admission
	// that clears with time) or a server error (5xx: the store restarting, an internal
	// error), without x-should-retry: false — or the gateway's final 502 when every model
	// was out of service for the while (rate limited, overloaded, timed out). The run waits — RetryAfter when set, a backoff
	// for a server error — and sends the line again, as OpenAI's SDKs do, a bounded number
	// of times (lineRetry); the last answer is kept.
	Retryable  bool
	RetryAfter time.Duration
	// Billed marks an answer whose request an upstream billed (the gateway answered a
	// server error after the call was paid for, say a write that failed after it): it is
	// never sent again, whatever Retryable says, so that a line is not paid for twice.
	Billed bool
	// TimedOut marks an answer of a request one of whose upstream calls timed out (the
	// gateway stopped waiting for the model). Such a line is sent again at most
	// Options.MaxTimeoutRetries times, whatever Retryable says beyond: each send waited out
	// the whole timeout, and the provider may have answered, and billed, a call the gateway
	// no longer waited for.
	TimedOut bool
}
