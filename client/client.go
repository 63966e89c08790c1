// Package client is the Go client of a Switchyard server: model selection, completions
// (plain and streamed, native and OpenAI-compatible), custom router training and
// prediction, and agent prompt optimization.
//
//	c, err := client.New() // SWITCHYARD_BASE_URL, SERVICE_API_KEY
//	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{...})
//
// The request and response types are the package's own plain structs mirroring the wire
// format, so the client does not pull in the server or its capability packages.
//
// Every failure answered by the server comes back as an *Error carrying the HTTP status,
// the "error" kind and the "message" of the uniform error body. Transient failures (429,
// 502, 503, 504, connection errors) are retried first; see RetryPolicy.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultBaseURL is the server address used when neither WithBaseURL nor the
// SWITCHYARD_BASE_URL environment variable gives one.
const DefaultBaseURL = "http://127.0.0.1:8080"

// Environment variables read by New.
const (
	EnvBaseURL = "SWITCHYARD_BASE_URL"
	EnvAPIKey  = "SERVICE_API_KEY"
)

// Client talks to one Switchyard server. It is safe for concurrent use.
type Client struct {
	baseURL string
	key     string
	hc      *http.Client
	ua      string
	retry   RetryPolicy
	// sleep waits between retries; tests replace it to record the waits.
	sleep func(context.Context, time.Duration) error
}

// Option configures a Client.
type Option func(*config)

type config struct {
	baseURL *string
	key     *string
	hc      *http.Client
	getenv  func(string) string
	ua      string
	retry   RetryPolicy
	sleep   func(context.Context, time.Duration) error
}

// WithBaseURL sets the server address, e.g. "https://switchyard.example.com". A trailing
// slash and a trailing "/api/v1" are removed.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = &u } }

// WithAPIKey sets the bearer key instead of reading SERVICE_API_KEY.
func WithAPIKey(key string) Option { return func(c *config) { c.key = &key } }

// WithHTTPClient sets the HTTP client used for every call (default: a client without a
// timeout; streaming calls may last long, so bound each call with its context).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithGetenv replaces os.Getenv for reading SWITCHYARD_BASE_URL and SERVICE_API_KEY.
func WithGetenv(getenv func(string) string) Option { return func(c *config) { c.getenv = getenv } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *config) { c.ua = ua } }

// New returns a client. Transient failures are retried under DefaultRetryPolicy unless
// WithRetry or WithoutRetry says otherwise. The base URL comes from WithBaseURL, else SWITCHYARD_BASE_URL, else
// DefaultBaseURL; the key from WithAPIKey, else SERVICE_API_KEY. A client without a key is
// allowed (the server then answers 401 with an *Error).
func New(opts ...Option) (*Client, error) {
	cfg := config{getenv: os.Getenv, ua: "switchyard-go-client", sleep: sleepContext}
	for _, o := range opts {
		o(&cfg)
	}
	base := DefaultBaseURL
	if cfg.baseURL != nil {
		base = *cfg.baseURL
	} else if v := cfg.getenv(EnvBaseURL); v != "" {
		base = v
	}
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	base = strings.TrimSuffix(base, "/api/v1")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be an absolute http(s) URL", base)
	}
	key := ""
	if cfg.key != nil {
		key = *cfg.key
	} else {
		key = cfg.getenv(EnvAPIKey)
	}
	hc := cfg.hc
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{baseURL: base, key: strings.TrimSpace(key), hc: hc, ua: cfg.ua, retry: cfg.retry.withDefaults(), sleep: cfg.sleep}, nil
}

// BaseURL returns the server address the client talks to.
func (c *Client) BaseURL() string { return c.baseURL }

// newRequest builds a request to path (starting with "/") with an optional JSON body.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: encoding request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.baseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if c.ua != "" {
		req.Header.Set("User-Agent", c.ua)
	}
	return req, nil
}

// do sends a JSON request and decodes a JSON answer into out (when out is not nil).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	_, err := c.doHeader(ctx, method, path, query, nil, body, out)
	return err
}

// doHeader is do with the request headers header added, answering the response's headers.
func (c *Client) doHeader(ctx context.Context, method, path string, query url.Values, header http.Header, body, out any) (http.Header, error) {
	req, err := c.newRequest(ctx, method, path, query, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Header, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.Header, fmt.Errorf("client: %s %s: decoding response: %w", method, path, err)
	}
	return resp.Header, nil
}

// ErrMissingID is matched (errors.Is) by the error of a call that needs an id none was
// given or remembered for: RouterTrainer and AgentOptimizer calls made before Train,
// Submit, UseJob or UseModel (or before a job completed, for Model and Predict), and the
// key, team, customer, listing, file, batch (Batch, CancelBatch, WatchBatch, WaitBatch,
// BatchOutput), preference and DeleteCached calls given an empty id. No request is sent.
var ErrMissingID = errors.New("no id known yet")
