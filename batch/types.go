package batch

import (
	"encoding/json"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Status is a batch's state, as OpenAI names them: validating (accepted, waiting for a
// worker) → in_progress → finalizing (writing the output and error files) → completed;
// cancelling → cancelled; expired (not finished within its completion window, with what
// it had done); failed (the key that created it was revoked, or its worker died too often).
type Status string

// Batch states.
const (
	StatusValidating Status = "validating"
	StatusFailed     Status = "failed"
	StatusInProgress Status = "in_progress"
	StatusFinalizing Status = "finalizing"
	StatusCompleted  Status = "completed"
	StatusExpired    Status = "expired"
	StatusCancelling Status = "cancelling"
	StatusCancelled  Status = "cancelled"
)

// Bounds and defaults of batches.
const (
	// CompletionWindow is the only completion window accepted (OpenAI's).
	CompletionWindow = "24h"
	// DefaultConcurrency is how many lines of one batch run at once (serve
	// --batch-concurrency).
	DefaultConcurrency = 4
	// MaxMetadataPairs, MaxMetadataKey and MaxMetadataValue are OpenAI's bounds of
	// metadata: 16 pairs, keys of 64 characters, values of 512.
	MaxMetadataPairs = 16
	MaxMetadataKey   = 64
	MaxMetadataValue = 512
	// DefaultBatchListLimit and MaxBatchListLimit bound a page of List (OpenAI's).
	DefaultBatchListLimit = 20
	MaxBatchListLimit     = 100
	// MaxStarts is how many times a batch may be started (its worker died or was killed
	// each time) before it fails with what it has.
	MaxStarts = 5
)

// CreateRequest is the body of POST /v1/batches.
type CreateRequest struct {
	InputFileID string `json:"input_file_id" jsonschema:"required,description=A file of purpose batch: one request per line"`
	Endpoint    string `json:"endpoint" jsonschema:"required,enum=/v1/chat/completions,enum=/v1/embeddings,enum=/v1/responses,enum=/v1/completions,enum=/v1/moderations"`
	// CompletionWindow must be "24h".
	CompletionWindow string `json:"completion_window" jsonschema:"required,enum=24h"`
	// Metadata is at most 16 pairs; keys of at most 64 characters, values of 512.
	Metadata map[string]string `json:"metadata,omitempty"`
	// OutputExpiresAfter bounds the life of the output and error files (else they are
	// kept until deleted).
	OutputExpiresAfter *ExpiresAfter `json:"output_expires_after,omitempty"`
}

// Batch is OpenAI's batch object. Times are Unix seconds, null until they happen.
type Batch struct {
	ID               string            `json:"id" jsonschema:"description=batch_ and 24 hex digits"`
	Object           string            `json:"object" jsonschema:"enum=batch"`
	Endpoint         string            `json:"endpoint"`
	Errors           *BatchErrors      `json:"errors" jsonschema:"nullable"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Status           Status            `json:"status" jsonschema:"enum=validating,enum=failed,enum=in_progress,enum=finalizing,enum=completed,enum=expired,enum=cancelling,enum=cancelled"`
	OutputFileID     *string           `json:"output_file_id" jsonschema:"description=The file of the lines answered with a 2xx status (purpose batch_output); null until the batch ends or when none was,nullable"`
	ErrorFileID      *string           `json:"error_file_id" jsonschema:"description=The file of the other lines: answered with an error status or never answered (purpose batch_output),nullable"`
	CreatedAt        int64             `json:"created_at"`
	InProgressAt     *int64            `json:"in_progress_at" jsonschema:"nullable"`
	ExpiresAt        *int64            `json:"expires_at" jsonschema:"nullable"`
	FinalizingAt     *int64            `json:"finalizing_at" jsonschema:"nullable"`
	CompletedAt      *int64            `json:"completed_at" jsonschema:"nullable"`
	FailedAt         *int64            `json:"failed_at" jsonschema:"nullable"`
	ExpiredAt        *int64            `json:"expired_at" jsonschema:"nullable"`
	CancellingAt     *int64            `json:"cancelling_at" jsonschema:"nullable"`
	CancelledAt      *int64            `json:"cancelled_at" jsonschema:"nullable"`
	RequestCounts    RequestCounts     `json:"request_counts"`
	Usage            Usage             `json:"usage"`
	Metadata         map[string]string `json:"metadata" jsonschema:"nullable"`
	// Switchyard is an extension OpenAI's SDKs ignore: what the batch's lines cost.
	Switchyard *Extension `json:"switchyard,omitempty"`
}

// BatchErrors lists why a batch failed as a whole (OpenAI's errors object).
type BatchErrors struct {
	Object string       `json:"object" jsonschema:"enum=list"`
	Data   []BatchError `json:"data"`
}

// BatchError is one entry of BatchErrors.
type BatchError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param" jsonschema:"nullable"`
	Line    *int    `json:"line" jsonschema:"nullable"`
}

// RequestCounts counts a batch's requests: Completed were answered with a 2xx status,
// Failed were answered with another or never answered.
type RequestCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// Usage is the tokens a batch's answered lines used (OpenAI's batch usage).
type Usage struct {
	InputTokens         int                `json:"input_tokens"`
	InputTokensDetails  InputTokenDetails  `json:"input_tokens_details"`
	OutputTokens        int                `json:"output_tokens"`
	OutputTokensDetails OutputTokenDetails `json:"output_tokens_details"`
	TotalTokens         int                `json:"total_tokens"`
}

// InputTokenDetails breaks input tokens down.
type InputTokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// OutputTokenDetails breaks output tokens down.
type OutputTokenDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// add adds u2 to u.
func (u *Usage) add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.TotalTokens += u2.TotalTokens
	u.InputTokensDetails.CachedTokens += u2.InputTokensDetails.CachedTokens
	u.OutputTokensDetails.ReasoningTokens += u2.OutputTokensDetails.ReasoningTokens
}

