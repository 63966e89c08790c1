package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// An ephemeral client secret (OpenAI's POST /v1/realtime/client_secrets) lets a browser open
// a realtime session through the gateway without holding a key: the caller's backend mints
// it with its key, bound to a model and a session configuration, and hands the browser only
// the secret (ek_…), which opens /v1/realtime sessions — nothing else — until it expires.
// Each session is admitted, held to limits and billed as the minting key's own (read again
// at every connection: a key revoked or spent meanwhile opens nothing), and starts with the
// bound configuration applied. Only the secret's SHA-256 is stored (store.RealtimeSecrets),
// so every replica on the store accepts it.

// realtimeSecretPrefix starts the ephemeral client secrets the server mints.
const realtimeSecretPrefix = "ek_"

// Bounds of a client secret's life (OpenAI's expires_after.seconds), and its default.
const (
	minRealtimeSecretTTL     = 10 * time.Second
	maxRealtimeSecretTTL     = 2 * time.Hour
	defaultRealtimeSecretTTL = 10 * time.Minute
)

// realtimeSecretSweepEvery is how often minting also deletes the expired secrets' records.
const realtimeSecretSweepEvery = 10 * time.Minute

// realtimeSessionApplyTimeout bounds how long the upstream may take to apply a client
// secret's session configuration before the session is refused.
const realtimeSessionApplyTimeout = 15 * time.Second

// realtimeSecretRecord is what the store keeps of a client secret, keyed by its hex SHA-256.
type realtimeSecretRecord struct {
	// Credential is the minting key's Credential (its hex SHA-256): sessions run as that key.
	Credential string `json:"credential"`
	// Model is the realtime model the secret opens sessions of (the transcription model of
	// a transcription session's).
	Model string `json:"model"`
	// Type is the sessions' type: "" (realtime) or "transcription".
	Type string `json:"type,omitempty"`
	// Beta says Session is of the beta protocol (a transcription_session.update's session,
	// minted by POST /v1/realtime/transcription_sessions): its sessions speak that protocol.
	Beta bool `json:"beta,omitempty"`
	// Session is the configuration applied to every session (a session.update's session,
	// without its model); none when nil.
	Session   json.RawMessage `json:"session,omitempty"`
	ExpiresAt time.Time       `json:"expires_at"`
}

// transcribes reports whether the secret (nil: none) opens transcription sessions.
func (rec *realtimeSecretRecord) transcribes() bool {
	return rec != nil && rec.Type == sessionTypeTranscription
}

// sessionTypeTranscription is the session type of a transcription-only session.
const sessionTypeTranscription = "transcription"

// RealtimeClientSecretRequest is OpenAI's POST /v1/realtime/client_secrets body.
type RealtimeClientSecretRequest struct {
	// ExpiresAfter sets the secret's life from its creation.
	ExpiresAfter *RealtimeSecretExpiry `json:"expires_after,omitempty" jsonschema:"description=When the secret expires: anchor created_at and seconds (10-7200; 600 when absent). A session must start before then and may last past it"`
	// Session is the configuration every session opened with the secret starts with.
	Session json.RawMessage `json:"session" jsonschema:"type=object,description=The realtime session configuration (OpenAI's GA session object): type realtime with model (a realtime model the key may call: gpt-realtime or a model group of realtime models) or type transcription with audio.input.transcription.model (a transcription model the key may call: gpt-4o-transcribe or whisper-1 or a model group of them; gpt-realtime-whisper when absent); the rest (instructions and audio and tools and the like) is applied as a session.update before the client's first event"`
}

// RealtimeSecretExpiry is a client secret's expires_after.
type RealtimeSecretExpiry struct {
	Anchor  string `json:"anchor" jsonschema:"enum=created_at"`
	Seconds int    `json:"seconds" jsonschema:"minimum=10,maximum=7200"`
}

