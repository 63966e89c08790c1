package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// SpendQuery selects the daily spend Spend answers: the days From to To (UTC, inclusive;
// zero: the 30 days ending today) grouped By "tag" (the default) or "model".
type SpendQuery struct {
	From, To time.Time
	By       string
}

// SpendRow is one day's totals of one request tag (or model).
type SpendRow struct {
	Day              string  `json:"day"`
	Tag              string  `json:"tag,omitempty"`
	Model            string  `json:"model,omitempty"`
	Requests         int64   `json:"requests"`
	Errors           int64   `json:"errors,omitempty"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// CacheHits are requests the response cache answered (not in Requests); SavedUSD what
	// their answers cost when they were made.
	CacheHits int64   `json:"cache_hits,omitempty"`
	SavedUSD  float64 `json:"saved_usd,omitempty"`
}

// SpendReport is the answer of GET /api/v1/usage/spend.
type SpendReport struct {
	From string     `json:"from"`
	To   string     `json:"to"`
	By   string     `json:"by"`
	Data []SpendRow `json:"data"`
}

// Spend returns this key's daily spend per request tag or model, kept in the server's
// store (GET /api/v1/usage/spend): requests, tokens, cost and cache savings per day.
func (c *Client) Spend(ctx context.Context, q SpendQuery) (*SpendReport, error) {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.DateOnly))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.DateOnly))
	}
	if q.By != "" {
		v.Set("by", q.By)
	}
	var out SpendReport
	if err := c.do(ctx, http.MethodGet, "/api/v1/usage/spend", v, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