// Extension is the "switchyard" member of a batch: its cost.
type Extension struct {
	// CostUSD is what the answered lines cost, as the gateway priced them (budgets and the
	// usage log count the same).
	CostUSD float64 `json:"cost_usd"`
}

// BatchList is a page of List (OpenAI's list object).
type BatchList struct {
	Object  string  `json:"object" jsonschema:"enum=list"`
	Data    []Batch `json:"data"`
	FirstID string  `json:"first_id,omitempty"`
	LastID  string  `json:"last_id,omitempty"`
	HasMore bool    `json:"has_more"`
}

// OutputLine is one line of a batch's output or error file (OpenAI's): Response for a
// line the endpoint answered (whatever its status), Error for one it never answered.
type OutputLine struct {
	ID       string        `json:"id" jsonschema:"description=batch_req_ and 24 hex digits: also the request id of the line's request"`
	CustomID string        `json:"custom_id"`
	Response *LineResponse `json:"response" jsonschema:"nullable"`
	Error    *LineError    `json:"error" jsonschema:"nullable"`
}

// LineResponse is the endpoint's answer to a line.
type LineResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

// LineError is why a line was never answered: code batch_expired, api_key_revoked,
// batch_failed or internal_error.
type LineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Codes of LineError and BatchError.
const (
	CodeExpired     = "batch_expired"
	CodeKeyRevoked  = "api_key_revoked"
	CodeFailed      = "batch_failed"
	CodeInternal    = "internal_error"
	CodeInterrupted = "interrupted"
)

// ending is how a batch's run ends: the status it finalizes to and why.
type ending string

const (
	endCompleted  ending = "completed"
	endCancelled  ending = "cancelled"
	endExpired    ending = "expired"
	endKeyRevoked ending = "key_revoked"
	endCrashed    ending = "crashed"
)

