package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// A realtime call is a realtime session over WebRTC (OpenAI's POST /v1/realtime/calls): the
// browser's SDP offer goes to the provider through the gateway, which answers with the
// provider's SDP answer, and the audio then flows between the browser and the provider —
// not through the gateway. The gateway watches the call over the provider's sideband
// WebSocket (wss://…/v1/realtime?call_id=…), billing each response.done's usage as it comes
// and recording the call once when it ends. A call it cannot watch is hung up: the sideband
// not opening refuses the call (502), the sideband breaking or the server shutting down ends
// it — nothing runs at the provider unbilled.

// maxSDPOffer bounds an SDP offer (a browser's is a few KiB).
const maxSDPOffer = 256 << 10

// realtimeCallHangUpTimeout bounds the hang-up of a call the gateway can no longer watch.
const realtimeCallHangUpTimeout = 10 * time.Second

// realtimeCallRoutes registers POST /v1/realtime/calls over g.
func (s *Server) realtimeCallRoutes(g *completions.Gateway) {
	s.handleGatewayAsking(Route{Method: "POST", Path: "/v1/realtime/calls",
		Summary: "OpenAI-compatible realtime call over WebRTC: the SDP offer (application/sdp with a client secret or ?model=; or multipart/form-data with sdp and session) goes to the provider and its SDP answer comes back (201, Location /v1/realtime/calls/{call_id}); the audio flows between caller and provider while the gateway watches the call's sideband, billing each response.done to the key and recording the call when it ends",
		Tags:    []string{"Completions"}, ScopedKeys: true, VirtualKeys: true, Status: http.StatusCreated,
		Request: realtimeCallForm{}, RequestContentType: "multipart/form-data", ResponseContentTypes: []string{"application/sdp"}, MaxBodyBytes: maxSDPOffer + 64<<10,
		Query: []QueryParam{{Name: "model", Description: "the realtime model when neither a client secret nor session.model names it"}},
		Errors: map[int]string{400: "no SDP offer or no model (named); the provider refused the offer or the model", 401: "key_model_access_denied (LiteLLM's): the key may not call the model",
			429: "the key's budget is spent", 502: "the provider could not be reached, or its call could not be watched (it is hung up)"}},
		g, completions.OperationRealtime, realtimeCallAskedModel, func(w http.ResponseWriter, r *http.Request) error {
			return s.handleRealtimeCall(g, w, r)
		})
	s.Handle(Route{Method: "POST", Path: realtimeHangUpPattern[len("POST "):],
		Summary: "OpenAI-compatible hang-up of a realtime call being watched by this server or another replica on its store (placed through POST /v1/realtime/calls with the same key or a client secret of it): the call is ended at the provider and recorded",
		Tags:    []string{"Completions"}, ScopedKeys: true, VirtualKeys: true,
		Errors: map[int]string{404: "no call of that id placed by this key is being watched", 502: "the provider did not hang up a call another replica watches"}},
		func(w http.ResponseWriter, r *http.Request) error { return s.handleRealtimeHangUp(g, w, r) })
}

// realtimeCallForm documents the multipart form of POST /v1/realtime/calls.
type realtimeCallForm struct {
	SDP     string          `json:"sdp" jsonschema:"description=The WebRTC SDP offer (or the whole body with Content-Type application/sdp)"`
	Session json.RawMessage `json:"session,omitempty" jsonschema:"type=object,description=The session configuration (OpenAI's GA session object) with its model unless a client secret or ?model= names it; over a client secret's own"`
}

// realtimeCallOffer reads r's offer: its SDP and session configuration (nil: none), from
// an application/sdp body or a multipart/form-data one (fields sdp and session).
func realtimeCallOffer(r *http.Request) (string, json.RawMessage, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/sdp":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return "", nil, paramError("sdp", "reading the SDP offer: %v", err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return "", nil, paramError("sdp", "the body must be the SDP offer")
		}
		return string(b), nil, nil
	case "multipart/form-data":
		if err := r.ParseMultipartForm(maxSDPOffer); err != nil {
			if ae := (*APIError)(nil); errors.As(err, &ae) {
				return "", nil, ae // the server's own refusal of the form (aliasedForm's)
			}
			return "", nil, paramError("sdp", "reading the multipart form: %v", err)
		}
		sdp := r.FormValue("sdp")
		if strings.TrimSpace(sdp) == "" {
			return "", nil, paramError("sdp", "the form's sdp field must be the SDP offer")
		}
		var session json.RawMessage
		if v := r.FormValue("session"); strings.TrimSpace(v) != "" {
			if !json.Valid([]byte(v)) || !strings.HasPrefix(strings.TrimSpace(v), "{") {
				return "", nil, paramError("session", "session must be a JSON object")
			}
			session = json.RawMessage(v)
		}
		return sdp, session, nil
	}
	return "", nil, paramError("sdp", "send the SDP offer as application/sdp, or multipart/form-data with sdp and session (Content-Type %q)", mt)
}