// RealtimeClientSecret is the answer to POST /v1/realtime/client_secrets.
type RealtimeClientSecret struct {
	// Value is the secret (ek_…): a browser offers it as its key (the subprotocol
	// openai-insecure-api-key.<secret>, or Authorization: Bearer).
	Value string `json:"value"`
	// ExpiresAt is when it stops opening sessions (Unix seconds).
	ExpiresAt int64 `json:"expires_at"`
	// Session is the configuration bound to it.
	Session json.RawMessage `json:"session" jsonschema:"type=object"`
}

// realtimeSecretError refuses a client secret: unknown, expired, its minting key gone, or
// presented on a route it does not open. It matches ErrNoKey (a 401).
type realtimeSecretError struct{ msg string }

func (e *realtimeSecretError) Error() string { return e.msg }
func (e *realtimeSecretError) Unwrap() error { return ErrNoKey }

// errNotARealtimeSecret says a key that looks like a client secret is none: it is
// authenticated as a key (an operator's key may start with ek_ too).
var errNotARealtimeSecret = errors.New("not a realtime client secret")

// realtimeSecretSweep remembers when minting last deleted expired secrets.
type realtimeSecretSweep struct {
	mu   sync.Mutex
	last time.Time
}

// due reports whether a sweep of the secrets is due at now, marking it done.
func (sw *realtimeSecretSweep) due(now time.Time) bool {
	return sw.dueEvery(now, realtimeSecretSweepEvery)
}

// dueEvery reports whether a sweep done every every is due at now, marking it done.
func (sw *realtimeSecretSweep) dueEvery(now time.Time, every time.Duration) bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if now.Sub(sw.last) < every {
		return false
	}
	sw.last = now
	return true
}

// realtimeSecretRoutes registers POST /v1/realtime/client_secrets over g.
func (s *Server) realtimeSecretRoutes(g *completions.Gateway) {
	s.Handle(Route{Method: "POST", Path: "/v1/realtime/client_secrets",
		Summary: "OpenAI-compatible ephemeral client secret for realtime sessions: a browser offers it (ek_…) in place of a key to open /v1/realtime sessions of its model (or, with session.type transcription, transcription sessions of its transcription model) — and nothing else — until it expires; each session is admitted and billed as the minting key's own and starts with the bound session configuration",
		Tags:    []string{"Completions"}, VirtualKeys: true,
		Request: RealtimeClientSecretRequest{}, Response: RealtimeClientSecret{},
		Errors: map[int]string{400: "a field is missing or wrong (named), or the model has no realtime API here", 401: "key_model_access_denied (LiteLLM's): the key may not call the model"}},
		func(w http.ResponseWriter, r *http.Request) error {
			return s.handleRealtimeClientSecret(g, w, r)
		})
}

// handleRealtimeClientSecret mints a client secret for the caller's key.
func (s *Server) handleRealtimeClientSecret(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Store == nil {
		return s.openAIError(w, r, Errorf(http.StatusServiceUnavailable, KindUnavailable, "client secrets need the server's store"))
	}
	var req RealtimeClientSecretRequest
	if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, AllowUnknownFields: true}); err != nil {
		return s.openAIError(w, r, err)
	}
	ttl, err := req.ttl()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	typ, model, modelField, session, err := realtimeSecretSession(req.Session)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	rec := realtimeSecretRecord{Model: model, Type: typ, Session: session}
	if err := s.checkSecretModel(g, r, &rec, modelField); err != nil {
		return s.openAIError(w, r, err)
	}
	secret, err := s.mintRealtimeSecret(r, &rec, ttl)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	writeJSON(w, http.StatusOK, RealtimeClientSecret{Value: secret, ExpiresAt: rec.ExpiresAt.Unix(), Session: answeredSession(rec, secret)})
	return nil
}

// checkSecretModel checks the model of rec, a client secret about to be minted by r's
// key, as a session of it would be admitted (CheckRealtime, CheckRealtimeTranscription),
// a refusal naming field.
func (s *Server) checkSecretModel(g *completions.Gateway, r *http.Request, rec *realtimeSecretRecord, field string) error {
	scope, err := s.gatewayScope(r, time.Now())
	if err != nil {
		return err
	}
	check := g.CheckRealtime
	if rec.transcribes() {
		check = g.CheckRealtimeTranscription
	}
	if err := check(scope, rec.Model); err != nil {
		var ve *completions.ValidationError
		if errors.As(err, &ve) && ve.Field == "model" {
			ve.Field = field
		}
		return err
	}
	return nil
}