// record is a batch in store.Batches.
type record struct {
	ID               string            `json:"id"`
	Owner            string            `json:"owner"`
	Credential       string            `json:"credential"`
	Endpoint         string            `json:"endpoint"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	OutputExpiry     int64             `json:"output_expiry,omitempty"` // seconds; 0: kept
	Status           Status            `json:"status"`
	Ending           ending            `json:"ending,omitempty"`
	Errors           []BatchError      `json:"errors,omitempty"`
	OutputFileID     string            `json:"output_file_id,omitempty"`
	ErrorFileID      string            `json:"error_file_id,omitempty"`

	CreatedAt    time.Time `json:"created_at"`
	InProgressAt time.Time `json:"in_progress_at,omitzero"`
	ExpiresAt    time.Time `json:"expires_at"`
	FinalizingAt time.Time `json:"finalizing_at,omitzero"`
	CompletedAt  time.Time `json:"completed_at,omitzero"`
	FailedAt     time.Time `json:"failed_at,omitzero"`
	ExpiredAt    time.Time `json:"expired_at,omitzero"`
	CancellingAt time.Time `json:"cancelling_at,omitzero"`
	CancelledAt  time.Time `json:"cancelled_at,omitzero"`

	Total     int     `json:"total"`
	Completed int     `json:"completed"`
	Failed    int     `json:"failed"`
	Usage     Usage   `json:"usage"`
	CostUSD   float64 `json:"cost_usd"`

	// Starts counts the runs that claimed the batch (a run's identity: a run whose number
	// is no longer the record's was taken over); HandedBack the runs that gave it back
	// at a shutdown. Starts - HandedBack - 1 runs died mid-batch.
	Starts      int       `json:"starts"`
	HandedBack  int       `json:"handed_back,omitempty"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	HeartbeatAt time.Time `json:"heartbeat_at,omitzero"`
}

// batchKind is the owner-index kind of batches.
const batchKind = "batch"

// ref is the record's owner-index reference.
func (r *record) ref() store.OwnedRef {
	return store.OwnedRef{Kind: batchKind, Owner: r.Owner, Created: r.CreatedAt, ID: r.ID}
}

// terminal reports whether the batch has ended.
func (s Status) terminal() bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// The jobqueue.Record methods.

// Unfinished reports whether the batch has not ended.
func (r *record) Unfinished() bool { return !r.Status.terminal() }

// Running reports whether a run has claimed the batch (in_progress, cancelling or
// finalizing).
func (r *record) Running() bool {
	return r.Status == StatusInProgress || r.Status == StatusCancelling || r.Status == StatusFinalizing
}

// Attempt is the number of the run that claimed the batch last.
func (r *record) Attempt() int { return r.Starts }

// LastSeen is the run's heartbeat, else its start.
func (r *record) LastSeen() time.Time {
	if r.HeartbeatAt.IsZero() {
		return r.StartedAt
	}
	return r.HeartbeatAt
}

// CancelAsked reports whether a cancel was asked.
func (r *record) CancelAsked() bool { return r.Status == StatusCancelling }

// SetHeartbeat records that the run was alive at t.
func (r *record) SetHeartbeat(t time.Time) { r.HeartbeatAt = t }

// unix returns t as Unix seconds, nil for the zero time.
func unix(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.Unix()
	return &v
}

// object is the record's wire form.
func (r *record) object() Batch {
	b := Batch{ID: r.ID, Object: "batch", Endpoint: r.Endpoint, InputFileID: r.InputFileID,
		CompletionWindow: r.CompletionWindow, Status: r.Status, CreatedAt: r.CreatedAt.Unix(),
		InProgressAt: unix(r.InProgressAt), ExpiresAt: unix(r.ExpiresAt), FinalizingAt: unix(r.FinalizingAt),
		CompletedAt: unix(r.CompletedAt), FailedAt: unix(r.FailedAt), ExpiredAt: unix(r.ExpiredAt),
		CancellingAt: unix(r.CancellingAt), CancelledAt: unix(r.CancelledAt),
		RequestCounts: RequestCounts{Total: r.Total, Completed: r.Completed, Failed: r.Failed},
		Usage:         r.Usage, Metadata: r.Metadata, Switchyard: &Extension{CostUSD: r.CostUSD}}
	if r.OutputFileID != "" {
		id := r.OutputFileID
		b.OutputFileID = &id
	}
	if r.ErrorFileID != "" {
		id := r.ErrorFileID
		b.ErrorFileID = &id
	}
	if len(r.Errors) > 0 {
		b.Errors = &BatchErrors{Object: "list", Data: r.Errors}
	}
	return b
}
