package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Bounds on gateway traffic from the sandbox.
const (
	// MaxGatewayRequestBytes bounds one request body.
	MaxGatewayRequestBytes = 8 << 20
	// MaxGatewayResponseBytes bounds one response body relayed through the wasm tunnel.
	MaxGatewayResponseBytes = 32 << 20
)

// GatewayProxy forwards the sandbox's HTTP requests to the job's gateway and nowhere else:
// only paths under the gateway's base path are forwarded, to the gateway's host, and with
// the job's key: whatever Authorization the agent sent is replaced, so code in the sandbox
// cannot try other keys (and spend the failed-authentication allowance of the address all
// sandboxes share).
type GatewayProxy struct {
	target *url.URL
	auth   string // "Bearer <job key>"; "" leaves the agent's header
	proxy  *httputil.ReverseProxy
	client *http.Client
}

// NewGatewayProxy returns a proxy to gw.BaseURL. client is used for tunnelled requests
// (nil means http.DefaultClient); log receives the proxy's failures (nil: slog.Default()),
// a request the sandbox abandoned (its run ended or was cancelled) at debug level only.
func NewGatewayProxy(gw sandbox.Gateway, client *http.Client, log *slog.Logger) (*GatewayProxy, error) {
	target, err := url.Parse(gw.BaseURL)
	if err != nil || target.Host == "" || (target.Scheme != "http" && target.Scheme != "https") {
		return nil, fmt.Errorf("%w: gateway.base_url: %q is not an absolute http(s) URL", sandbox.ErrInvalid, gw.BaseURL)
	}
	target.Path = strings.TrimSuffix(target.Path, "/")
	if client == nil {
		client = http.DefaultClient
	}
	if log == nil {
		log = slog.Default()
	}
	p := &GatewayProxy{target: target, client: client}
	if gw.APIKey != "" {
		p.auth = "Bearer " + gw.APIKey
	}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = target.Scheme
			r.Out.URL.Host = target.Host
			r.Out.Host = target.Host
			p.authorize(r.Out.Header)
		},
		// The standard library's default writes plain text through package log; every line
		// goes through slog, and an abandoned request is not a failure.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			level := slog.LevelWarn
			if errors.Is(err, context.Canceled) || r.Context().Err() != nil {
				level = slog.LevelDebug
			}
			log.Log(r.Context(), level, "sandbox gateway proxy: request not forwarded", "path", r.URL.Path, "err", err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return p, nil
}

// authorize puts the job's key on a forwarded request.
func (p *GatewayProxy) authorize(h http.Header) {
	if p.auth != "" {
		h.Set("Authorization", p.auth)
	}
}

// BasePath is the path OPENAI_BASE_URL must carry inside the sandbox (e.g. "/v1").
func (p *GatewayProxy) BasePath() string { return p.target.Path }

// allowed reports whether a request path is under the gateway's base path.
func (p *GatewayProxy) allowed(path string) bool {
	base := p.target.Path
	return base == "" || path == base || strings.HasPrefix(path, base+"/")
}

// ServeHTTP forwards one request (process backend: served on the Unix socket bound into the
// sandbox).
func (p *GatewayProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.allowed(r.URL.Path) {
		http.Error(w, "the sandbox may only call the gateway under "+p.target.Path, http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxGatewayRequestBytes)
	p.proxy.ServeHTTP(w, r)
}

// RoundTripRaw forwards one raw HTTP/1.1 request (wasm backend tunnel) and returns the raw
// response, always with Content-Length and "Connection: close". Failures become 4xx/5xx
// responses so the agent sees an HTTP error, never a hang.
func (p *GatewayProxy) RoundTripRaw(ctx context.Context, raw []byte) []byte {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return rawResponse(http.StatusBadRequest, nil, []byte("malformed request: "+err.Error()))
	}
	if !p.allowed(req.URL.Path) {
		return rawResponse(http.StatusForbidden, nil, []byte("the sandbox may only call the gateway under "+p.target.Path))
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxGatewayRequestBytes+1))
	if err != nil || len(body) > MaxGatewayRequestBytes {
		return rawResponse(http.StatusRequestEntityTooLarge, nil, []byte("request body too large or malformed"))
	}
	u := *p.target
	u.Path, u.RawPath, u.RawQuery = req.URL.Path, "", req.URL.RawQuery
	out, err := http.NewRequestWithContext(ctx, req.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return rawResponse(http.StatusBadRequest, nil, []byte(err.Error()))
	}
	for k, vs := range req.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Connection", "Content-Length", "Transfer-Encoding", "Proxy-Authorization":
			continue
		}
		out.Header[k] = vs
	}
	p.authorize(out.Header)
	resp, err := p.client.Do(out)
	if err != nil {
		return rawResponse(http.StatusBadGateway, nil, []byte("gateway unreachable"))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxGatewayResponseBytes+1))
	if err != nil || len(data) > MaxGatewayResponseBytes {
		return rawResponse(http.StatusBadGateway, nil, []byte("gateway response too large or interrupted"))
	}
	return rawResponse(resp.StatusCode, resp.Header, data)
}

func rawResponse(status int, header http.Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	for k, vs := range header {
		switch http.CanonicalHeaderKey(k) {
		case "Connection", "Content-Length", "Transfer-Encoding", "Keep-Alive":
			continue
		}
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, strings.NewReplacer("\r", " ", "\n", " ").Replace(v))
		}
	}
	if header == nil {
		b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}