// mintRealtimeSecret stores rec for a new client secret of r's key living ttl, and returns
// the secret.
func (s *Server) mintRealtimeSecret(r *http.Request, rec *realtimeSecretRecord, ttl time.Duration) (string, error) {
	raw := make([]byte, 16)
	rand.Read(raw)
	secret := realtimeSecretPrefix + hex.EncodeToString(raw)
	now := time.Now()
	rec.Credential, rec.ExpiresAt = Credential(r), now.Add(ttl).UTC()
	if err := s.putRealtimeSecret(r.Context(), secretID(secret), *rec); err != nil {
		return "", err
	}
	if s.realtimeSweep.due(now) {
		go s.sweepRealtimeSecrets(context.WithoutCancel(r.Context()), now)
	}
	return secret, nil
}

// ttl is the life req asks for: expires_after checked (anchor created_at, 10-7200 s).
func (req *RealtimeClientSecretRequest) ttl() (time.Duration, error) {
	e := req.ExpiresAfter
	if e == nil {
		return defaultRealtimeSecretTTL, nil
	}
	if e.Anchor != "created_at" {
		return 0, paramError("expires_after.anchor", "expires_after.anchor must be created_at, got %q", e.Anchor)
	}
	ttl := time.Duration(e.Seconds) * time.Second
	if ttl < minRealtimeSecretTTL || ttl > maxRealtimeSecretTTL {
		return 0, paramError("expires_after.seconds", "expires_after.seconds must be %d-%d, got %d", int(minRealtimeSecretTTL.Seconds()), int(maxRealtimeSecretTTL.Seconds()), e.Seconds)
	}
	return ttl, nil
}

// realtimeSecretSession checks raw, a client secret request's session, and returns its
// type ("" for realtime, or transcription), its model (a transcription session's
// transcription model: session.audio.input.transcription.model, else session.model, else
// DefaultRealtimeTranscriptionModel), the field that named it, and the configuration to
// apply (raw without its model; nil when nothing is left but a realtime session's type).
func realtimeSecretSession(raw json.RawMessage) (typ, model, field string, session json.RawMessage, err error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", "", "", nil, paramError("session", "session is required: {\"type\": \"realtime\", \"model\": \"gpt-realtime\", …}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", "", "", nil, paramError("session", "session must be an object")
	}
	if t, ok := fields["type"]; ok && json.Unmarshal(t, &typ) != nil {
		return "", "", "", nil, paramError("session.type", "session.type must be a string")
	}
	switch typ {
	case "realtime", sessionTypeTranscription:
	default:
		return "", "", "", nil, paramError("session.type", "session.type must be realtime or transcription, got %q", typ)
	}
	m, named := fields["model"]
	if named && (json.Unmarshal(m, &model) != nil || strings.TrimSpace(model) == "") {
		return "", "", "", nil, paramError("session.model", "session.model must name the model (a string)")
	}
	delete(fields, "model")
	if typ == sessionTypeTranscription {
		field = "session.model"
		var asr struct {
			Audio struct {
				Input struct {
					Transcription *struct {
						Model *string `json:"model"`
					} `json:"transcription"`
				} `json:"input"`
			} `json:"audio"`
		}
		if err := json.Unmarshal(raw, &asr); err != nil {
			return "", "", "", nil, paramError("session.audio.input.transcription.model", "session.audio.input.transcription.model must be a string")
		}
		if tr := asr.Audio.Input.Transcription; tr != nil && tr.Model != nil {
			model, field = *tr.Model, "session.audio.input.transcription.model"
			if strings.TrimSpace(model) == "" {
				return "", "", "", nil, paramError(field, "%s must name the transcription model (gpt-4o-transcribe, whisper-1, …)", field)
			}
		}
		if model == "" {
			model = completions.DefaultRealtimeTranscriptionModel
		}
		session, err = json.Marshal(fields)
		return typ, model, field, session, err
	}
	if !named {
		return "", "", "", nil, paramError("session.model", "session.model must name the realtime model (gpt-realtime, openai/gpt-realtime, a model group of realtime models)")
	}
	if len(fields) == 1 {
		return "", model, "session.model", nil, nil
	}
	session, err = json.Marshal(fields)
	return "", model, "session.model", session, err
}

