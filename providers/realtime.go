package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"
)

// RealtimeDialer is implemented by the adapters that open sessions of OpenAI's Realtime
// API (a WebSocket): OpenAI's format, and Azure OpenAI's realtime deployments.
type RealtimeDialer interface {
	// DialRealtime opens a realtime session with model, with the adapter's credential and
	// header's other headers (OpenAI-Beta: realtime=v1 for a client of the beta
	// protocol). It fails with a *Error when no session opened: no credential configured
	// (matching ErrNotConfigured), the provider's refusal of the handshake (its status
	// classified as a call's is, its message in Message) or a transport failure. The
	// session outlives ctx, which bounds only the handshake.
	DialRealtime(ctx context.Context, model string, header http.Header) (*websocket.Conn, error)
}

// RealtimeURL is the address of a realtime session with model (https, which a WebSocket
// dial takes as wss): OpenAI's {base}/realtime?model={model}; Azure OpenAI's
// {endpoint}/openai/realtime?api-version={version}&deployment={deployment}, or with its
// v1 API {endpoint}/openai/v1/realtime?model={deployment}.
func (o *OpenAI) RealtimeURL(model string) string {
	q := "?model=" + url.QueryEscape(model)
	switch {
	case o.azure == nil:
		return operationURL(o.baseURL, "/realtime"+q)
	case o.azure.v1:
		return o.baseURL + "/openai/v1/realtime" + q
	}
	return o.baseURL + "/openai/realtime" + o.azure.query + "&deployment=" + url.QueryEscape(model)
}

// DialRealtime implements RealtimeDialer: a WebSocket to RealtimeURL(model) with the
// adapter's credential (Authorization: Bearer with the key; Azure's api-key or Entra ID
// token), its configured Config.Headers and header, through its HTTP client.
func (o *OpenAI) DialRealtime(ctx context.Context, model string, header http.Header) (*websocket.Conn, error) {
	return o.dialRealtime(ctx, model, o.RealtimeURL(model), header)
}

// RealtimeTranscriptionDialer is implemented by the adapters that open transcription-only
// sessions of OpenAI's Realtime API (a WebSocket with intent=transcription, whose
// transcription model a session update names, not the address): OpenAI's format, and
// Azure OpenAI's.
type RealtimeTranscriptionDialer interface {
	// DialRealtimeTranscription opens a transcription session to be run with model (the
	// provider's name of the transcription model: it picks the credential, as the session
	// update names it), with header as DialRealtime takes it. Errors as DialRealtime's.
	DialRealtimeTranscription(ctx context.Context, model string, header http.Header) (*websocket.Conn, error)
}

// RealtimeTranscriptionURL is the address of a transcription session (https, which a
// WebSocket dial takes as wss): OpenAI's {base}/realtime?intent=transcription (OpenAI
// refuses a model in it); Azure OpenAI's
// {endpoint}/openai/realtime?api-version={version}&intent=transcription, or with its v1
// API {endpoint}/openai/v1/realtime?intent=transcription.
func (o *OpenAI) RealtimeTranscriptionURL() string {
	const q = "intent=transcription"
	switch {
	case o.azure == nil:
		return operationURL(o.baseURL, "/realtime?"+q)
	case o.azure.v1:
		return o.baseURL + "/openai/v1/realtime?" + q
	}
	return o.baseURL + "/openai/realtime" + o.azure.query + "&" + q
}

// DialRealtimeTranscription implements RealtimeTranscriptionDialer: a WebSocket to
// RealtimeTranscriptionURL with the adapter's credential for model, as DialRealtime.
func (o *OpenAI) DialRealtimeTranscription(ctx context.Context, model string, header http.Header) (*websocket.Conn, error) {
	return o.dialRealtime(ctx, model, o.RealtimeTranscriptionURL(), header)
}

// realtimeHeader is header with the adapter's configured headers and its credential for
// model.
func (o *OpenAI) realtimeHeader(ctx context.Context, model string, header http.Header) (http.Header, error) {
	if err := o.ep.checkKey(model); err != nil {
		return nil, err
	}
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, v := range o.ep.cfg.Headers {
		h.Set(k, v)
	}
	if err := o.setAuth(ctx, model, h); err != nil {
		return nil, err
	}
	return h, nil
}

