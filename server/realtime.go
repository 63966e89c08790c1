package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// realtimePath is OpenAI's Realtime API route (a WebSocket); /realtime, LiteLLM's alias, is
// served by the /v1 aliasing (v1Alias).
const realtimePath = "/v1/realtime"

// realtimeProtocol is the WebSocket subprotocol OpenAI's realtime clients offer and the
// server selects.
const realtimeProtocol = "realtime"

// realtimeKeyProtocol is the prefix of the subprotocol a browser, which cannot set headers
// on a WebSocket, offers its key in (openai-insecure-api-key.<key>).
const realtimeKeyProtocol = "openai-insecure-api-key."

// realtimeBetaProtocol is the subprotocol a browser offers to speak the beta protocol,
// as OpenAI-Beta: realtime=v1 says it in a header.
const realtimeBetaProtocol = "openai-beta.realtime-v1"

// maxRealtimeMessage bounds one WebSocket message either way: OpenAI's input audio
// appends take up to 15 MiB of base64 audio.
const maxRealtimeMessage = 16 << 20

// isRealtimePath reports whether path is the realtime route or its alias.
func isRealtimePath(path string) bool { return path == realtimePath || path == "/realtime" }

// offeredProtocols are the WebSocket subprotocols r offers, in order.
func offeredProtocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-Websocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// realtimeProtocolKey is the key a browser offers as the subprotocol
// openai-insecure-api-key.<key> on the realtime route; "" elsewhere or when none came.
func realtimeProtocolKey(r *http.Request) string {
	if !isRealtimePath(r.URL.Path) {
		return ""
	}
	for _, p := range offeredProtocols(r) {
		if k, ok := strings.CutPrefix(p, realtimeKeyProtocol); ok && k != "" {
			return k
		}
	}
	return ""
}

// realtimeBeta reports whether the client of r speaks the beta protocol: it sent
// OpenAI-Beta: realtime=v1, or offered the subprotocol openai-beta.realtime-v1.
func realtimeBeta(r *http.Request) bool {
	for _, v := range r.Header.Values("Openai-Beta") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(f) == "realtime=v1" {
				return true
			}
		}
	}
	for _, p := range offeredProtocols(r) {
		if p == realtimeBetaProtocol {
			return true
		}
	}
	return false
}

// realtimeSessions are the realtime sessions being relayed, for the shutdown to close.
type realtimeSessions struct {
	mu     sync.Mutex
	open   map[*realtimeRelay]struct{}
	closed bool
	wg     sync.WaitGroup
}

// add registers rel; false once the server is shutting down.
func (rs *realtimeSessions) add(rel *realtimeRelay) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		return false
	}
	if rs.open == nil {
		rs.open = map[*realtimeRelay]struct{}{}
	}
	rs.open[rel] = struct{}{}
	rs.wg.Add(1)
	return true
}

// remove unregisters rel, once its relay has ended.
func (rs *realtimeSessions) remove(rel *realtimeRelay) {
	rs.mu.Lock()
	delete(rs.open, rel)
	rs.mu.Unlock()
	rs.wg.Done()
}

// shutdown refuses new sessions and tells every open one to close (1001, going away).
func (rs *realtimeSessions) shutdown() {
	rs.mu.Lock()
	rs.closed = true
	open := make([]*realtimeRelay, 0, len(rs.open))
	for rel := range rs.open {
		open = append(open, rel)
	}
	rs.mu.Unlock()
	for _, rel := range open {
		rel.stop(errRealtimeShutdown)
	}
}

// wait waits until every session has ended, or ctx ends.
func (rs *realtimeSessions) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { rs.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: realtime sessions still closing: %w", ctx.Err())
	}
}

// errRealtimeShutdown is why the server closes a realtime session at shutdown.
var errRealtimeShutdown = fmt.Errorf("%w: %w", context.Canceled, ErrShuttingDown)

// errRealtimeCut is the cause a realtime session (or call) the server's shutdown ended is
// recorded with (completions.RequestRecord.CutBy): it says what its client saw and
// matches ErrShuttingDown.
var errRealtimeCut error = realtimeCutError{}

type realtimeCutError struct{}

func (realtimeCutError) Error() string {
	return "server: shutting down, it closed the realtime session (a WebSocket with 1001 going away, a call hung up) or refused it; open a new one"
}

func (realtimeCutError) Is(target error) bool { return target == ErrShuttingDown }