// answeredSession is the session of a client secret's answer: its configuration with its
// type, model and an id, as OpenAI answers it (a transcription session's model in
// audio.input.transcription.model, its object realtime.transcription_session).
func answeredSession(rec realtimeSecretRecord, secret string) json.RawMessage {
	fields := map[string]any{}
	if rec.Session != nil {
		json.Unmarshal(rec.Session, &fields)
	}
	sum := sha256.Sum256([]byte(secret))
	fields["id"] = "sess_" + hex.EncodeToString(sum[:12])
	if rec.transcribes() {
		fields["type"], fields["object"] = sessionTypeTranscription, "realtime.transcription_session"
		setPath(fields, []string{"audio", "input", "transcription", "model"}, rec.Model)
	} else {
		fields["type"], fields["object"], fields["model"] = "realtime", "realtime.session", rec.Model
	}
	out, _ := json.Marshal(fields)
	return out
}

// setPath sets the value at path in m, making the objects on the way (replacing any
// value there that is not one).
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// getPath is the value at path in m; nil when there is none.
func getPath(m map[string]any, path []string) any {
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// secretID is the store key of a client secret: its hex SHA-256.
func secretID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// realtimeSecretSweepPage is how many records the scan of an earlier build's client
// secrets reads (and indexes or deletes in one transaction) at a time, and the most
// expiry index keys a sweep reads at a time; a sweep's first page is
// realtimeSecretSweepFirst keys, doubled while every key of a page is expired, so a sweep
// that finds few expired reads few keys past them.
const (
	realtimeSecretSweepPage  = 64
	realtimeSecretSweepFirst = 8
)

// realtimeSecretIndexMigration names, in store.Migrations, the scan that indexed the
// client secrets kept before store.RealtimeSecretExpiry existed.
const realtimeSecretIndexMigration = "realtime_secret_expiry_index"

// realtimeSecretExpiryKey is the store.RealtimeSecretExpiry key of the secret id expiring
// at: the time first (Unix nanoseconds, 19 digits), so the index lists oldest first.
func realtimeSecretExpiryKey(at time.Time, id string) string {
	return fmt.Sprintf("%019d/%s", max(at.UnixNano(), 0), id)
}

// parseRealtimeSecretExpiryKey is realtimeSecretExpiryKey's time and id.
func parseRealtimeSecretExpiryKey(key string) (time.Time, string, bool) {
	nanos, id, ok := strings.Cut(key, "/")
	n, err := strconv.ParseInt(nanos, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", false
	}
	return time.Unix(0, n), id, true
}

// putRealtimeSecret stores the client secret id's record with its expiry index key, in
// one transaction: a sweep finds it by the index.
func (s *Server) putRealtimeSecret(ctx context.Context, id string, rec realtimeSecretRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.RealtimeSecrets, id, b); err != nil {
			return err
		}
		return tx.Put(ctx, store.RealtimeSecretExpiry, realtimeSecretExpiryKey(rec.ExpiresAt, id), nil)
	})
}

