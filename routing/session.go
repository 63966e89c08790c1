package routing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// MaxChainLength bounds how many sessions [Selector.SessionChain] follows.
const MaxChainLength = 1000

// Session is the stored record of one model selection. Message content is never stored;
// with hash_content it is kept as SHA-256 hashes only.
type Session struct {
	// ID is the session id returned to the caller.
	ID string `json:"session_id"`
	// Owner is the caller the session belongs to; other owners cannot read it.
	Owner string `json:"owner"`
	// CreatedAt is when the selection was made (UTC).
	CreatedAt time.Time `json:"created_at"`
	// Chosen is the label of the chosen candidate (the response's llm_label).
	Chosen string `json:"chosen"`
	// Ranked is the ranked list the caller saw, best first (cut at max_model_depth, so a
	// session stays small however many candidates were sent).
	Ranked []SessionCandidate `json:"ranked"`
	// Tradeoff, PreferenceID and PreviousSession echo the request.
	Tradeoff        string `json:"tradeoff,omitempty"`
	PreferenceID    string `json:"preference_id,omitempty"`
	PreviousSession string `json:"previous_session,omitempty"`
	// MessageHashes are the SHA-256 hashes of the message contents when hash_content was
	// true; empty otherwise.
	MessageHashes []MessageHash `json:"message_hashes,omitempty"`
	// Tasks are the top tasks the learned default router's task head saw in the
	// conversation (only under a pref_ preference): the context feedback is learned in.
	Tasks []TaskWeight `json:"tasks,omitempty"`
}

// SessionCandidate is one entry of a session's ranked list.
type SessionCandidate struct {
	// Label is the candidate in the caller's shape.
	Label string `json:"label"`
	// IsCustom echoes the candidate's is_custom: feedback on it counts for the caller's
	// own model, apart from the public model of the same name. Sessions stored before it
	// existed read as public models.
	IsCustom bool `json:"is_custom,omitempty"`
	// Score and Source are as in [Scored].
	Score  float64 `json:"score"`
	Source string  `json:"source"`
	// Base is the base router's quality estimate before a pref_ preference's correction
	// (only under such a preference): what the preference learns against.
	Base *float64 `json:"base,omitempty"`
	// Feedback is the feedback.accuracy given on this candidate (0 or 1), if any.
	Feedback *float64 `json:"feedback,omitempty"`
	// TokensPerSecond is the speed reported for this candidate's call (Not Diamond's
	// latency report), if any.
	TokensPerSecond *float64 `json:"tokens_per_second,omitempty"`
}

// key is the modelKey a preference counts feedback on this candidate under.
func (c SessionCandidate) key() modelKey {
	return modelKey{name: strings.ToLower(c.Label), custom: c.IsCustom}
}

// MessageHash is a message's role and the hex SHA-256 of its content.
type MessageHash struct {
	Role   string `json:"role"`
	SHA256 string `json:"sha256"`
}

func newSessionID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("routing: session id: %w", err)
	}
	return "sess_" + hex.EncodeToString(b[:]), nil
}

func hashMessages(msgs []Message) []MessageHash {
	out := make([]MessageHash, len(msgs))
	for i, m := range msgs {
		sum := sha256.Sum256([]byte(m.Content))
		out[i] = MessageHash{Role: m.Role, SHA256: hex.EncodeToString(sum[:])}
	}
	return out
}

// Session returns the owner's session id. Unknown ids and sessions of other owners return
// a *NotFoundError (matching ErrNotFound).
func (s *Selector) Session(ctx context.Context, owner, id string) (*Session, error) {
	return s.loadSession(ctx, owner, id, "session_id")
}

