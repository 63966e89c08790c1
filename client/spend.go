package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// DailyActivityQuery selects the days UserDailyActivity, TeamDailyActivity and
// TagDailyActivity answer: From to To (UTC days, inclusive; both required, at most 366 days)
// and the page of them (newest first).
type DailyActivityQuery struct {
	From, To time.Time
	// Model keeps one model's requests (provider/model, or the model alone); on
	// UserDailyActivity only (the tag and team totals are not kept per model).
	Model string
	// APIKey keeps one key's requests (UserDailyActivity only): a virtual key's id (vk_…),
	// the key itself or its SHA-256 hex, or the calling key's owner id (key_…) or the key
	// itself for its own requests, as GET /spend/logs takes it.
	APIKey string
	// UserID keeps one user's requests, those of the virtual keys made for it
	// (UserDailyActivity only). A virtual key with a user_id reads its own user's days
	// without it and may not name another (ErrForbidden). Model, APIKey and UserID
	// combine.
	UserID string
	// Tags keeps these tags' totals (TagDailyActivity only); nil for every tag.
	Tags []string
	// TeamIDs keeps these teams' totals and ExcludeTeamIDs leaves these teams' out
	// (TeamDailyActivity only); nil for every team.
	TeamIDs, ExcludeTeamIDs []string
	// Page (from 1) and PageSize (1 to 1000 days) page the days; 0 for the server's
	// defaults, LiteLLM's: page 1, 50 days on UserDailyActivity and 10 on
	// TeamDailyActivity and TagDailyActivity.
	Page, PageSize int
}