// callSession is the session configuration of a call: the client secret's (if any) with the
// request's fields over it, and its model (the secret's, else the request session's model,
// else ?model=), checked.
func callSession(g *completions.Gateway, r *http.Request, secret *realtimeSecretRecord, given json.RawMessage) (string, json.RawMessage, error) {
	if secret.transcribes() {
		return "", nil, paramError("session.type", "this client secret opens transcription sessions, which open over a WebSocket only here (GET /v1/realtime?intent=transcription): WebRTC transcription calls are not supported")
	}
	fields := map[string]json.RawMessage{}
	if secret != nil && secret.Session != nil {
		json.Unmarshal(secret.Session, &fields)
	}
	var own map[string]json.RawMessage
	if given != nil {
		if err := json.Unmarshal(given, &own); err != nil {
			return "", nil, paramError("session", "session must be a JSON object")
		}
	}
	model := r.URL.Query().Get("model")
	if m, ok := own["model"]; ok {
		if json.Unmarshal(m, &model) != nil {
			return "", nil, paramError("session.model", "session.model must be a string")
		}
		delete(own, "model")
	}
	if t, ok := own["type"]; ok {
		var typ string
		if json.Unmarshal(t, &typ) != nil || typ != "realtime" {
			return "", nil, paramError("session.type", "session.type must be realtime (transcription calls are not supported here)")
		}
	}
	for k, v := range own {
		fields[k] = v
	}
	if secret != nil {
		if model != "" && !sameRealtimeModel(g, model, secret.Model) {
			return "", nil, paramError("model", "this client secret opens sessions of %s, not %s", secret.Model, model)
		}
		model = secret.Model
	}
	if model == "" {
		return "", nil, paramError("session.model", "name the realtime model: session.model (multipart) or ?model=gpt-realtime")
	}
	if len(fields) == 0 {
		return model, nil, nil
	}
	session, err := json.Marshal(fields)
	return model, session, err
}

// handleRealtimeCall admits a realtime call (the key's models and budget, as a WebSocket
// session's), sends the offer to the provider, opens the call's sideband and answers the
// provider's SDP answer; the call is then watched until it ends (watchRealtimeCall).
func (s *Server) handleRealtimeCall(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	sdp, given, err := realtimeCallOffer(r)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	model, session, err := callSession(g, r, realtimeSecretOf(r), given)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	noteAskedModel(r, model) // a refusal of the call is recorded with it
	ctx := r.Context()
	endCtx := context.WithoutCancel(ctx)
	sess, rel, err := s.admitRealtime(w, r, g, received, model, false)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	answer, callID, err := sess.Call(ctx, sdp, session)
	if err != nil {
		s.realtime.remove(rel)
		if shutdownCut(ctx) { // the shutdown timeout cut the request mid-call
			endRealtime(endCtx, sess, errRealtimeShutdown)
			return s.openAIError(w, r, realtimeShutdownRefusal(w))
		}
		sess.End(endCtx, err)
		return s.openAIError(w, r, realtimeCallRefusal(err))
	}
	side, err := sess.Sideband(ctx, callID)
	if err != nil {
		// A call the gateway cannot watch would run unbilled: it is hung up.
		s.hangUp(endCtx, sess, callID)
		s.realtime.remove(rel)
		if shutdownCut(ctx) {
			endRealtime(endCtx, sess, errRealtimeShutdown)
			return s.openAIError(w, r, realtimeShutdownRefusal(w))
		}
		sess.End(endCtx, fmt.Errorf("opening the call's sideband: %w", err))
		return s.openAIError(w, r, Errorf(http.StatusBadGateway, KindBadGateway, "the provider's call %s could not be watched (it was hung up): %v", callID, err))
	}
	side.SetReadLimit(maxRealtimeMessage)
	release := keepParallelSlot(r)
	caller := callerOf(r)
	s.realtimeCalls.add(callID, watchedCall{caller: caller, rel: rel})
	s.shareCall(endCtx, callID, caller, sess.Model())
	go func() {
		defer release()
		defer s.realtime.remove(rel)
		defer s.realtimeCalls.remove(callID)
		defer s.unshareCall(endCtx, callID)
		err := s.watchRealtimeCall(endCtx, sess, side, callID, rel)
		endRealtime(endCtx, sess, err)
		if err != nil && !errors.Is(err, context.Canceled) {
			s.log.WarnContext(endCtx, "realtime call ended abnormally", "model", sess.Model(), "call_id", callID, "err", err)
		}
	}()
	w.Header().Set("Location", realtimePath+"/calls/"+callID)
	w.Header().Set("Content-Type", "application/sdp")
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, answer)
	return nil
}

