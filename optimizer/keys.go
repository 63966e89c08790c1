package optimizer

import (
	"context"
	"errors"
	"time"
)

// KeyMinter issues the per-job gateway key a sandboxed agent calls the target model with.
// The server implements it with a temporary API key limited to the job's target model and
// metered by the gateway (see server.WithOptimizer); a library user without a gateway can
// pass StaticKey.
type KeyMinter interface {
	MintKey(ctx context.Context, g KeyGrant) (*JobKey, error)
}

// KeyGrant says what a key is for.
type KeyGrant struct {
	// Owner is the job's owner; calls made with the key are the owner's.
	Owner string
	// JobID tags the calls (for the ledger).
	JobID string
	// Model is the only model ("provider/model") the key may call.
	Model string
	// MaxCalls and MaxTokens bound what the key may spend over the model's whole loop
	// (every sandbox run of every iteration); 0 means no bound.
	MaxCalls, MaxTokens int64
	// TTL is the longest the key may stay valid (the job's overall timeout); a key whose
	// Revoke never ran (the process died) expires then. 0: the minter's choice.
	TTL time.Duration
	// CallTimeout is how long one LLM call made with the key may take (the job's
	// llm_call_timeout_seconds); 0: the gateway's own limits.
	CallTimeout time.Duration
}

// JobKey is a minted key.
type JobKey struct {
	// Key is the bearer key the agent receives as OPENAI_API_KEY.
	Key string
	// Revoke ends the key's validity; the optimizer calls it when the model's loop ends.
	// Nil means nothing to revoke.
	Revoke func()
	// Usage returns what has been spent with the key so far, as metered by the gateway.
	// Nil means the key is not metered; the optimizer then counts the usage run_batch
	// reports.
	Usage func() Usage
	// Ref names the key for KeyReclaimer.ReclaimKey in any process on the same store; it
	// is kept in the job's record while the key is valid, so it must not be the key
	// itself. Empty when the minter cannot reclaim keys.
	Ref string
}

// KeyReclaimer is implemented by minters whose keys can be ended from another process: the
// keys a run cut short left valid are reclaimed by the job's next run (on the worker that
// takes it over, or when it starts again after a restart), by a cancel or delete of it
// before then, or by the worker that fails it — so they stop working then instead of at
// their TTL — and their spend is carried into the job's results (Results.CutRuns; the
// results of a failed job's last run, when it ends with them).
type KeyReclaimer interface {
	// ReclaimKey revokes the key ref names and returns what was spent with it. A key
	// already revoked or expired returns an error wrapping ErrKeyGone.
	ReclaimKey(ctx context.Context, ref string) (Usage, error)
}

// ErrKeyGone is wrapped by ReclaimKey's error for a key that no longer exists.
var ErrKeyGone = errors.New("optimizer: the job key was already revoked or expired")

// StaticKey is a KeyMinter that hands every job the same key, without metering (for
// library use against an OpenAI-compatible endpoint, and for tests).
type StaticKey string

// MintKey implements KeyMinter.
func (k StaticKey) MintKey(context.Context, KeyGrant) (*JobKey, error) {
	return &JobKey{Key: string(k)}, nil
}
