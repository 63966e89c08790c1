package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// A shared key is a temporary scoped key (an optimization job's key) that every process on
// the same store accepts: the process that mints it holds its Principal in memory (the fast
// path), and a record in store.ScopedKeys — the key's hash, owner, expiry and a JSON scope
// document — lets any other replica rebuild the Principal through the ScopeResolver. With
// PostgreSQL this is what lets a sandboxed agent on one machine call the gateway through a
// load balancer in front of several replicas.

// storedScopedKey is a shared key's record, keyed by the hex SHA-256 of the key.
type storedScopedKey struct {
	Owner     string          `json:"owner"`
	Scope     json.RawMessage `json:"scope"`
	ExpiresAt time.Time       `json:"expires_at"`
}

// ScopeResolver turns a shared key's stored scope document into the Principal's Scope.
type ScopeResolver func(ctx context.Context, owner string, doc json.RawMessage) (any, error)

// SetScopeResolver sets how shared keys' scope documents become scopes in processes that
// did not mint them. Without one, such keys are refused.
func (a *Auth) SetScopeResolver(r ScopeResolver) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resolver = r
}

// AddSharedKey makes key valid for owner until revoke is called or ttl passes: at once in
// this process with scope, and in every process on the same store through doc (see
// SetScopeResolver). Only the key's hash is stored. revoke removes both.
func (a *Auth) AddSharedKey(ctx context.Context, key, owner string, scope any, doc json.RawMessage, ttl time.Duration) (revoke func(context.Context) error, err error) {
	if a.store == nil {
		return nil, errors.New("auth: no store to share the key through")
	}
	h := sha256.Sum256([]byte(key))
	id := hex.EncodeToString(h[:])
	rec := storedScopedKey{Owner: owner, Scope: doc, ExpiresAt: time.Now().Add(ttl).UTC()}
	if err := store.PutJSON(ctx, a.store, store.ScopedKeys, id, rec); err != nil {
		return nil, fmt.Errorf("auth: store the scoped key: %w", err)
	}
	local := a.AddTemporaryKey(key, owner, scope)
	return func(ctx context.Context) error {
		local()
		return a.store.Delete(context.WithoutCancel(ctx), store.ScopedKeys, id)
	}, nil
}

// sharedKey returns the Principal of a shared key minted by another process, or ok false
// when h is not one (or expired: the record is then deleted).
func (a *Auth) sharedKey(ctx context.Context, h [sha256.Size]byte) (Principal, bool, error) {
	id := hex.EncodeToString(h[:])
	rec, err := store.GetJSON[storedScopedKey](ctx, a.store, store.ScopedKeys, id)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, false, nil
	}
	if err != nil {
		return Principal{}, false, fmt.Errorf("auth: reading scoped keys: %w: %w", ErrKeyStoreUnavailable, err)
	}
	if time.Now().After(rec.ExpiresAt) {
		if a.isVirtualKey(ctx, rec) {
			// A virtual key past its expires_at stays listed (and may be extended by an
			// update): its record stays too, and its holder is told it expired, as LiteLLM
			// tells it.
			return Principal{}, false, &KeyExpiredError{At: rec.ExpiresAt}
		}
		// Deleted only if still expired when deleted: a PATCH may have just extended it.
		_ = a.store.Update(ctx, func(tx store.Tx) error {
			cur, err := store.GetJSON[storedScopedKey](ctx, tx, store.ScopedKeys, id)
			if err != nil || !time.Now().After(cur.ExpiresAt) {
				return nil
			}
			return tx.Delete(ctx, store.ScopedKeys, id)
		})
		return Principal{}, false, nil
	}
	a.mu.RLock()
	resolve := a.resolver
	a.mu.RUnlock()
	if resolve == nil {
		return Principal{}, false, nil
	}
	scope, err := resolve(ctx, rec.Owner, rec.Scope)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, false, nil // its budget is gone: the key was revoked meanwhile
	}
	if err != nil {
		return Principal{}, false, fmt.Errorf("auth: scoped key: %w", err)
	}
	if _, virtual := scope.(virtualKeyScope); virtual {
		// A virtual key acts for the key that issued it: not once that key is retired.
		if live, err := a.ownerLive(ctx, rec.Owner); err != nil || !live {
			return Principal{}, false, err
		}
	}
	return Principal{Owner: rec.Owner, Scope: scope}, true, nil
}

// isVirtualKey says rec is a virtual key's (its scope resolves to one).
func (a *Auth) isVirtualKey(ctx context.Context, rec storedScopedKey) bool {
	a.mu.RLock()
	resolve := a.resolver
	a.mu.RUnlock()
	if resolve == nil {
		return false
	}
	scope, err := resolve(ctx, rec.Owner, rec.Scope)
	_, virtual := scope.(virtualKeyScope)
	return err == nil && virtual
}

// KeyExpiredError is a virtual key presented after its expires_at (At). It matches
// ErrNoKey: the key is not accepted.
type KeyExpiredError struct{ At time.Time }

// Error says when the key expired.
func (e *KeyExpiredError) Error() string {
	return "expired API key: it expired at " + e.At.UTC().Format(time.RFC3339)
}

// Unwrap makes the error match ErrNoKey.
func (e *KeyExpiredError) Unwrap() error { return ErrNoKey }