// endRealtime ends sess with err and records it. A session the server's shutdown ended (err
// matching ErrShuttingDown: closed as the shutdown began, refused while it ran, or its
// request cut at the shutdown timeout) is ended under ctx cancelled with errRealtimeCut, as
// a request the shutdown cut is, so that the gateway records it cut (RequestRecord.CutBy:
// usage history outcome cut, a failure in the metrics) rather than cancelled as a client
// that left.
func endRealtime(ctx context.Context, sess *completions.RealtimeSession, err error) {
	if errors.Is(err, ErrShuttingDown) {
		cut, cancel := context.WithCancelCause(ctx)
		cancel(errRealtimeCut)
		ctx = cut
	}
	sess.End(ctx, err)
}

// CloseRealtimeSessions closes every realtime session being relayed (/v1/realtime), each
// side told 1001 (going away) and each session recorded cut (RequestRecord.CutBy
// errRealtimeCut) with the usage billed so far, hangs up the realtime calls watched, and
// refuses new ones (503, recorded cut too) from now on. http.Server.Shutdown does not wait for WebSockets,
// whose connections are hijacked: serve calls it when its shutdown begins
// (http.Server.RegisterOnShutdown); Close calls it too.
func (s *Server) CloseRealtimeSessions() { s.realtime.shutdown() }

// realtimeErrors are the refusals of /v1/realtime, answered before the upgrade in OpenAI's
// envelope.
var realtimeErrors = map[int]string{
	400: "no model named (?model=), a model without a realtime API here (with intent=transcription: without realtime transcription), an intent other than transcription, or the upstream refused the model",
	401: "key_model_access_denied (LiteLLM's): the key may not call the model",
	426: "the request is not a WebSocket upgrade",
	429: "the key's (or its team's, or the proxy's) budget is spent",
	502: "the provider refused the gateway's credential or could not be reached",
	503: "the provider has no credential configured, or the server is shutting down",
}

// realtimeRoutes registers OpenAI's Realtime API over the gateway's providers: GET
// /v1/realtime?model=… (and LiteLLM's /realtime) upgraded to a WebSocket relayed to the
// provider's (see handleRealtime).
func (s *Server) realtimeRoutes(g *completions.Gateway) {
	s.OnClose(func(ctx context.Context) error {
		s.realtime.shutdown()
		return s.realtime.wait(ctx)
	})
	s.handleGatewayAsking(Route{Method: "GET", Path: realtimePath,
		Summary: "OpenAI-compatible Realtime API: a WebSocket relayed as it is to the provider's realtime session (wss://api.openai.com/v1/realtime?model=…, or an Azure OpenAI realtime deployment), with the gateway's key (Authorization: Bearer, or a browser's subprotocol openai-insecure-api-key.<key>; the subprotocol realtime is selected); held to the key's models and budget before the upgrade, each response.done's usage billed as it comes and the session recorded once at its end",
		Tags:    []string{"Completions"}, ScopedKeys: true, Errors: realtimeErrors,
		Query: []QueryParam{{Name: "model", Description: "the realtime model: gpt-realtime, openai/gpt-realtime, azure/{deployment}, or a model group of realtime models (required unless intent=transcription or a client secret names it)"},
			{Name: "deployment", Description: "Azure OpenAI's name for the model (taken when model is not given)"},
			{Name: "intent", Description: "transcription: a transcription-only session (no responses), whose model is the transcription model (gpt-4o-transcribe, gpt-4o-mini-transcribe, whisper-1, gpt-realtime-whisper when model is absent); the gateway dials the provider's ?intent=transcription session and binds it to that model"}}},
		g, completions.OperationRealtime, realtimeAskedModel, func(w http.ResponseWriter, r *http.Request) error {
			return s.handleRealtime(g, w, r)
		})
}