func (s *Selector) loadSession(ctx context.Context, owner, id, field string) (*Session, error) {
	if id == "" {
		return nil, &NotFoundError{Field: field, ID: id}
	}
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	sess, err := store.GetJSON[Session](ctx, s.store, store.Sessions, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &NotFoundError{Field: field, ID: id, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("routing: read session %q: %w", id, err)
	}
	if !store.Owns(owner, sess.Owner) {
		return nil, &NotFoundError{Field: field, ID: id}
	}
	return &sess, nil
}

// SessionChain returns the session id and the sessions it links to through
// previous_session, newest first, at most MaxChainLength of them.
func (s *Selector) SessionChain(ctx context.Context, owner, id string) ([]Session, error) {
	var out []Session
	seen := map[string]bool{}
	for next := id; next != "" && len(out) < MaxChainLength && !seen[next]; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		seen[next] = true
		sess, err := s.loadSession(ctx, owner, next, "session_id")
		if err != nil {
			if len(out) > 0 && errors.Is(err, ErrNotFound) {
				break // an earlier link was removed; the chain ends here
			}
			return nil, err
		}
		out = append(out, *sess)
		next = sess.PreviousSession
	}
	return out, nil
}

// DefaultSessionRetention is how long model selection sessions are kept by default.
const DefaultSessionRetention = 30 * 24 * time.Hour

// expirePage is how many sessions ExpireSessions reads (and at most deletes) at a time.
const expirePage = 500

// ExpireSessions deletes the sessions older than the retention (Options.SessionRetention)
// and returns how many it deleted. A previous_session naming a deleted session is then
// not found. The server runs it at start and hourly.
//
// It reads the sessions' index by creation time (store.SessionExpiry), oldest first up to
// the cutoff, and only the sessions it names: the sessions kept cost the index page where
// it stops. Each session is read again in the transaction that deletes it. The first run
// on a store written by a build without the index indexes the sessions it kept (see
// indexEarlierSessions).
func (s *Selector) ExpireSessions(ctx context.Context) (int, error) {
	if s.store == nil {
		return 0, ErrZeroSelector
	}
	if s.keep < 0 {
		return 0, nil
	}
	now := s.now()
	cutoff := now.Add(-s.keep)
	deleted, err := s.indexEarlierSessions(ctx, now, cutoff)
	if err != nil {
		return deleted, fmt.Errorf("routing: expire sessions: %w", err)
	}
	for after := ""; ; {
		page, err := s.store.List(ctx, store.SessionExpiry, store.ListOptions{After: after, Limit: expirePage})
		if err != nil {
			return deleted, fmt.Errorf("routing: list sessions by age: %w", err)
		}
		due := 0
		for _, e := range page {
			if created, _, ok := parseSessionExpiryKey(e.Key); ok && !created.Before(cutoff) {
				break
			}
			due++
		}
		if due > 0 {
			n := 0
			err := s.store.Update(ctx, func(tx store.Tx) error {
				n = 0 // the store may run this more than once
				for _, e := range page[:due] {
					if err := tx.Delete(ctx, store.SessionExpiry, e.Key); err != nil {
						return err
					}
					_, id, ok := parseSessionExpiryKey(e.Key)
					if !ok {
						continue // not a key this code writes: nothing to delete with it
					}
					gone, err := deleteSessionIfOld(ctx, tx, id, cutoff)
					if err != nil {
						return err
					}
					if gone {
						n++
					}
				}
				return nil
			})
			if err != nil {
				return deleted, fmt.Errorf("routing: expire sessions: %w", err)
			}
			deleted += n
		}
		if due < len(page) || len(page) < expirePage {
			return deleted, nil
		}
		after = page[len(page)-1].Key
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
	}
}

// sessionIndexMigration names, in store.Migrations, the one-time scan that indexed the
// sessions kept before store.SessionExpiry existed.
const sessionIndexMigration = "session_expiry_index"