// realtimeCallRefusal is the answer to err, a provider's refusal of a call: its refusal of
// the offer or session itself (providers.IsOfferRefusal; a model group's next member is not
// tried) a 400 naming the field it named (sdp unless it named a session field), the rest as
// a session's dial refusal (realtimeDialRefusal).
func realtimeCallRefusal(err error) error {
	var pe *providers.Error
	if !providers.IsOfferRefusal(err) || !errors.As(err, &pe) {
		return realtimeDialRefusal(err)
	}
	param := "sdp"
	if strings.HasPrefix(pe.Param, "session") {
		param = pe.Param
	}
	return paramError(param, "provider %q refused the call's offer: %s", pe.Provider, pe.Message)
}

// watchRealtimeCall reads the call's sideband until the call ends, billing each
// response.done's usage, and each input audio transcription's, as it comes. The provider closing the sideband normally (1000) is
// the call's end (nil); closing it going away (1001) or without a code hangs the call up
// first, as it may go on; a sideband that breaks, or the server shutting down (rel
// stopped), hangs the call up and returns why. So does a sideband silent for
// Config.RealtimeCallIdleTimeout, or a call lasting Config.RealtimeCallMaxDuration: the
// error then matches context.Canceled (the gateway ended it) and says which limit.
func (s *Server) watchRealtimeCall(ctx context.Context, sess *completions.RealtimeSession, side *websocket.Conn, callID string, rel *realtimeRelay) error {
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	meter := newRealtimeMeter(sess, ctx)
	heard := make(chan struct{}, 1) // an event came: the idle limit starts again
	go func() {
		for {
			typ, msg, err := side.Read(readCtx)
			if err != nil {
				ended <- err
				return
			}
			select {
			case heard <- struct{}{}:
			default:
			}
			if typ == websocket.MessageText {
				meter.observe(msg)
			}
		}
	}()
	idleFor, maxFor := s.cfg.RealtimeCallIdleTimeout, s.cfg.RealtimeCallMaxDuration
	var idleC, maxC <-chan time.Time
	var idle *time.Timer
	if idleFor > 0 {
		idle = time.NewTimer(idleFor)
		defer idle.Stop()
		idleC = idle.C
	}
	if maxFor > 0 {
		limit := time.NewTimer(maxFor)
		defer limit.Stop()
		maxC = limit.C
	}
	var why error
wait:
	for {
		select {
		case <-heard:
			if idle != nil {
				idle.Reset(idleFor) // no stale tick after Reset (Go 1.23 timers)
			}
		case err := <-ended:
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Code == websocket.StatusNormalClosure {
				side.CloseNow()
				return nil
			}
			if errors.As(err, &ce) && (ce.Code == websocket.StatusGoingAway || ce.Code == websocket.StatusNoStatusRcvd) {
				// A server going away (a restart) or closing without a code has not said the
				// call is over: it may go on unwatched, so it is hung up (a call already over
				// answers 404, which hangUp takes quietly); the call itself ended cleanly.
				side.CloseNow()
				s.hangUp(ctx, sess, callID)
				return nil
			}
			why = fmt.Errorf("the call's sideband broke: %w", err)
			break wait
		case <-rel.done:
			why = rel.cause
			break wait
		case <-idleC:
			why = fmt.Errorf("%w: %w (%s)", context.Canceled, errRealtimeCallIdle, idleFor)
			break wait
		case <-maxC:
			why = fmt.Errorf("%w: %w (%s)", context.Canceled, errRealtimeCallTooLong, maxFor)
			break wait
		}
	}
	if errors.Is(why, errRealtimeCallIdle) || errors.Is(why, errRealtimeCallTooLong) {
		s.log.InfoContext(ctx, "hanging up a realtime call at the gateway's limit", "model", sess.Model(), "call_id", callID, "why", why)
	}
	s.hangUp(ctx, sess, callID)
	side.Close(websocket.StatusGoingAway, "the gateway stopped watching the call")
	cancel()
	<-ended
	if errors.Is(why, errCallerHungUp) {
		return nil // the caller ended it: a clean end
	}
	return why
}

