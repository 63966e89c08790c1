package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	client := o.ep.client
	if client == nil {
		client = http.DefaultClient
	}
	conn, resp, err := websocket.Dial(ctx, o.RealtimeURL(model), &websocket.DialOptions{HTTPClient: client, HTTPHeader: h})
	if err == nil {
		return conn, nil
	}
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		var body []byte
		if resp.Body != nil {
			body, _ = io.ReadAll(resp.Body)
		}
		code, msg := realtimeRefusal(body)
		if msg == "" {
			msg = fmt.Sprintf("the realtime handshake was answered %d", resp.StatusCode)
		}
		return nil, &Error{Provider: o.Name(), Model: model, StatusCode: resp.StatusCode, Code: code,
			Kind: classifyStatus(resp.StatusCode, code, msg), Message: o.ep.trim(msg), Err: err}
	}
	kind := classifyTransport(err, context.Cause(ctx))
	return nil, &Error{Provider: o.Name(), Model: model, Kind: kind, Message: o.ep.trim(transportMessage(err, kind)), Err: err}
}

// realtimeRefusal is the error code and message of an OpenAI error envelope ("" when body
// is not one).
func realtimeRefusal(body []byte) (code, msg string) {
	var env struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Message == "" {
		return "", strings.TrimSpace(string(body))
	}
	if c, ok := env.Error.Code.(string); ok {
		code = c
	}
	return code, env.Error.Message
}