// handleRealtime admits a realtime session (the key's models, budget and block: refusals
// are answered before the upgrade, in OpenAI's envelope), dials the provider's realtime
// session with the provider's credential (OpenAI-Beta: realtime=v1 only when the client
// sent it), then upgrades the client's request and relays every message both ways
// unchanged until either side closes (its close code handed to the other), the server
// shuts down (1001 to both) or a session limit is reached (1008). Each server
// response.done event's usage is billed as it arrives; the session is recorded once at its
// end. With ?intent=transcription (or a transcription client secret) the session is a
// transcription-only one of a transcription model: admitted against it, dialled with the
// provider's intent=transcription, bound to it before the client's first event, and the
// client's session updates held to models the key may call (transcriptionGate).
func (s *Server) handleRealtime(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		w.Header().Set("Upgrade", "websocket")
		return s.openAIError(w, r, Errorf(http.StatusUpgradeRequired, KindBadRequest,
			"%s is OpenAI's Realtime API: connect with a WebSocket (ws://host%s?model=gpt-realtime)", realtimePath, realtimePath))
	}
	model := r.URL.Query().Get("model")
	if model == "" {
		model = r.URL.Query().Get("deployment")
	}
	noteAskedModel(r, realtimeAskedModel(r)) // a refusal before the upgrade is recorded with it
	var transcription bool
	switch intent := r.URL.Query().Get("intent"); intent {
	case "":
	case "transcription":
		transcription = true
	default:
		return s.openAIError(w, r, paramError("intent", "intent must be transcription (a transcription-only session) or absent, got %q", intent))
	}
	beta := realtimeBeta(r)
	secret := realtimeSecretOf(r)
	if secret != nil {
		switch {
		case secret.transcribes():
			transcription = true // the secret opens transcription sessions only
		case transcription:
			return s.openAIError(w, r, paramError("intent", "this client secret opens realtime sessions of %s, not transcription sessions", secret.Model))
		}
		if model != "" && !sameSessionModel(g, transcription, model, secret.Model) {
			return s.openAIError(w, r, paramError("model", "this client secret opens sessions of %s, not %s", secret.Model, model))
		}
		switch {
		case secret.Beta && !beta:
			return s.openAIError(w, r, Errorf(http.StatusBadRequest, KindBadRequest,
				"a client secret of POST /v1/realtime/transcription_sessions is of the beta protocol: connect with OpenAI-Beta: realtime=v1 (or the subprotocol %s)", realtimeBetaProtocol))
		case !secret.Beta && beta && secret.Session != nil:
			return s.openAIError(w, r, Errorf(http.StatusBadRequest, KindBadRequest,
				"a client secret's session configuration is of the GA protocol: connect without OpenAI-Beta: realtime=v1"))
		}
		model = secret.Model
	}
	ctx := r.Context()
	endCtx := context.WithoutCancel(ctx) // the accounting outlives a caller gone away
	sess, rel, err := s.admitRealtime(w, r, g, received, model, transcription)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	defer s.realtime.remove(rel)
	header := http.Header{}
	if beta {
		header.Set("OpenAI-Beta", "realtime=v1")
	}
	// Until the upgrade, the shutdown's beginning stops the dial and the session's
	// configuration too: it would close at once a session opened now.
	openCtx, opened := rel.openContext(ctx)
	defer opened()
	up, err := sess.Dial(openCtx, header)
	if err != nil {
		if shutdownCut(openCtx) {
			endRealtime(endCtx, sess, errRealtimeShutdown)
			return s.openAIError(w, r, realtimeShutdownRefusal(w))
		}
		sess.End(endCtx, err)
		return s.openAIError(w, r, realtimeDialRefusal(err))
	}
	defer up.CloseNow()
	var first []byte // the client's first event: the configured session's session.created
	var gate func(msg []byte) (fwd, reply []byte)
	var configured json.RawMessage
	if secret != nil {
		configured = secret.Session
	}
	var update sessionUpdate
	switch {
	case transcription:
		// The session is bound to the transcription model it was admitted with (and the
		// client's updates held to models the key may call), whatever the client sends.
		asr, _ := sess.Transcription()
		update = transcriptionSessionUpdate(configured, asr, beta)
		gate = (&transcriptionGate{sess: sess}).check
	case configured != nil:
		update = realtimeSessionUpdate(configured)
	}
	if update.event != nil {
		up.SetReadLimit(maxRealtimeMessage)
		if first, err = applyRealtimeSession(openCtx, up, update); err != nil {
			if shutdownCut(openCtx) {
				up.Close(websocket.StatusGoingAway, "the server is shutting down")
				endRealtime(endCtx, sess, errRealtimeShutdown)
				return s.openAIError(w, r, realtimeShutdownRefusal(w))
			}
			up.Close(websocket.StatusNormalClosure, "session configuration refused")
			sess.End(endCtx, err)
			return s.openAIError(w, r, err)
		}
	}
	opened()
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{realtimeProtocol},
		// The key authenticates the session, never a cookie: a page of another origin
		// gets nothing a key would not give it (browsers' realtime clients connect
		// cross-origin).
		InsecureSkipVerify: true,
	})
	if err != nil {
		// Accept answered the client itself (a malformed handshake).
		up.Close(websocket.StatusGoingAway, "the client's handshake failed")
		sess.End(endCtx, fmt.Errorf("accepting the client's WebSocket: %w", err))
		return nil
	}
	defer client.CloseNow()
	up.SetReadLimit(maxRealtimeMessage)
	client.SetReadLimit(maxRealtimeMessage)
	if first != nil {
		if err := client.Write(ctx, websocket.MessageText, first); err != nil {
			up.Close(websocket.StatusGoingAway, "the client went away")
			sess.End(endCtx, fmt.Errorf("%w: the client went away: %w", context.Canceled, err))
			return nil
		}
	}
	limits := realtimeLimits{idle: s.cfg.RealtimeSessionIdleTimeout, longest: s.cfg.RealtimeSessionMaxDuration}
	err = rel.run(ctx, client, up, newRealtimeMeter(sess, endCtx).observe, gate, limits)
	endRealtime(endCtx, sess, err)
	if errors.Is(err, errRealtimeSessionIdle) || errors.Is(err, errRealtimeSessionTooLong) {
		s.log.InfoContext(ctx, "closed a realtime session at the gateway's limit", "model", sess.Model(), "why", err)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.WarnContext(ctx, "realtime session ended abnormally", "model", sess.Model(), "err", err)
	}
	return nil
}