// httpClient is the adapter's HTTP client.
func (o *OpenAI) httpClient() *http.Client {
	if o.ep.client == nil {
		return http.DefaultClient
	}
	return o.ep.client
}

// dialRealtime opens the realtime WebSocket at addr for model (see DialRealtime).
func (o *OpenAI) dialRealtime(ctx context.Context, model, addr string, header http.Header) (*websocket.Conn, error) {
	h, err := o.realtimeHeader(ctx, model, header)
	if err != nil {
		return nil, err
	}
	conn, resp, err := websocket.Dial(ctx, addr, &websocket.DialOptions{HTTPClient: o.httpClient(), HTTPHeader: h})
	if err == nil {
		return conn, nil
	}
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		var body []byte
		if resp.Body != nil {
			body, _ = io.ReadAll(resp.Body)
		}
		code, param, msg := realtimeRefusal(body)
		if msg == "" {
			msg = fmt.Sprintf("the realtime handshake was answered %d", resp.StatusCode)
		}
		return nil, &Error{Provider: o.Name(), Model: model, StatusCode: resp.StatusCode, Code: code, Param: param,
			Kind: classifyStatus(resp.StatusCode, code, msg), Message: o.ep.trim(msg), Err: err}
	}
	kind := classifyTransport(err, context.Cause(ctx))
	return nil, &Error{Provider: o.Name(), Model: model, Kind: kind, Message: o.ep.trim(transportMessage(err, kind)), Err: err}
}