// sweepRealtimeSecrets deletes the records of the secrets expired at now: best effort (a
// failure is logged; the next sweep tries again). It reads the expiry index
// (store.RealtimeSecretExpiry) oldest first up to now, a page at a time, and deletes each
// secret it names with its index key, reading no record: the secrets still valid cost the
// rest of the page where it stops (realtimeSecretSweepFirst keys at most when few
// expired), however many there are. The first sweep on a store written by
// a build without the index indexes the secrets it kept (indexEarlierRealtimeSecrets).
func (s *Server) sweepRealtimeSecrets(ctx context.Context, now time.Time) {
	if err := s.indexEarlierRealtimeSecrets(ctx, now); err != nil {
		s.log.WarnContext(ctx, "indexing the realtime client secrets of an earlier build by expiry", "err", err)
	}
	for after, limit := "", realtimeSecretSweepFirst; ; limit = min(2*limit, realtimeSecretSweepPage) {
		page, err := s.cfg.Store.List(ctx, store.RealtimeSecretExpiry, store.ListOptions{After: after, Limit: limit})
		if err != nil {
			s.log.WarnContext(ctx, "listing realtime client secrets by expiry to delete the expired", "err", err)
			return
		}
		due := 0
		for _, e := range page {
			if at, _, ok := parseRealtimeSecretExpiryKey(e.Key); ok && !now.After(at) {
				break
			}
			due++
		}
		if due > 0 {
			err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
				for _, e := range page[:due] {
					if err := tx.Delete(ctx, store.RealtimeSecretExpiry, e.Key); err != nil {
						return err
					}
					// A secret is never rewritten: its record expires at its index key's time.
					if _, id, ok := parseRealtimeSecretExpiryKey(e.Key); ok {
						if err := tx.Delete(ctx, store.RealtimeSecrets, id); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				s.log.WarnContext(ctx, "deleting expired realtime client secrets", "err", err)
				return
			}
		}
		if due < len(page) || len(page) < limit || ctx.Err() != nil {
			return
		}
		after = page[len(page)-1].Key
	}
}

// indexEarlierRealtimeSecrets makes sure every client secret has its
// store.RealtimeSecretExpiry key: those a build before the index wrote have none, and no
// indexed sweep would find them. When store.MigrationDue says so (never ran, or ran once a
// day ago: replicas of the earlier build may have minted more meanwhile) it reads every
// secret, a page a transaction, deletes those expired at now and indexes the others, then
// records that it ran (at now). Stopped half way, the next sweep does it again.
func (s *Server) indexEarlierRealtimeSecrets(ctx context.Context, now time.Time) error {
	st := s.cfg.Store
	if due, err := store.MigrationDue(ctx, st, realtimeSecretIndexMigration, now); err != nil || !due {
		return err
	}
	for after := ""; ; {
		page, err := st.List(ctx, store.RealtimeSecrets, store.ListOptions{After: after, Limit: realtimeSecretSweepPage})
		if err != nil {
			return err
		}
		err = st.Update(ctx, func(tx store.Tx) error {
			for _, e := range page {
				var rec realtimeSecretRecord
				if json.Unmarshal(e.Value, &rec) != nil || now.After(rec.ExpiresAt) {
					if err := tx.Delete(ctx, store.RealtimeSecrets, e.Key); err != nil {
						return err
					}
					if !rec.ExpiresAt.IsZero() {
						if err := tx.Delete(ctx, store.RealtimeSecretExpiry, realtimeSecretExpiryKey(rec.ExpiresAt, e.Key)); err != nil {
							return err
						}
					}
					continue
				}
				if err := tx.Put(ctx, store.RealtimeSecretExpiry, realtimeSecretExpiryKey(rec.ExpiresAt, e.Key), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(page) < realtimeSecretSweepPage {
			break
		}
		after = page[len(page)-1].Key
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return store.MigrationRan(ctx, st, realtimeSecretIndexMigration, now)
}

// sweepExpired deletes the records of collection (what names them in a warning) that
// expired says are past their expiry: best effort, as the next sweep tries again. It reads
// every record: for a collection that holds only the records in use (realtime calls,
// deleted as they end) and the few a gone replica left.
func (s *Server) sweepExpired(ctx context.Context, collection store.Collection, what string, expired func(value []byte) bool) {
	entries, err := s.cfg.Store.List(ctx, collection, store.ListOptions{})
	if err != nil {
		s.log.WarnContext(ctx, "listing "+what+" to delete the expired", "err", err)
		return
	}
	for _, e := range entries {
		if expired(e.Value) {
			_ = s.cfg.Store.Delete(ctx, collection, e.Key)
		}
	}
}

// realtimeSecretPrincipal authenticates r, which presents secret: the minting key's
// principal, with the secret's record kept in r's request information for the realtime
// handlers (realtimeSecretOf). errNotARealtimeSecret when no secret is secret; a
// *realtimeSecretError (ErrNoKey) when it expired, is presented anywhere but /v1/realtime
// and POST /v1/realtime/calls, or its key is no longer valid.
func (s *Server) realtimeSecretPrincipal(r *http.Request, secret string) (Principal, error) {
	ctx := r.Context()
	rec, err := store.GetJSON[realtimeSecretRecord](ctx, s.cfg.Store, store.RealtimeSecrets, secretID(secret))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Principal{}, errNotARealtimeSecret
	case err != nil:
		return Principal{}, fmt.Errorf("auth: reading client secrets: %w: %w", ErrKeyStoreUnavailable, err)
	case time.Now().After(rec.ExpiresAt):
		return Principal{}, &realtimeSecretError{fmt.Sprintf("the client secret expired at %s: mint another with POST /v1/realtime/client_secrets", rec.ExpiresAt.Format(time.RFC3339))}
	case !isRealtimePath(r.URL.Path) && !(r.Method == http.MethodPost && (r.URL.Path == realtimePath+"/calls" || isHangUpPath(r.URL.Path))):
		return Principal{}, &realtimeSecretError{"a client secret (ek_…) opens realtime sessions (GET /v1/realtime, POST /v1/realtime/calls) only"}
	}
	info, ok := ctx.Value(requestInfoKey{}).(*requestInfo)
	if !ok {
		return Principal{}, &realtimeSecretError{"a client secret (ek_…) opens realtime sessions only"}
	}
	p, err := s.auth.PrincipalOf(ctx, rec.Credential)
	if errors.Is(err, ErrNoKey) {
		return Principal{}, &realtimeSecretError{"the key that minted this client secret is no longer valid"}
	}
	if err != nil {
		return Principal{}, err
	}
	info.realtimeSecret = &rec
	return p, nil
}

// isHangUpPath reports whether path is a realtime call's hang-up (/v1/realtime/calls/{id}/hangup).
func isHangUpPath(path string) bool {
	id, ok := strings.CutPrefix(path, realtimePath+"/calls/")
	id, ok2 := strings.CutSuffix(id, "/hangup")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// realtimeSecretOf is the client secret r was authenticated with, or nil.
func realtimeSecretOf(r *http.Request) *realtimeSecretRecord {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return info.realtimeSecret
	}
	return nil
}

// sessionUpdate is the update applied to a session just opened, before the client's
// first event: event, the update event; kind, the events' prefix ("session", or the beta
// protocol's "transcription_session" for a transcription session); param, the field a
// refusal names.
type sessionUpdate struct {
	event       []byte
	kind, param string
}

// realtimeSessionUpdate is the update applying session, a client secret's configuration,
// to a realtime session.
func realtimeSessionUpdate(session json.RawMessage) sessionUpdate {
	update, _ := json.Marshal(map[string]any{"type": "session.update", "event_id": "event_client_secret_session", "session": session})
	return sessionUpdate{event: update, kind: "session", param: "session"}
}

// transcriptionSessionUpdate is the update binding a transcription session to model, the
// provider's name of its transcription model, over configured (a client secret's
// configuration; nil: none): the GA protocol's session.update of a session of type
// transcription with audio.input.transcription.model, or with beta the beta protocol's
// transcription_session.update with input_audio_transcription.model.
func transcriptionSessionUpdate(configured json.RawMessage, model string, beta bool) sessionUpdate {
	fields := map[string]any{}
	if configured != nil {
		json.Unmarshal(configured, &fields)
	}
	typ, kind := "session.update", "session"
	if beta {
		typ, kind = "transcription_session.update", "transcription_session"
		setPath(fields, []string{"input_audio_transcription", "model"}, model)
	} else {
		fields["type"] = sessionTypeTranscription
		setPath(fields, []string{"audio", "input", "transcription", "model"}, model)
	}
	update, _ := json.Marshal(map[string]any{"type": typ, "event_id": "event_gateway_transcription_session", "session": fields})
	return sessionUpdate{event: update, kind: kind, param: "model"}
}

// applyRealtimeSession applies u to up, a session just opened: it sends u's update event
// and waits for its {kind}.updated, and returns the event to give the client first — the
// upstream's {kind}.created carrying the updated session, as a session opened with
// OpenAI's own client secret begins. An upstream error event refuses the configuration (a
// 400 naming u's param, with its message).
func applyRealtimeSession(ctx context.Context, up *websocket.Conn, u sessionUpdate) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, realtimeSessionApplyTimeout)
	defer cancel()
	if err := up.Write(ctx, websocket.MessageText, u.event); err != nil {
		return nil, Errorf(http.StatusBadGateway, KindBadGateway, "sending the session's configuration upstream: %v", err)
	}
	created, updated := u.kind+".created", u.kind+".updated"
	var first map[string]json.RawMessage
	for {
		_, msg, err := up.Read(ctx)
		if err != nil {
			return nil, Errorf(http.StatusBadGateway, KindBadGateway, "the provider did not apply the session's configuration: %v", err)
		}
		var ev map[string]json.RawMessage
		if json.Unmarshal(msg, &ev) != nil {
			continue
		}
		var typ string
		json.Unmarshal(ev["type"], &typ)
		switch typ {
		case created:
			first = ev
		case updated:
			if first == nil {
				first = ev
			}
			first["type"], first["session"] = json.RawMessage(`"`+created+`"`), ev["session"]
			return json.Marshal(first)
		case "error":
			var e struct {
				Message string `json:"message"`
			}
			json.Unmarshal(ev["error"], &e)
			return nil, paramError(u.param, "the provider refused the session's configuration: %s", e.Message)
		}
	}
}

// transcriptionGate holds a transcription session's client to transcription models its
// key may call, at the provider the session is open at: a session update naming another
// model (GA: session.audio.input.transcription.model; beta:
// session.input_audio_transcription.model) is handed on with the provider's name of it, or
// refused with an error event (the refusal a session of that model would get before its
// upgrade: LiteLLM's key_model_access_denied for a model outside the key's) and not handed
// on.
type transcriptionGate struct {
	sess *completions.RealtimeSession
}

// transcriptionModelPaths are where a session update names its transcription model.
var transcriptionModelPaths = [][]string{{"audio", "input", "transcription", "model"}, {"input_audio_transcription", "model"}}

// check is the gate of pump: msg as it is handed on (fwd), or the refusal to send back.
func (tg *transcriptionGate) check(msg []byte) (fwd, reply []byte) {
	if !bytes.Contains(msg, []byte(`session.update"`)) {
		return msg, nil
	}
	var ev map[string]any
	if json.Unmarshal(msg, &ev) != nil || (ev["type"] != "session.update" && ev["type"] != "transcription_session.update") {
		return msg, nil
	}
	session, _ := ev["session"].(map[string]any)
	changed := false
	for _, path := range transcriptionModelPaths {
		name, ok := getPath(session, path).(string)
		if !ok {
			continue
		}
		model, err := tg.sess.TranscriptionModel(name)
		if err != nil {
			return nil, realtimeRefusalEvent(ev["event_id"], "session."+strings.Join(path, "."), err)
		}
		if model != name {
			setPath(session, path, model)
			changed = true
		}
	}
	if !changed {
		return msg, nil
	}
	out, err := json.Marshal(ev)
	if err != nil {
		return msg, nil
	}
	return out, nil
}

// realtimeRefusalEvent is the error event refusing a client event (eventID, its event_id)
// for err, naming param: a model outside the key's models LiteLLM's key_model_access_denied
// (code "401", as its HTTP refusal), anything else an invalid_request_error.
func realtimeRefusalEvent(eventID any, param string, err error) []byte {
	e := map[string]any{"type": "invalid_request_error", "code": "invalid_value", "message": err.Error(), "param": param}
	if errors.Is(err, completions.ErrModelNotAllowed) {
		e["type"], e["code"] = "key_model_access_denied", "401"
	}
	if eventID != nil {
		e["event_id"] = eventID
	}
	out, _ := json.Marshal(map[string]any{"type": "error", "event_id": "event_gateway_refusal", "error": e})
	return out
}
