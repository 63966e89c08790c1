package completions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/validation"
)

// Errors of the gateway. Compare with errors.Is / errors.As. The HTTP server maps them:
// ErrInvalid (and *ValidationError) → 422 (ErrModelNotServed's → 400), ErrNotFound → 404, ErrModelNotAllowed → 403,
// ErrBudgetExceeded → 429, *AllFailedError → 502 (404 on the OpenAI-compatible surface when
// every model was unknown), *ContentFilterError → 400 (200 with finish_reason
// "content_filter" on the OpenAI-compatible surface).
var (
	// ErrInvalid means the request is malformed; errors of type *ValidationError match it.
	ErrInvalid = errors.New("completions: invalid request")
	// ErrNotFound means the conversation does not exist or belongs to another caller.
	ErrNotFound = errors.New("completions: conversation not found")
	// ErrBudgetExceeded means the caller's Budget has no calls or tokens left.
	ErrBudgetExceeded = errors.New("completions: budget exceeded")
	// ErrBlocked means the caller's Budget (or its parent's, a team's) is blocked
	// (BudgetLimits.Blocked); the refusal matches ErrBudgetExceeded too. LiteLLM answers
	// it as an authentication error (401), which the server's OpenAI-compatible surface does.
	ErrBlocked = errors.New("completions: blocked")
	// ErrModelNotAllowed means the caller's Budget does not allow a requested model.
	ErrModelNotAllowed = errors.New("completions: model not allowed for this key")
	// ErrTokenRate means the caller's Budget used its TokensPerMinute in the last minute
	// (in this process); *TokenRateError says when to retry.
	ErrTokenRate = errors.New("completions: tokens per minute used up")
	// ErrBudgetBusy means the request waited for its key's first requests (whose cost its
	// Budget's bound needs to know) until its deadline: it may be retried at once.
	ErrBudgetBusy = errors.New("completions: the key's earlier requests are still running")
	// ErrBudgetGone means a shared account the request draws on was deleted while the
	// request was on its way: the caller's own (its key was revoked; the server answers
	// 401, as for a revoked key) or one it sits inside (a team's, an end user's).
	// *BudgetGoneError says which.
	ErrBudgetGone = errors.New("completions: the budget is gone (deleted while the request was on its way)")
	// ErrAllFailed is matched by *AllFailedError.
	ErrAllFailed = errors.New("completions: all models failed")
	// ErrStreamFailed is matched by *StreamError.
	ErrStreamFailed = errors.New("completions: stream failed after it started")
	// ErrUnknownModel is the cause of the validation error for a model name without a
	// provider that nothing here serves (the OpenAI-compatible and Messages surfaces answer
	// it 404, as OpenAI and Anthropic do for a model they do not have).
	ErrUnknownModel = errors.New("completions: unknown model")
	// ErrModelNotServed is the cause of the validation error for a model a request names
	// that the configuration does not serve (Options.ListConfigured: not a model group, a
	// group's member, a listed model nor a wildcard's), refused with LiteLLM's proxy's words
	// ("Invalid model name passed in model=…"), which the server answers 400.
	ErrModelNotServed = errors.New("completions: model not served by the configuration")
	// ErrThreadNotFound is a Messages request continuing a message thread
	// (AnthropicMessagesRequest.Thread): the gateway holds none, and refuses it as Anthropic
	// refuses a thread it lost (404, error_code thread_not_found), on which Anthropic's SDKs
	// send the whole conversation again.
	ErrThreadNotFound = errors.New("completions: message thread not found")
)

// blockedError is a blocked Budget's refusal: it matches ErrBudgetExceeded and ErrBlocked.
type blockedError struct{}

func (blockedError) Error() string {
	return ErrBudgetExceeded.Error() + ": the key is blocked (a budget of 0)"
}

func (blockedError) Is(target error) bool { return target == ErrBudgetExceeded || target == ErrBlocked }

// CostExceededError is a Budget's refusal because what it spent reached its MaxCostUSD (in
// the current period): SpentUSD of MaxUSD. It matches ErrBudgetExceeded. A refusal of a
// named budget (a team's, an end user's) is a *BudgetExceededError wrapping one.
type CostExceededError struct {
	SpentUSD, MaxUSD float64
}