// sameRealtimeModel reports whether a and b name the same realtime model: equal, or
// resolving to the same "provider/model" (gpt-realtime and openai/gpt-realtime).
func sameRealtimeModel(g *completions.Gateway, a, b string) bool {
	return sameSessionModel(g, false, a, b)
}

// sameSessionModel reports whether a and b name the same model of a realtime session
// (transcription false) or of a transcription session (a transcription model).
func sameSessionModel(g *completions.Gateway, transcription bool, a, b string) bool {
	if a == b {
		return true
	}
	resolve := g.ResolveRealtimeModel
	if transcription {
		resolve = g.ResolveRealtimeTranscriptionModel
	}
	ra, okA := resolve(a)
	rb, okB := resolve(b)
	return okA && okB && ra == rb
}

// admitRealtime admits a realtime session (or call) of r with model, received at received:
// its header tags, its key's scope and the gateway's admission (BeginRealtime; with
// transcription, BeginRealtimeTranscription: model is the transcription model), registered
// for the shutdown to close. A server shutting down refuses it (503, Retry-After set on w).
// The caller removes the relay returned (s.realtime.remove) when the session ends.
func (s *Server) admitRealtime(w http.ResponseWriter, r *http.Request, g *completions.Gateway, received time.Time, model string, transcription bool) (*completions.RealtimeSession, *realtimeRelay, error) {
	tags, err := headerTags(r, nil)
	if err != nil {
		return nil, nil, err
	}
	scope, err := s.gatewayScope(r, received)
	if err != nil {
		return nil, nil, err
	}
	begin := g.BeginRealtime
	if transcription {
		begin = g.BeginRealtimeTranscription
	}
	sess, err := begin(r.Context(), scope, model, tags...)
	if err != nil {
		return nil, nil, err
	}
	rel := &realtimeRelay{done: make(chan struct{})}
	if !s.realtime.add(rel) {
		endRealtime(context.WithoutCancel(r.Context()), sess, errRealtimeShutdown)
		return nil, nil, realtimeShutdownRefusal(w)
	}
	return sess, rel, nil
}

// realtimeShutdownRefusal is the answer to a realtime session (or call) the server's
// shutdown refused before it opened: a 503 asking to open it again, Retry-After set on w.
func realtimeShutdownRefusal(w http.ResponseWriter) *APIError {
	w.Header().Set("Retry-After", shutdownRetryAfter)
	return Errorf(http.StatusServiceUnavailable, KindUnavailable, "the server is shutting down; open the session again")
}

// shutdownCut reports whether ctx was cancelled by the server's shutdown: its request cut
// at the shutdown timeout (ErrShuttingDown), or a realtime session's opening stopped as
// the shutdown began (realtimeRelay.openContext).
func shutdownCut(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrShuttingDown)
}

