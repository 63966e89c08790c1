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
	s.handleGateway(Route{Method: "POST", Path: "/v1/realtime/calls",
		Summary: "OpenAI-compatible realtime call over WebRTC: the SDP offer (application/sdp with a client secret or ?model=; or multipart/form-data with sdp and session) goes to the provider and its SDP answer comes back (201, Location /v1/realtime/calls/{call_id}); the audio flows between caller and provider while the gateway watches the call's sideband, billing each response.done to the key and recording the call when it ends",
		Tags:    []string{"Completions"}, ScopedKeys: true, VirtualKeys: true, Status: http.StatusCreated,
		Request: realtimeCallForm{}, RequestContentType: "multipart/form-data", ResponseContentTypes: []string{"application/sdp"}, MaxBodyBytes: maxSDPOffer + 64<<10,
		Query: []QueryParam{{Name: "model", Description: "the realtime model when neither a client secret nor session.model names it"}},
		Errors: map[int]string{400: "no SDP offer or no model (named); the provider refused the offer or the model", 403: "the key may not call the model",
			429: "the key's budget is spent", 502: "the provider could not be reached, or its call could not be watched (it is hung up)"}},
		g, completions.OperationRealtime, func(w http.ResponseWriter, r *http.Request) error {
			return s.handleRealtimeCall(g, w, r)
		})
	s.Handle(Route{Method: "POST", Path: realtimeHangUpPattern[len("POST "):],
		Summary: "OpenAI-compatible hang-up of a realtime call this server watches (placed through POST /v1/realtime/calls with the same key or a client secret of it): the call is ended at the provider and recorded",
		Tags:    []string{"Completions"}, ScopedKeys: true, VirtualKeys: true,
		Errors: map[int]string{404: "no call of that id placed by this key is being watched by this server"}},
		s.handleRealtimeHangUp)
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
	ctx := r.Context()
	endCtx := context.WithoutCancel(ctx)
	sess, rel, err := s.admitRealtime(w, r, g, received, model)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	answer, callID, err := sess.Call(ctx, sdp, session)
	if err != nil {
		s.realtime.remove(rel)
		sess.End(endCtx, err)
		return s.openAIError(w, r, realtimeDialRefusal(err))
	}
	side, err := sess.Sideband(ctx, callID)
	if err != nil {
		// A call the gateway cannot watch would run unbilled: it is hung up.
		s.hangUp(endCtx, sess, callID)
		s.realtime.remove(rel)
		sess.End(endCtx, fmt.Errorf("opening the call's sideband: %w", err))
		return s.openAIError(w, r, Errorf(http.StatusBadGateway, KindBadGateway, "the provider's call %s could not be watched (it was hung up): %v", callID, err))
	}
	side.SetReadLimit(maxRealtimeMessage)
	release := keepParallelSlot(r)
	s.realtimeCalls.add(callID, watchedCall{caller: callerOf(r), rel: rel})
	go func() {
		defer release()
		defer s.realtime.remove(rel)
		defer s.realtimeCalls.remove(callID)
		err := s.watchRealtimeCall(endCtx, sess, side, callID, rel)
		sess.End(endCtx, err)
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

// watchRealtimeCall reads the call's sideband until the call ends, billing each
// response.done's usage, and each input audio transcription's, as it comes. The provider closing the sideband normally (1000) is
// the call's end (nil); closing it going away (1001) or without a code hangs the call up
// first, as it may go on; a sideband that breaks, or the server shutting down (rel
// stopped), hangs the call up and returns why.
func (s *Server) watchRealtimeCall(ctx context.Context, sess *completions.RealtimeSession, side *websocket.Conn, callID string, rel *realtimeRelay) error {
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	meter := newRealtimeMeter(sess, ctx)
	go func() {
		for {
			typ, msg, err := side.Read(readCtx)
			if err != nil {
				ended <- err
				return
			}
			if typ == websocket.MessageText {
				meter.observe(msg)
			}
		}
	}()
	var why error
	select {
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
	case <-rel.done:
		why = rel.cause
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

// handleRealtimeHangUp ends a call this server watches at its caller's request (OpenAI's
// POST /v1/realtime/calls/{call_id}/hangup): only the key that placed it (or a client secret
// of that key) may; any other call id is a 404, revealing nothing.
func (s *Server) handleRealtimeHangUp(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("call_id")
	c, ok := s.realtimeCalls.get(id)
	if !ok || subtle.ConstantTimeCompare([]byte(c.caller), []byte(callerOf(r))) != 1 {
		return s.openAIError(w, r, Errorf(http.StatusNotFound, KindNotFound, "no call %s of this key is being watched here", id))
	}
	c.rel.stop(errCallerHungUp)
	w.WriteHeader(http.StatusOK)
	return nil
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