// Error says what was spent of the bound.
func (e *CostExceededError) Error() string {
	return fmt.Sprintf("%s: $%.4f of $%.4f spent", ErrBudgetExceeded, e.SpentUSD, e.MaxUSD)
}

// Is matches ErrBudgetExceeded.
func (e *CostExceededError) Is(target error) bool { return target == ErrBudgetExceeded }

// ValidationError is the field and rule a bad input broke ([validation.Error]); the ones
// this package returns match ErrInvalid (and validation.ErrInvalid) via errors.Is.
type ValidationError = validation.Error

// errNilRequest answers Complete and Stream called without a request.
func errNilRequest() error { return invalid("body", "the request is missing") }

func invalid(field, format string, args ...any) *ValidationError {
	return validation.New(ErrInvalid, field, format, args...)
}

// AllFailedError reports that every attempt (every model, every retry) failed.
type AllFailedError struct {
	Attempts []Attempt
}

// Error lists every attempt's model and failure.
func (e *AllFailedError) Error() string {
	var b strings.Builder
	b.WriteString("all models failed: ")
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(a.Model)
		b.WriteString(": ")
		// Provider errors often start with the model already; say it once.
		b.WriteString(strings.TrimPrefix(a.Error, a.Model+": "))
	}
	return b.String()
}

// Is makes an *AllFailedError match ErrAllFailed.
func (e *AllFailedError) Is(target error) bool { return target == ErrAllFailed }