// Why the gateway hangs up a call of its own accord (Config.RealtimeCallIdleTimeout,
// Config.RealtimeCallMaxDuration).
var (
	errRealtimeCallIdle    = errors.New("the call's sideband was silent past the idle limit")
	errRealtimeCallTooLong = errors.New("the call lasted the longest a call may")
)

// Defaults of Config.RealtimeCallIdleTimeout and Config.RealtimeCallMaxDuration: OpenAI ends
// a realtime session after 60 minutes itself.
const (
	DefaultRealtimeCallIdleTimeout = 30 * time.Minute
	DefaultRealtimeCallMaxDuration = 60 * time.Minute
)

// realtimeHangUpPattern is the hang-up route's pattern: it takes no max_parallel_requests
// slot (the call it ends holds one).
const realtimeHangUpPattern = "POST " + realtimePath + "/calls/{call_id}/hangup"

// errCallerHungUp is why a call ends when its caller hangs it up through the gateway.
var errCallerHungUp = errors.New("the caller hung up the call")

// watchedCall is a realtime call this server watches: who placed it and its relay.
type watchedCall struct {
	caller string // the Credential of the key that placed it (a client secret's minting key's)
	rel    *realtimeRelay
}

// watchedCalls are the calls a server watches, by call id.
type watchedCalls struct {
	mu    sync.Mutex
	calls map[string]watchedCall
}

func (wc *watchedCalls) add(id string, c watchedCall) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.calls == nil {
		wc.calls = map[string]watchedCall{}
	}
	wc.calls[id] = c
}

func (wc *watchedCalls) remove(id string) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	delete(wc.calls, id)
}

func (wc *watchedCalls) get(id string) (watchedCall, bool) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	c, ok := wc.calls[id]
	return c, ok
}

// callerOf is who placed a call with r: the key's Credential, or a client secret's minting
// key's.
func callerOf(r *http.Request) string {
	if sec := realtimeSecretOf(r); sec != nil {
		return sec.Credential
	}
	return Credential(r)
}

// handleRealtimeHangUp ends a call at its caller's request (OpenAI's POST
// /v1/realtime/calls/{call_id}/hangup): only the key that placed it (or a client secret of
// that key) may; any other call id is a 404, revealing nothing. A call this server watches
// is stopped here; another replica's (its store.RealtimeCalls record) is hung up at its
// provider with the gateway's credential, and the replica watching it sees its sideband
// close and records it.
func (s *Server) handleRealtimeHangUp(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("call_id")
	caller := callerOf(r)
	notFound := Errorf(http.StatusNotFound, KindNotFound, "no call %s of this key is being watched", id)
	if c, ok := s.realtimeCalls.get(id); ok {
		if subtle.ConstantTimeCompare([]byte(c.caller), []byte(caller)) != 1 {
			return s.openAIError(w, r, notFound)
		}
		c.rel.stop(errCallerHungUp)
		w.WriteHeader(http.StatusOK)
		return nil
	}
	ctx := r.Context()
	rec, err := store.GetJSON[realtimeCallRecord](ctx, s.cfg.Store, store.RealtimeCalls, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.openAIError(w, r, notFound)
	case err != nil:
		return s.openAIError(w, r, fmt.Errorf("reading the realtime calls: %w", err))
	case subtle.ConstantTimeCompare([]byte(rec.Credential), []byte(caller)) != 1:
		return s.openAIError(w, r, notFound)
	case !rec.ExpiresAt.IsZero() && time.Now().After(rec.ExpiresAt):
		return s.openAIError(w, r, notFound) // its replica is gone; the call is over by now
	}
	// Once authorized, the hang-up is seen through even if its caller goes away.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), realtimeCallHangUpTimeout)
	defer cancel()
	if err := g.HangUpRealtimeCall(hctx, rec.Model, id); err != nil {
		var pe *providers.Error
		if errors.As(err, &pe) && pe.StatusCode == http.StatusNotFound {
			// Over already, its watcher gone without deleting the record.
			_ = s.cfg.Store.Delete(context.WithoutCancel(ctx), store.RealtimeCalls, id)
			return s.openAIError(w, r, notFound)
		}
		if errors.As(err, &pe) {
			return s.openAIError(w, r, Errorf(http.StatusBadGateway, KindBadGateway, "provider %q did not hang up the call: %s", pe.Provider, pe.Message))
		}
		return s.openAIError(w, r, err)
	}
	s.log.InfoContext(ctx, "hung up a realtime call another replica watches", "call_id", id, "model", rec.Model)
	w.WriteHeader(http.StatusOK)
	return nil
}