// realtimeDialRefusal is the answer to err, the refusal of a realtime session's dial before
// the upgrade: the provider without a credential 503, the provider refusing the model (a
// 400 or 404 of its handshake) 400, its refusal of the gateway's credential or a transport
// failure 502.
func realtimeDialRefusal(err error) error {
	var pe *providers.Error
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(err, providers.ErrNotConfigured):
		return Errorf(http.StatusServiceUnavailable, KindUnavailable, "provider %q is not available for realtime sessions: %s", pe.Provider, pe.Message)
	case pe.StatusCode == http.StatusBadRequest || pe.StatusCode == http.StatusNotFound:
		ae := Errorf(http.StatusBadRequest, KindBadRequest, "provider %q refused the realtime session with %s: %s", pe.Provider, pe.Model, pe.Message)
		ae.Param = "model"
		return ae
	case pe.StatusCode == http.StatusTooManyRequests:
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "provider %q is rate limiting realtime sessions: %s", pe.Provider, pe.Message)
	}
	return Errorf(http.StatusBadGateway, KindBadGateway, "provider %q did not open the realtime session: %s", pe.Provider, pe.Message)
}

// realtimeRelay relays one realtime session's messages between the client and the
// upstream.
type realtimeRelay struct {
	once  sync.Once
	cause error
	done  chan struct{} // closed by stop
}

// openContext is ctx, the context of the request opening rel's session, cancelled with
// errRealtimeShutdown as well once the relay is stopped (the server's shutdown began), for
// the work before the upgrade (the dial upstream, the session's configuration): the
// shutdown neither waits for a dial a provider is slow to answer nor opens a session it
// would close at once. opened releases it once that work is done (more than once is fine).
func (rel *realtimeRelay) openContext(ctx context.Context) (_ context.Context, opened func()) {
	octx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-rel.done:
			cancel(errRealtimeShutdown)
		case <-octx.Done():
		}
	}()
	return octx, func() { cancel(nil) }
}

// stop ends the relay with cause (the server's shutdown).
func (rel *realtimeRelay) stop(cause error) {
	rel.once.Do(func() {
		rel.cause = cause
		close(rel.done)
	})
}

// relayEnd is how one direction of a relay ended.
type relayEnd struct {
	fromClient bool
	err        error // the reading side's close (a websocket.CloseError) or failure; or the writing side's failure
}

// Defaults of Config.RealtimeSessionIdleTimeout and Config.RealtimeSessionMaxDuration, as
// a realtime call's (OpenAI ends a realtime session after 60 minutes itself).
const (
	DefaultRealtimeSessionIdleTimeout = DefaultRealtimeCallIdleTimeout
	DefaultRealtimeSessionMaxDuration = DefaultRealtimeCallMaxDuration
)

// realtimeLimits bound a WebSocket realtime session (Config.RealtimeSessionIdleTimeout,
// Config.RealtimeSessionMaxDuration); a bound of 0 or less is none.
type realtimeLimits struct {
	idle    time.Duration // no message either way for this long ends the session
	longest time.Duration // the session ends once it has lasted this long
}

// Why the gateway closes a WebSocket realtime session of its own accord
// (Config.RealtimeSessionIdleTimeout, Config.RealtimeSessionMaxDuration).
var (
	errRealtimeSessionIdle    = errors.New("no message either way past the session's idle limit")
	errRealtimeSessionTooLong = errors.New("the session lasted the longest a session may")
)

// realtimeLimitCode is the close code a session ended at a gateway limit gets: 1008, the
// gateway's policy (not a normal end the client asked for, nor a server going away).
const realtimeLimitCode = websocket.StatusPolicyViolation