// Unwrap returns every failed attempt's error, first attempt first, so errors.Is and
// errors.As see the upstream failures (errors.As(err, &pe) with pe a *providers.Error finds
// the first attempt's).
func (e *AllFailedError) Unwrap() []error {
	var errs []error
	for _, a := range e.Attempts {
		if a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	return errs
}

// ModelNotFound reports whether every attempt failed because its provider does not know
// the model, or has no API key here: the request named no model that can be called (OpenAI's
// 404 model_not_found).
func (e *AllFailedError) ModelNotFound() bool {
	for _, a := range e.Attempts {
		if a.Kind != providers.KindModelNotFound.String() && !errors.Is(a.Err, providers.ErrNotConfigured) {
			return false
		}
	}
	return len(e.Attempts) > 0
}

// Every reports whether every attempt failed with one of kinds (false without attempts):
// the upstreams agree on what is wrong, for example every one found the prompt too long.
func (e *AllFailedError) Every(kinds ...providers.ErrorKind) bool {
	for _, a := range e.Attempts {
		k, _ := providers.ParseErrorKind(a.Kind)
		if a.Outcome == OutcomeOK || !slices.Contains(kinds, k) {
			return false
		}
	}
	return len(e.Attempts) > 0
}

// Transient reports whether every attempt failed as a model out of service for the while
// does — rate limited, overloaded, timed out, its connection or stream broken, passed over
// for its open circuit breaker or its rpm or tpm (its own, or the key's for it) — so the same request may well be answered
// later (false without attempts). A hedged start that lost the race is left out; any other
// failure (a request the upstream refused, a spent quota, a bad answer, an unclassified
// fault, a caller gone, a failure made up by Request.MockFailure) makes it false.
func (e *AllFailedError) Transient() bool {
	failed := 0
	for _, a := range e.Attempts {
		switch {
		case a.Outcome == OutcomeOK, a.Mock: // a made-up failure (mock_testing_fallbacks) stays one
			return false
		case a.Outcome == OutcomeCancelled && a.Kind == "hedged":
			continue
		case a.Outcome == OutcomeSkipped && (a.Kind == "circuit_open" || a.Kind == limitReachedKind || a.Kind == modelRateKind):
		default:
			k, ok := providers.ParseErrorKind(a.Kind)
			if !ok || a.Outcome != OutcomeError && a.Outcome != OutcomeSkipped || !unavailable(k) || k == providers.KindQuotaExceeded {
				return false
			}
		}
		failed++
	}
	return failed > 0
}

// TimedOut reports whether one of the attempts failed for a timeout (Kind "timeout": no
// answer within the first-token, attempt or request timeout), whatever the others did.
func (e *AllFailedError) TimedOut() bool {
	for _, a := range e.Attempts {
		if a.Outcome == OutcomeError && a.Kind == providers.KindTimeout.String() {
			return true
		}
	}
	return false
}

// Param is the request field every failed attempt's upstream named as wrong (OpenAI's
// error.param), "" when they named none or different ones.
func (e *AllFailedError) Param() string {
	return e.sameFromEvery(func(pe *providers.Error) string { return pe.Param })
}

// Code is the error code every failed attempt's upstream gave (OpenAI's error.code), ""
// when they gave none or different ones.
func (e *AllFailedError) Code() string {
	return e.sameFromEvery(func(pe *providers.Error) string { return pe.Code })
}

// sameFromEvery is what field reads from every failed attempt's *providers.Error when it
// is the same non-empty value for all of them, else "".
func (e *AllFailedError) sameFromEvery(field func(*providers.Error) string) string {
	v := ""
	for _, a := range e.Attempts {
		if a.Err == nil {
			continue
		}
		var pe *providers.Error
		if !errors.As(a.Err, &pe) || field(pe) == "" || v != "" && field(pe) != v {
			return ""
		}
		v = field(pe)
	}
	return v
}

// Last returns the last attempt's upstream error (nil when it has none).
func (e *AllFailedError) Last() *providers.Error {
	if len(e.Attempts) == 0 {
		return nil
	}
	var pe *providers.Error
	if errors.As(e.Attempts[len(e.Attempts)-1].Err, &pe) {
		return pe
	}
	return nil
}

// ErrContentFiltered matches a *ContentFilterError.
var ErrContentFiltered = errors.New("completions: blocked by the provider's content filter")

// ContentFilterError means a provider's safety system refused the request or its answer
// (a content-policy rejection, a safety block, a refusal stop reason). The gateway does not
// try the remaining models: a provider's policy decision is not silently overridden by
// asking another model. The OpenAI-compatible surface answers it as a choice with
// finish_reason "content_filter"; the native endpoint as an explicit error.
type ContentFilterError struct {
	// Model is the "provider/model" whose filter blocked the request.
	Model string
	// Message is the provider's explanation.
	Message string
	// Attempts lists every upstream call made, the last being the blocked one.
	Attempts []Attempt
	// ResponseMessageID identifies the refused answer (unique per request).
	ResponseMessageID string
	// Usage is what the blocked call is billed: as the upstream reported it, else estimated
	// from the prompt (UsageEstimated).
	Usage          Usage
	UsageEstimated bool
}

// Error names the model and the provider's explanation.
func (e *ContentFilterError) Error() string {
	return fmt.Sprintf("%s: blocked by the provider's content filter: %s", e.Model, e.Message)
}

// Is makes a *ContentFilterError match ErrContentFiltered.
func (e *ContentFilterError) Is(target error) bool { return target == ErrContentFiltered }

// StreamError reports that a stream failed after fragments had been delivered; the
// delivered text is incomplete and must not be taken as an answer.
type StreamError struct {
	// Model is the "provider/model" that was streaming.
	Model string
	// Kind is the failure's providers.ErrorKind name.
	Kind string
	// Err is the cause.
	Err error
}

// Error names the model and the kind of failure.
func (e *StreamError) Error() string {
	return fmt.Sprintf("stream from %s failed after it started (%s): %v", e.Model, e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *StreamError) Unwrap() error { return e.Err }

// Is makes a *StreamError match ErrStreamFailed.
func (e *StreamError) Is(target error) bool { return target == ErrStreamFailed }

// TokenRateError refuses a request of a Budget whose TokensPerMinute the last minute used
// up; it matches ErrTokenRate. RetryAfter is when enough of them leave the window.
type TokenRateError struct {
	Used, Limit int64
	RetryAfter  time.Duration
	// Kind and Name are the account whose rate it is when it is a parent of the request's
	// Budget (Budget.Within's kind and name: a team's, a tag's, …); "" for the Budget's own.
	Kind, Name string
}

// Error says how many tokens of the minute were used, of which account, and when to retry.
func (e *TokenRateError) Error() string {
	of := ""
	if e.Name != "" {
		of = " of " + strings.TrimSpace(strings.ReplaceAll(e.Kind, "_", " ")+" "+e.Name)
	}
	return fmt.Sprintf("completions: %d of %d tokens per minute%s used; retry after %s", e.Used, e.Limit, of, e.RetryAfter.Round(time.Second))
}

// Is matches ErrTokenRate.
func (e *TokenRateError) Is(target error) bool { return target == ErrTokenRate }