// ActivityMetrics are the totals of a day, or of one model, provider or tag in it (LiteLLM's
// SpendMetrics).
type ActivityMetrics struct {
	SpendUSD         float64 `json:"spend"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	TotalTokens      int64   `json:"total_tokens"`
	// APIRequests counts the requests a model was called for and those the response
	// cache answered; FailedRequests those that did not end ok; SuccessfulRequests the
	// rest.
	APIRequests        int64 `json:"api_requests"`
	SuccessfulRequests int64 `json:"successful_requests"`
	FailedRequests     int64 `json:"failed_requests"`
}

// ActivityEntry is one model's, provider's, tag's or team's totals of a day.
type ActivityEntry struct {
	Metrics ActivityMetrics `json:"metrics"`
	// Metadata is a team's {"team_alias": name} (TeamDailyActivity); else empty.
	Metadata map[string]any `json:"metadata,omitempty"`
	// APIKeyBreakdown is a model's or provider's totals per key (UserDailyActivity), keyed
	// as ActivityBreakdown.APIKeys; empty on the days before the server kept them.
	APIKeyBreakdown map[string]ActivityKeyEntry `json:"api_key_breakdown,omitempty"`
}

// ActivityKeyEntry is one key's totals of a day, with the key as it is now.
type ActivityKeyEntry struct {
	Metrics  ActivityMetrics     `json:"metrics"`
	Metadata ActivityKeyMetadata `json:"metadata"`
}

// ActivityKeyMetadata describes a key of ActivityBreakdown.APIKeys (LiteLLM's KeyMetadata).
type ActivityKeyMetadata struct {
	// KeyAlias is the virtual key's name ("" for none, and for the calling key's own
	// requests); TeamID and UserID are its team and user_id.
	KeyAlias string `json:"key_alias"`
	TeamID   string `json:"team_id"`
	UserID   string `json:"user_id"`
	// KeyExists is false for a key deleted since.
	KeyExists bool `json:"key_exists"`
}

// ActivityBreakdown splits a day's totals per model (provider/model), provider and key
// (user activity), per tag (Entities, tag activity) or per team id (Entities, team
// activity). The server keeps no totals per model group or endpoint, so LiteLLM's other
// breakdowns are always empty and left out here.
type ActivityBreakdown struct {
	Models    map[string]ActivityEntry `json:"models"`
	Providers map[string]ActivityEntry `json:"providers"`
	// APIKeys are keyed by the virtual key's id (vk_…) or, for the calling key's own
	// requests, its owner id (key_…), as SpendLogs names them.
	APIKeys  map[string]ActivityKeyEntry `json:"api_keys"`
	Entities map[string]ActivityEntry    `json:"entities"`
}

// ActivityDay is one day with any request.
type ActivityDay struct {
	Date      string            `json:"date"` // YYYY-MM-DD, UTC
	Metrics   ActivityMetrics   `json:"metrics"`
	Breakdown ActivityBreakdown `json:"breakdown"`
}

// ActivityMetadata holds the totals of every day of the period (all pages) and the page.
type ActivityMetadata struct {
	TotalSpendUSD           float64 `json:"total_spend"`
	TotalPromptTokens       int64   `json:"total_prompt_tokens"`
	TotalCompletionTokens   int64   `json:"total_completion_tokens"`
	TotalTokens             int64   `json:"total_tokens"`
	TotalAPIRequests        int64   `json:"total_api_requests"`
	TotalSuccessfulRequests int64   `json:"total_successful_requests"`
	TotalFailedRequests     int64   `json:"total_failed_requests"`
	Page                    int     `json:"page"`
	TotalPages              int     `json:"total_pages"`
	HasMore                 bool    `json:"has_more"`
}

// DailyActivity is LiteLLM's daily activity answer (SpendAnalyticsPaginatedResponse).
type DailyActivity struct {
	// Results are the page's days, newest first.
	Results  []ActivityDay    `json:"results"`
	Metadata ActivityMetadata `json:"metadata"`
}

// UserDailyActivity returns this key's spend, tokens and requests per day, model and key
// from the server's durable daily spend (LiteLLM's GET /user/daily/activity); q.UserID
// narrows to one user's. A virtual key with a user_id reads its own user's days (another's
// is ErrForbidden); one without a user_id may not call it (ErrForbidden); a bad query is
// ErrInvalid naming the parameter.
func (c *Client) UserDailyActivity(ctx context.Context, q DailyActivityQuery) (*DailyActivity, error) {
	return c.dailyActivity(ctx, "/user/daily/activity", q)
}

// TeamDailyActivity returns the spend, tokens and requests of this key's teams (the
// requests of their virtual keys) per day and team id (Breakdown.Entities, with the team's
// team_alias), LiteLLM's GET /team/daily/activity; q.TeamIDs and q.ExcludeTeamIDs select
// the teams.
func (c *Client) TeamDailyActivity(ctx context.Context, q DailyActivityQuery) (*DailyActivity, error) {
	return c.dailyActivity(ctx, "/team/daily/activity", q)
}

// TagDailyActivity returns this key's spend, tokens and requests per day and request tag
// (Breakdown.Entities; a request naming several tags counts in each), LiteLLM's GET
// /tag/daily/activity.
func (c *Client) TagDailyActivity(ctx context.Context, q DailyActivityQuery) (*DailyActivity, error) {
	return c.dailyActivity(ctx, "/tag/daily/activity", q)
}

func (c *Client) dailyActivity(ctx context.Context, path string, q DailyActivityQuery) (*DailyActivity, error) {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("start_date", q.From.UTC().Format(time.DateOnly))
	}
	if !q.To.IsZero() {
		v.Set("end_date", q.To.UTC().Format(time.DateOnly))
	}
	if q.Model != "" {
		v.Set("model", q.Model)
	}
	if q.APIKey != "" {
		v.Set("api_key", q.APIKey)
	}
	if q.UserID != "" {
		v.Set("user_id", q.UserID)
	}
	if len(q.Tags) > 0 {
		v.Set("tags", strings.Join(q.Tags, ","))
	}
	if len(q.TeamIDs) > 0 {
		v.Set("team_ids", strings.Join(q.TeamIDs, ","))
	}
	if len(q.ExcludeTeamIDs) > 0 {
		v.Set("exclude_team_ids", strings.Join(q.ExcludeTeamIDs, ","))
	}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.PageSize > 0 {
		v.Set("page_size", strconv.Itoa(q.PageSize))
	}
	var out DailyActivity
	if err := c.do(ctx, http.MethodGet, path, v, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