// indexEarlierSessions makes sure every session has its store.SessionExpiry key:
// sessions written by a build before the index have none, and no indexed run of
// ExpireSessions would find them. When store.MigrationDue says so (never ran, or ran once
// a day ago: replicas of the earlier build may have written more meanwhile), it reads
// every session, a page a transaction, deletes those created before cutoff (returning how
// many) and indexes the others, then records that it ran (at now). Stopped half way,
// the next run does it again.
func (s *Selector) indexEarlierSessions(ctx context.Context, now, cutoff time.Time) (int, error) {
	if due, err := store.MigrationDue(ctx, s.store, sessionIndexMigration, now); err != nil || !due {
		return 0, err
	}
	deleted := 0
	for after := ""; ; {
		page, err := s.store.List(ctx, store.Sessions, store.ListOptions{After: after, Limit: expirePage})
		if err != nil {
			return deleted, err
		}
		n := 0
		err = s.store.Update(ctx, func(tx store.Tx) error {
			n = 0 // the store may run this more than once
			for _, e := range page {
				if created, ok := sessionCreated(e.Value); ok && !created.Before(cutoff) {
					if err := tx.Put(ctx, store.SessionExpiry, sessionExpiryKey(created, e.Key), nil); err != nil {
						return err
					}
					continue
				}
				gone, err := deleteSessionIfOld(ctx, tx, e.Key, cutoff)
				if err != nil {
					return err
				}
				if gone {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
		deleted += n
		if len(page) < expirePage {
			break
		}
		after = page[len(page)-1].Key
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
	}
	return deleted, store.MigrationRan(ctx, s.store, sessionIndexMigration, now)
}

// deleteSessionIfOld deletes session id, read inside tx, with its store.SessionExpiry key
// if it was created before cutoff (or cannot be read); one created since keeps (or, if an
// earlier build wrote it, gets) its index key.
func deleteSessionIfOld(ctx context.Context, tx store.Tx, id string, cutoff time.Time) (bool, error) {
	b, err := tx.Get(ctx, store.Sessions, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	created, ok := sessionCreated(b)
	if ok && !created.Before(cutoff) {
		return false, tx.Put(ctx, store.SessionExpiry, sessionExpiryKey(created, id), nil)
	}
	if err := tx.Delete(ctx, store.Sessions, id); err != nil {
		return false, err
	}
	if ok {
		return true, tx.Delete(ctx, store.SessionExpiry, sessionExpiryKey(created, id))
	}
	return true, nil
}

// putSession stores sess in tx with its store.SessionExpiry key. was is the creation
// time of the record it replaces (zero for a new session): that record's key goes if it
// differs.
func putSession(ctx context.Context, tx store.Tx, sess *Session, was time.Time) error {
	key := sessionExpiryKey(sess.CreatedAt, sess.ID)
	if !was.IsZero() && sessionExpiryKey(was, sess.ID) != key {
		if err := tx.Delete(ctx, store.SessionExpiry, sessionExpiryKey(was, sess.ID)); err != nil {
			return err
		}
	}
	if err := store.PutJSON(ctx, tx, store.Sessions, sess.ID, sess); err != nil {
		return err
	}
	return tx.Put(ctx, store.SessionExpiry, key, nil)
}

// sessionCreated reads a stored session's creation time.
func sessionCreated(b []byte) (time.Time, bool) {
	var sess struct {
		CreatedAt time.Time `json:"created_at"`
	}
	if err := json.Unmarshal(b, &sess); err != nil {
		return time.Time{}, false
	}
	return sess.CreatedAt, true
}

// sessionExpiryKey is the store.SessionExpiry key of session id created at: the time
// first (Unix nanoseconds, 19 digits; a time before 1970 as 0), so that the index lists
// the oldest first. A session expires a retention after its creation; the retention is
// an option, so the index keeps the creation time and the sweep its cutoff.
func sessionExpiryKey(created time.Time, id string) string {
	return fmt.Sprintf("%019d/%s", max(created.UnixNano(), 0), id)
}

// parseSessionExpiryKey reads a sessionExpiryKey.
func parseSessionExpiryKey(key string) (time.Time, string, bool) {
	ns, id, ok := strings.Cut(key, "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", false
	}
	return time.Unix(0, n), id, true
}