// run relays messages both ways, each as it came (its type and bytes), billing the usage
// of each upstream response.done before it is handed on, until one side closes or fails,
// ctx ends, stop is called or one of limits is reached; then it closes both sides (the
// closing side's code and reason handed to the other; 1001 at shutdown; at a limit the
// client is sent an error event saying which and both are closed with 1008) and waits for
// both directions to end. It returns why the session ended: nil when a side closed it
// normally (1000 or 1001); context.Canceled (with the cause) when the client went away
// without a close, the server shut it down or a limit ended it (errRealtimeSessionIdle,
// errRealtimeSessionTooLong); the failure otherwise.
func (rel *realtimeRelay) run(parent context.Context, client, up *websocket.Conn, bill func(msg []byte), gate func(msg []byte) (fwd, reply []byte), limits realtimeLimits) error {
	// The reads and writes do not take parent: a cancelled context makes the library cut
	// the connection without a close, where the server closes it with 1001.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	defer cancel()
	ends := make(chan relayEnd, 2)
	heard := make(chan struct{}, 1) // a message went either way: the idle limit starts again
	go func() { ends <- relayEnd{fromClient: true, err: pump(ctx, client, up, nil, gate, heard)} }()
	go func() { ends <- relayEnd{err: pump(ctx, up, client, bill, nil, heard)} }()
	var idleC, maxC <-chan time.Time
	var idle *time.Timer
	if limits.idle > 0 {
		idle = time.NewTimer(limits.idle)
		defer idle.Stop()
		idleC = idle.C
	}
	if limits.longest > 0 {
		longest := time.NewTimer(limits.longest)
		defer longest.Stop()
		maxC = longest.C
	}
	pending := 2
	var sessionErr error
wait:
	for {
		select {
		case <-heard:
			if idle != nil {
				idle.Reset(limits.idle) // no stale tick after Reset (Go 1.23 timers)
			}
		case first := <-ends:
			pending--
			sessionErr = closeOther(first, client, up)
			break wait
		case <-rel.done:
			sessionErr = rel.cause
			closeBoth(client, up, websocket.StatusGoingAway, "server shutting down")
			break wait
		case <-parent.Done():
			sessionErr = fmt.Errorf("%w: %w", context.Canceled, context.Cause(parent))
			closeBoth(client, up, websocket.StatusGoingAway, "server shutting down")
			break wait
		case <-idleC:
			sessionErr = fmt.Errorf("%w: %w (%s)", context.Canceled, errRealtimeSessionIdle, limits.idle)
			closeAtLimit(ctx, client, up, "session_idle_timeout",
				fmt.Sprintf("The session was closed by the gateway: no event either way for %s.", limits.idle))
			break wait
		case <-maxC:
			sessionErr = fmt.Errorf("%w: %w (%s)", context.Canceled, errRealtimeSessionTooLong, limits.longest)
			closeAtLimit(ctx, client, up, "session_expired",
				fmt.Sprintf("The session hit the gateway's maximum duration of %s.", limits.longest))
			break wait
		}
	}
	// The other direction ends once its connection is closed.
	t := time.NewTimer(realtimeCloseWait)
	defer t.Stop()
	for ; pending > 0; pending-- {
		select {
		case <-ends:
		case <-t.C:
			cancel() // a side that does not answer the close: cut it
			client.CloseNow()
			up.CloseNow()
			<-ends
		}
	}
	return sessionErr
}

// closeAtLimit ends a session at one of the gateway's limits: the client is told why in an
// error event (OpenAI's shape, with code), then both sides are closed with 1008 and the
// reason (a close reason holds at most 123 bytes).
func closeAtLimit(ctx context.Context, client, up *websocket.Conn, code, message string) {
	ev, _ := json.Marshal(map[string]any{"type": "error", "event_id": "event_gateway_limit",
		"error": map[string]any{"type": "invalid_request_error", "code": code, "message": message}})
	wctx, cancel := context.WithTimeout(ctx, realtimeCloseWait)
	client.Write(wctx, websocket.MessageText, ev) // best effort: the close says it too
	cancel()
	reason := message
	if len(reason) > 123 {
		reason = reason[:123]
	}
	closeBoth(client, up, realtimeLimitCode, reason)
}

// realtimeCloseWait is how long run waits for the sides to finish closing before it cuts
// their connections.
const realtimeCloseWait = 10 * time.Second

// pump copies messages from src to dst until one fails, handing each text message to bill
// before it is handed on (bill nil: none; a realtimeMeter's observe bills what it reports)
// and to gate (nil: none), which may rewrite it or refuse it (fwd nil: not handed on; its
// reply, an error event, is sent back to src), and telling heard, without waiting, that one
// came; it returns the failure: src's close or read failure, or dst's write failure
// (wrapped in errRelayWrite).
func pump(ctx context.Context, src, dst *websocket.Conn, bill func(msg []byte), gate func(msg []byte) (fwd, reply []byte), heard chan<- struct{}) error {
	for {
		typ, msg, err := src.Read(ctx)
		if err != nil {
			return err
		}
		select {
		case heard <- struct{}{}:
		default:
		}
		if bill != nil && typ == websocket.MessageText {
			bill(msg)
		}
		if gate != nil && typ == websocket.MessageText {
			fwd, reply := gate(msg)
			if fwd == nil {
				if err := src.Write(ctx, websocket.MessageText, reply); err != nil {
					return err
				}
				continue
			}
			msg = fwd
		}
		if err := dst.Write(ctx, typ, msg); err != nil {
			return &relayWriteError{err: err}
		}
	}
}