// realtimeCallRecord is what the store keeps of a call being watched (store.RealtimeCalls,
// keyed by call id), so that any replica on the store can hang it up for its caller.
type realtimeCallRecord struct {
	// Credential is who placed the call (callerOf).
	Credential string `json:"credential"`
	// Model is the "provider/model" the call was placed with: its provider hangs it up.
	Model   string    `json:"model"`
	Started time.Time `json:"started"`
	// ExpiresAt is when the call is over whatever happens (Config.RealtimeCallMaxDuration
	// past Started, and a margin); zero without that bound. A record past it is a replica's
	// gone without deleting it: it is ignored, and deleted as calls are placed.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// realtimeCallSweepEvery is how often placing a call also deletes the expired call records.
const realtimeCallSweepEvery = 10 * time.Minute

// shareCall records the call callID, placed by caller with model, in the store for the
// other replicas' hang-ups (a failure is logged: this replica still watches the call and
// hangs it up).
func (s *Server) shareCall(ctx context.Context, callID, caller, model string) {
	now := time.Now().UTC()
	rec := realtimeCallRecord{Credential: caller, Model: model, Started: now}
	if d := s.cfg.RealtimeCallMaxDuration; d > 0 {
		rec.ExpiresAt = now.Add(d + 2*realtimeCallHangUpTimeout)
	}
	if err := store.PutJSON(ctx, s.cfg.Store, store.RealtimeCalls, callID, rec); err != nil {
		s.log.WarnContext(ctx, "recording a realtime call for the other replicas: only this one can hang it up", "call_id", callID, "err", err)
	}
	if s.realtimeCallSweep.dueEvery(now, realtimeCallSweepEvery) {
		go s.sweepRealtimeCalls(context.WithoutCancel(ctx), now)
	}
}

// unshareCall deletes the call callID's record: it is no longer watched.
func (s *Server) unshareCall(ctx context.Context, callID string) {
	if err := s.cfg.Store.Delete(ctx, store.RealtimeCalls, callID); err != nil {
		s.log.WarnContext(ctx, "deleting the record of a realtime call that ended", "call_id", callID, "err", err)
	}
}

// sweepRealtimeCalls deletes the records of calls expired at now (their replicas gone).
func (s *Server) sweepRealtimeCalls(ctx context.Context, now time.Time) {
	s.sweepExpired(ctx, store.RealtimeCalls, "realtime calls", func(value []byte) bool {
		var rec realtimeCallRecord
		return json.Unmarshal(value, &rec) == nil && !rec.ExpiresAt.IsZero() && now.After(rec.ExpiresAt)
	})
}

// hangUp ends the call callID at its provider, logging a failure.
func (s *Server) hangUp(ctx context.Context, sess *completions.RealtimeSession, callID string) {
	ctx, cancel := context.WithTimeout(ctx, realtimeCallHangUpTimeout)
	defer cancel()
	if err := sess.HangUp(ctx, callID); err != nil {
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.StatusCode != http.StatusNotFound { // already over
			s.log.ErrorContext(ctx, "hanging up a realtime call the gateway could not watch", "call_id", callID, "err", err)
		}
	}
}