// realtimeRefusal is the error code, param and message of an OpenAI error envelope (the
// body itself as the message when it is not one).
func realtimeRefusal(body []byte) (code, param, msg string) {
	var env struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Param   any    `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Message == "" {
		return "", "", strings.TrimSpace(string(body))
	}
	code, _ = env.Error.Code.(string)
	param, _ = env.Error.Param.(string)
	return code, param, env.Error.Message
}

// RealtimeCaller is implemented by the adapters that open realtime sessions over WebRTC
// (OpenAI's POST /v1/realtime/calls: the caller's media goes to the provider, not through
// the gateway) and let a server watch them over a sideband WebSocket.
type RealtimeCaller interface {
	// CreateRealtimeCall sends sdp, a WebRTC offer, with session (the session
	// configuration, its model included) and returns the provider's SDP answer and the
	// call's id. It fails with a *Error as a call does.
	CreateRealtimeCall(ctx context.Context, model, sdp string, session json.RawMessage) (answer, callID string, err error)
	// DialRealtimeCall opens the sideband WebSocket of the call callID: its server events
	// (response.done with usage among them) until the call ends. Errors as DialRealtime's.
	DialRealtimeCall(ctx context.Context, model, callID string) (*websocket.Conn, error)
	// HangUpRealtimeCall ends the call callID.
	HangUpRealtimeCall(ctx context.Context, model, callID string) error
}

// maxSDPAnswer bounds the provider's SDP answer read.
const maxSDPAnswer = 1 << 20

// realtimeCallsURL is OpenAI's {base}/realtime/calls (and a call's sub-path).
func (o *OpenAI) realtimeCallsURL(sub string) (string, error) {
	if o.azure != nil {
		return "", &Error{Provider: o.Name(), Kind: KindBadRequest, Message: "realtime calls over WebRTC are served for OpenAI's API here, not Azure OpenAI's"}
	}
	return operationURL(o.baseURL, "/realtime/calls"+sub), nil
}

// CreateRealtimeCall implements RealtimeCaller: a multipart POST of sdp and session to
// {base}/realtime/calls with the adapter's credential; the call's id is the last segment
// of the answer's Location.
func (o *OpenAI) CreateRealtimeCall(ctx context.Context, model, sdp string, session json.RawMessage) (string, string, error) {
	addr, err := o.realtimeCallsURL("")
	if err != nil {
		return "", "", err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("sdp", sdp)
	if session != nil {
		mw.WriteField("session", string(session))
	}
	mw.Close()
	resp, err := o.realtimeCallRequest(ctx, model, addr, mw.FormDataContentType(), &body)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxSDPAnswer))
	if err != nil {
		return "", "", &Error{Provider: o.Name(), Model: model, Kind: KindConnection, Message: "reading the SDP answer: " + err.Error(), Err: err}
	}
	id, ok := realtimeCallID(resp.Header.Get("Location"))
	if !ok {
		// The id is how the call is watched and hung up, and OpenAI gives it nowhere else
		// (its SDKs read it from Location too): a call without one is the provider's fault.
		return "", "", &Error{Provider: o.Name(), Model: model, Kind: KindBadResponse,
			Message: fmt.Sprintf("the call was answered %d without a Location naming it (%q)", resp.StatusCode, resp.Header.Get("Location"))}
	}
	return string(answer), id, nil
}

// realtimeCallID is the call id a call's Location names (OpenAI's
// /v1/realtime/calls/{call_id}, relative or absolute): the path segment after calls/.
func realtimeCallID(loc string) (string, bool) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", false
	}
	i := strings.LastIndex(u.Path, "/calls/")
	if i < 0 {
		return "", false
	}
	id := u.Path[i+len("/calls/"):]
	return id, id != "" && !strings.Contains(id, "/")
}

// IsOfferRefusal reports whether err is a provider's refusal of a realtime call's offer or
// session configuration itself (a 400, 413, 415 or 422 that names neither the model nor
// the credential: OpenAI's invalid_offer, an SDP it cannot parse, a session field it does
// not take) — which any other provider would refuse too — rather than of its model (a 404,
// model_not_found, a param naming the model), its credential (401, 403), its capacity
// (429, 5xx) or a transport failure, which another model may not share.
func IsOfferRefusal(err error) bool {
	var pe *Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
	default:
		return false
	}
	if pe.Code == "model_not_found" || pe.Code == "invalid_model" || pe.Param == "model" || pe.Param == "session.model" {
		return false
	}
	return true
}

// HangUpRealtimeCall implements RealtimeCaller: POST {base}/realtime/calls/{id}/hangup.
func (o *OpenAI) HangUpRealtimeCall(ctx context.Context, model, callID string) error {
	addr, err := o.realtimeCallsURL("/" + url.PathEscape(callID) + "/hangup")
	if err != nil {
		return err
	}
	resp, err := o.realtimeCallRequest(ctx, model, addr, "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// DialRealtimeCall implements RealtimeCaller: a WebSocket to {base}/realtime?call_id={id}.
func (o *OpenAI) DialRealtimeCall(ctx context.Context, model, callID string) (*websocket.Conn, error) {
	if _, err := o.realtimeCallsURL(""); err != nil {
		return nil, err
	}
	return o.dialRealtime(ctx, model, operationURL(o.baseURL, "/realtime?call_id="+url.QueryEscape(callID)), nil)
}

// realtimeCallRequest POSTs body (of contentType; none when nil) to addr with the adapter's
// credential, returning a 2xx answer; anything else is a *Error.
func (o *OpenAI) realtimeCallRequest(ctx context.Context, model, addr, contentType string, body io.Reader) (*http.Response, error) {
	h, err := o.realtimeHeader(ctx, model, nil)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr, body)
	if err != nil {
		return nil, &Error{Provider: o.Name(), Model: model, Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	req.Header = h
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := o.httpClient().Do(req)
	if err != nil {
		kind := classifyTransport(err, context.Cause(ctx))
		return nil, &Error{Provider: o.Name(), Model: model, Kind: kind, Message: o.ep.trim(transportMessage(err, kind)), Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxSDPAnswer))
	code, param, msg := realtimeRefusal(raw)
	if msg == "" {
		msg = fmt.Sprintf("the realtime call was answered %d", resp.StatusCode)
	}
	return nil, &Error{Provider: o.Name(), Model: model, StatusCode: resp.StatusCode, Code: code, Param: param,
		Kind: classifyStatus(resp.StatusCode, code, msg), Message: o.ep.trim(msg)}
}