// relayWriteError is a failure to hand a message on to the other side.
type relayWriteError struct{ err error }

func (e *relayWriteError) Error() string { return "relaying a message: " + e.err.Error() }
func (e *relayWriteError) Unwrap() error { return e.err }

// closeOther closes the side that did not end first: with the code and reason the other
// side closed with (1000 for a close without a code), 1001 when the client went away
// without a close, 1011 when the upstream's connection broke; and returns the session's
// error (see run).
func closeOther(first relayEnd, client, up *websocket.Conn) error {
	var we *relayWriteError
	if errors.As(first.err, &we) {
		// The reading side is fine; the one written to failed: it is the one that ended.
		first = relayEnd{fromClient: !first.fromClient, err: we.err}
	}
	var ce websocket.CloseError
	closed := errors.As(first.err, &ce)
	other, self := up, client
	if !first.fromClient {
		other, self = client, up
	}
	switch {
	case closed:
		code := ce.Code
		if code == websocket.StatusNoStatusRcvd {
			code = websocket.StatusNormalClosure
		}
		other.Close(code, ce.Reason)
		self.CloseNow()
		if code == websocket.StatusNormalClosure || code == websocket.StatusGoingAway {
			return nil
		}
		who := "the client"
		if !first.fromClient {
			who = "the provider"
		}
		return fmt.Errorf("%s closed the realtime session with %d (%s)", who, code, ce.Reason)
	case first.fromClient:
		other.Close(websocket.StatusGoingAway, "the client went away")
		return fmt.Errorf("%w: the client went away: %w", context.Canceled, first.err)
	}
	other.Close(websocket.StatusInternalError, "the upstream realtime session broke")
	return fmt.Errorf("the provider's realtime session broke: %w", first.err)
}

// closeBoth closes both sides with code and reason, at once.
func closeBoth(client, up *websocket.Conn, code websocket.StatusCode, reason string) {
	var wg sync.WaitGroup
	for _, c := range []*websocket.Conn{client, up} {
		wg.Go(func() { c.Close(code, reason) })
	}
	wg.Wait()
}

// realtimeWireUsage is the usage of a response.done event (response.usage).
type realtimeWireUsage struct {
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	InputTokenDetails struct {
		TextTokens          int `json:"text_tokens"`
		AudioTokens         int `json:"audio_tokens"`
		ImageTokens         int `json:"image_tokens"`
		CachedTokens        int `json:"cached_tokens"`
		CachedTokensDetails struct {
			TextTokens  int `json:"text_tokens"`
			AudioTokens int `json:"audio_tokens"`
		} `json:"cached_tokens_details"`
	} `json:"input_token_details"`
	OutputTokenDetails struct {
		TextTokens  int `json:"text_tokens"`
		AudioTokens int `json:"audio_tokens"`
	} `json:"output_token_details"`
}

// responseDoneUsage is the usage of msg when it is a server response.done event that
// reports one.
func responseDoneUsage(msg []byte) (providers.RealtimeUsage, bool) {
	if !bytes.Contains(msg, []byte(`"response.done"`)) {
		return providers.RealtimeUsage{}, false
	}
	var ev struct {
		Type     string `json:"type"`
		Response struct {
			Usage *realtimeWireUsage `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.Type != "response.done" || ev.Response.Usage == nil {
		return providers.RealtimeUsage{}, false
	}
	u := ev.Response.Usage
	return providers.RealtimeUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		InputTextTokens: u.InputTokenDetails.TextTokens, InputAudioTokens: u.InputTokenDetails.AudioTokens,
		InputImageTokens: u.InputTokenDetails.ImageTokens, CachedTokens: u.InputTokenDetails.CachedTokens,
		CachedTextTokens: u.InputTokenDetails.CachedTokensDetails.TextTokens, CachedAudioTokens: u.InputTokenDetails.CachedTokensDetails.AudioTokens,
		OutputTextTokens: u.OutputTokenDetails.TextTokens, OutputAudioTokens: u.OutputTokenDetails.AudioTokens}, true
}
