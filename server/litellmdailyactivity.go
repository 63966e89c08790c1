package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// LiteLLM's admin UI reads its "Usage" page from GET /user/daily/activity,
// /team/daily/activity and /tag/daily/activity: per day, the spend, tokens and requests with
// a breakdown per model, provider, api key and entity (team or tag), in LiteLLM's
// SpendAnalyticsPaginatedResponse. The routes here answer them from the durable daily spend
// (usagelog.Rollup), which keeps an owner's totals per day and model and per day and tag:
// what it does not keep (per api key, per user, per team, per model group, prompt-cache
// tokens) is refused as a filter and left empty or zero in the answer, never made up.

// litellmSpendMetrics are LiteLLM's SpendMetrics: one day's (or one breakdown entry's)
// totals.
type litellmSpendMetrics struct {
	Spend                    float64 `json:"spend" jsonschema:"description=USD spent"`
	PromptTokens             int64   `json:"prompt_tokens"`
	CompletionTokens         int64   `json:"completion_tokens"`
	CacheReadInputTokens     int64   `json:"cache_read_input_tokens" jsonschema:"description=Always 0: the daily spend keeps no prompt-cache tokens"`
	CacheCreationInputTokens int64   `json:"cache_creation_input_tokens" jsonschema:"description=Always 0: the daily spend keeps no prompt-cache tokens"`
	TotalTokens              int64   `json:"total_tokens" jsonschema:"description=prompt_tokens plus completion_tokens"`
	SuccessfulRequests       int64   `json:"successful_requests" jsonschema:"description=api_requests less failed_requests (a cancelled request and a response-cache hit count here)"`
	FailedRequests           int64   `json:"failed_requests" jsonschema:"description=Requests that did not end ok (failed\\, filtered or blocked; cancelled ones excluded)"`
	APIRequests              int64   `json:"api_requests" jsonschema:"description=Requests a model was called for (failed ones too) and requests the response cache answered"`
}

// add adds the totals of one rollup row.
func (m *litellmSpendMetrics) add(t usagelog.DayTotals) {
	m.Spend += t.CostUSD
	m.PromptTokens += t.PromptTokens
	m.CompletionTokens += t.CompletionTokens
	m.TotalTokens += t.PromptTokens + t.CompletionTokens
	m.APIRequests += t.Requests + t.CacheHits
	m.FailedRequests += t.Errors
	m.SuccessfulRequests += t.Requests - t.Errors + t.CacheHits
}

// litellmKeyMetadata is LiteLLM's KeyMetadata.
type litellmKeyMetadata struct {
	KeyAlias *string `json:"key_alias"`
	TeamID   *string `json:"team_id"`
}

// litellmKeyMetric is LiteLLM's KeyMetricWithMetadata.
type litellmKeyMetric struct {
	Metrics  litellmSpendMetrics `json:"metrics"`
	Metadata litellmKeyMetadata  `json:"metadata"`
}

// litellmMetric is LiteLLM's MetricWithMetadata.
type litellmMetric struct {
	Metrics  litellmSpendMetrics `json:"metrics"`
	Metadata map[string]any      `json:"metadata" jsonschema:"description=Always empty"`
	// APIKeyBreakdown is always empty: the daily spend is not kept per key.
	APIKeyBreakdown map[string]litellmKeyMetric `json:"api_key_breakdown" jsonschema:"description=Always empty: the daily spend is not kept per key"`
}

// litellmBreakdown is LiteLLM's BreakdownMetrics: a day's totals per model, provider, …
type litellmBreakdown struct {
	MCPServers  map[string]litellmMetric    `json:"mcp_servers" jsonschema:"description=Always empty: the daily spend keeps no MCP calls"`
	Models      map[string]litellmMetric    `json:"models" jsonschema:"description=Per model that answered (or was tried last)\\, as provider/model; empty on /tag/daily/activity (the tags' totals are not kept per model)"`
	ModelGroups map[string]litellmMetric    `json:"model_groups" jsonschema:"description=Always empty: the daily spend keeps the model that answered\\, not the name asked for"`
	Providers   map[string]litellmMetric    `json:"providers" jsonschema:"description=Per provider: the provider part of each model's provider/model (unknown for requests that tried none); empty on /tag/daily/activity"`
	Endpoints   map[string]litellmMetric    `json:"endpoints" jsonschema:"description=Always empty: the daily spend is not kept per endpoint"`
	APIKeys     map[string]litellmKeyMetric `json:"api_keys" jsonschema:"description=Always empty: the daily spend is not kept per key"`
	Entities    map[string]litellmMetric    `json:"entities" jsonschema:"description=On /tag/daily/activity per tag; else empty (the daily spend is not kept per user or team)"`
}

// newLiteLLMBreakdown is a breakdown with every map empty (LiteLLM answers {} for none).
func newLiteLLMBreakdown() litellmBreakdown {
	return litellmBreakdown{MCPServers: map[string]litellmMetric{}, Models: map[string]litellmMetric{}, ModelGroups: map[string]litellmMetric{},
		Providers: map[string]litellmMetric{}, Endpoints: map[string]litellmMetric{}, APIKeys: map[string]litellmKeyMetric{}, Entities: map[string]litellmMetric{}}
}

// addTo adds t to m's entry name.
func addTo(m map[string]litellmMetric, name string, t usagelog.DayTotals) {
	e, ok := m[name]
	if !ok {
		e = litellmMetric{Metadata: map[string]any{}, APIKeyBreakdown: map[string]litellmKeyMetric{}}
	}
	e.Metrics.add(t)
	m[name] = e
}

// litellmDailySpend is LiteLLM's DailySpendData: one day.
type litellmDailySpend struct {
	Date      string              `json:"date" jsonschema:"description=The day YYYY-MM-DD (UTC)"`
	Metrics   litellmSpendMetrics `json:"metrics"`
	Breakdown litellmBreakdown    `json:"breakdown"`
}

// litellmDailySpendMetadata is LiteLLM's DailySpendMetadata: the totals of every day of the
// period (all pages) and the page.
type litellmDailySpendMetadata struct {
	TotalSpend                    float64 `json:"total_spend"`
	TotalPromptTokens             int64   `json:"total_prompt_tokens"`
	TotalCompletionTokens         int64   `json:"total_completion_tokens"`
	TotalTokens                   int64   `json:"total_tokens"`
	TotalAPIRequests              int64   `json:"total_api_requests"`
	TotalSuccessfulRequests       int64   `json:"total_successful_requests"`
	TotalFailedRequests           int64   `json:"total_failed_requests"`
	TotalCacheReadInputTokens     int64   `json:"total_cache_read_input_tokens" jsonschema:"description=Always 0"`
	TotalCacheCreationInputTokens int64   `json:"total_cache_creation_input_tokens" jsonschema:"description=Always 0"`
	Page                          int     `json:"page"`
	TotalPages                    int     `json:"total_pages" jsonschema:"description=Pages of page_size days (at least 1)"`
	HasMore                       bool    `json:"has_more"`
}

// litellmDailyActivity is LiteLLM's SpendAnalyticsPaginatedResponse.
type litellmDailyActivity struct {
	Results  []litellmDailySpend       `json:"results" jsonschema:"description=The days with any request\\, newest first\\, page_size of them"`
	Metadata litellmDailySpendMetadata `json:"metadata"`
}

// dailyActivityQuery is a parsed daily activity query.
type dailyActivityQuery struct {
	from, to       time.Time
	model          string
	page, pageSize int
	// names are the tags (tag route) to read; nil for every one.
	names []string
}

// dailyActivityRoute describes one of the three routes.
type dailyActivityRoute struct {
	path, summary string
	// by is the rollup grouping read (usagelog.SpendByModel or SpendByTag).
	by string
	// params are the route's own query parameters besides the common ones, with their
	// documentation; refused are LiteLLM parameters it answers with a 400 when given, with why.
	params  []QueryParam
	refused map[string]string
}

// dailyActivityDefaultPageSize and dailyActivityMaxPageSize are LiteLLM's page_size
// default and bound.
const (
	dailyActivityDefaultPageSize = 50
	dailyActivityMaxPageSize     = 1000
)

// notPerKey is why api_key is refused.
const notPerKey = "the daily spend is not kept per key here: GET /spend/logs?api_key=…&start_date=…&end_date=… sums one key's recent requests per day"

// litellmDailyActivityRoutes registers GET /user/daily/activity, /team/daily/activity and
// /tag/daily/activity over roll.
func (s *Server) litellmDailyActivityRoutes(roll *usagelog.Rollup) {
	common := []QueryParam{
		{Name: "start_date", Required: true, Description: "The first day YYYY-MM-DD (UTC)"},
		{Name: "end_date", Required: true, Description: "The last day YYYY-MM-DD (UTC); at most 365 days after start_date"},
		{Name: "page", Description: "The page of days (default 1)", Type: "integer", Minimum: Bound(1)},
		{Name: "page_size", Description: "Days per page (default 50)", Type: "integer", Minimum: Bound(1), Maximum: Bound(dailyActivityMaxPageSize)},
		{Name: "timezone", Description: "The caller's UTC offset in minutes (JavaScript's getTimezoneOffset); accepted and without effect: the days are UTC days (as LiteLLM keys its past days)",
			Type: "integer", Minimum: Bound(-24 * 60), Maximum: Bound(24 * 60)},
		{Name: "api_key", Description: "Not supported: " + notPerKey + "; a 400 naming it"},
	}
	model := QueryParam{Name: "model", Description: "Only this model: provider/model as in breakdown.models (or the model without its provider)"}
	routes := []dailyActivityRoute{
		{path: "/user/daily/activity", by: usagelog.SpendByModel,
			summary: "LiteLLM's user daily activity: this key's spend, tokens and requests per day (with its virtual keys') from the durable daily spend, broken down per model and provider; no api_key, model group, user or prompt-cache figures (not kept)",
			params:  []QueryParam{model, {Name: "user_id", Description: "Not supported: the daily spend is not kept per user; a 400 naming it"}},
			refused: map[string]string{"user_id": "the daily spend is not kept per user here (a virtual key's user_id is a label of the key)"}},
		{path: "/team/daily/activity", by: usagelog.SpendByModel,
			summary: "LiteLLM's team daily activity: the daily spend is not kept per team, so it answers this key's whole spend per day (every virtual key's, in a team or not) as /user/daily/activity does, its entities empty; team_ids or exclude_team_ids are a 400",
			params: []QueryParam{model, {Name: "team_ids", Description: "Not supported: the daily spend is not kept per team; a 400 naming it"},
				{Name: "exclude_team_ids", Description: "Not supported: the daily spend is not kept per team; a 400 naming it"}},
			refused: map[string]string{"team_ids": "the daily spend is not kept per team here", "exclude_team_ids": "the daily spend is not kept per team here"}},
		{path: "/tag/daily/activity", by: usagelog.SpendByTag,
			summary: "LiteLLM's tag daily activity: the spend, tokens and requests of this key's requests per day and request tag (with its virtual keys') from the durable daily spend, per tag in breakdown.entities; a request naming several tags counts in each; no model, provider or api_key breakdown (the tags' totals are not kept per model or key)",
			params: []QueryParam{{Name: "tags", Description: "Only these tags, comma-separated (default: every tag but the batches' own batch:…)"},
				{Name: "model", Description: "Not supported: the tags' totals are not kept per model; a 400 naming it"}},
			refused: map[string]string{"model": "the daily spend by tag is not kept per model here (GET /user/daily/activity?model= reads the spend per model)"}},
	}
	for _, rt := range routes {
		query := append(slices.Clone(common), rt.params...)
		s.Handle(Route{Method: "GET", Path: rt.path, Summary: rt.summary, Tags: []string{"LiteLLM compatibility", "Usage"},
			Response: litellmDailyActivity{}, Query: query,
			Errors: map[int]string{
				400: "start_date or end_date missing or not YYYY-MM-DD, end_date before start_date or more than 365 days after it, a bad page or page_size, a parameter not supported here (api_key, …) or unknown: the message and param name it",
				403: "a virtual key or job key called (as /global/spend/logs: the daily spend is its owner's, every key's)"}},
			func(w http.ResponseWriter, r *http.Request) error {
				q, err := readDailyActivityQuery(r.URL.Query(), rt, query)
				if err != nil {
					return err
				}
				rows, err := roll.Spend(r.Context(), owner(r), q.from, q.to, rt.by)
				if err != nil {
					return fmt.Errorf("server: reading the daily spend: %w", err)
				}
				writeJSON(w, http.StatusOK, dailyActivity(rows, rt.by, q))
				return nil
			})
	}
}

// readDailyActivityQuery parses and checks a daily activity query; params are the route's.
func readDailyActivityQuery(v url.Values, rt dailyActivityRoute, params []QueryParam) (dailyActivityQuery, error) {
	q := dailyActivityQuery{page: 1, pageSize: dailyActivityDefaultPageSize}
	var unknown []string
	for name, vs := range v {
		if !slices.ContainsFunc(vs, func(s string) bool { return s != "" }) {
			continue
		}
		if name == "api_key" {
			return q, litellmInvalid(name, "api_key: %s", notPerKey)
		}
		if why, ok := rt.refused[name]; ok {
			return q, litellmInvalid(name, "%s: %s", name, why)
		}
		if !slices.ContainsFunc(params, func(p QueryParam) bool { return p.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		names := make([]string, 0, len(params))
		for _, p := range params {
			if p.Name != "api_key" && rt.refused[p.Name] == "" {
				names = append(names, p.Name)
			}
		}
		return q, litellmInvalid(unknown[0], "unknown query parameter %s: %s takes %s", strings.Join(unknown, ", "), rt.path, strings.Join(names, ", "))
	}
	start, end := v.Get("start_date"), v.Get("end_date")
	if start == "" || end == "" {
		param := "start_date"
		if start != "" {
			param = "end_date"
		}
		return q, litellmInvalid(param, "Please provide start_date and end_date (YYYY-MM-DD)")
	}
	var err error
	if q.from, err = time.Parse(time.DateOnly, start); err != nil {
		return q, litellmInvalid("start_date", "start_date: Invalid date format, expected YYYY-MM-DD, got %q", start)
	}
	if q.to, err = time.Parse(time.DateOnly, end); err != nil {
		return q, litellmInvalid("end_date", "end_date: Invalid date format, expected YYYY-MM-DD, got %q", end)
	}
	if q.to.Before(q.from) {
		return q, litellmInvalid("end_date", "end_date: must be on or after start_date, got %q and %q", start, end)
	}
	if q.to.Sub(q.from) >= usagelog.MaxSpendDays*24*time.Hour {
		return q, litellmInvalid("end_date", "end_date: at most %d days after start_date", usagelog.MaxSpendDays-1)
	}
	if p := v.Get("page"); p != "" {
		if q.page, err = strconv.Atoi(p); err != nil || q.page < 1 {
			return q, litellmInvalid("page", "page: must be an integer of at least 1, got %q", p)
		}
	}
	if p := v.Get("page_size"); p != "" {
		if q.pageSize, err = strconv.Atoi(p); err != nil || q.pageSize < 1 || q.pageSize > dailyActivityMaxPageSize {
			return q, litellmInvalid("page_size", "page_size: must be an integer from 1 to %d, got %q", dailyActivityMaxPageSize, p)
		}
	}
	if tz := v.Get("timezone"); tz != "" {
		if n, err := strconv.Atoi(tz); err != nil || n < -24*60 || n > 24*60 {
			return q, litellmInvalid("timezone", "timezone: must be a UTC offset in minutes (-1440 to 1440), got %q", tz)
		}
	}
	q.model = v.Get("model")
	if tags := v.Get("tags"); tags != "" {
		q.names = completions.SplitTags(tags)
	}
	return q, nil
}

// dailyActivity sums rows (the daily spend grouped by, usagelog.SpendByModel or
// SpendByTag) into LiteLLM's daily activity answer: the days with any request of q, newest
// first, the page q asks for, and the totals of every day.
func dailyActivity(rows []usagelog.SpendRow, by string, q dailyActivityQuery) litellmDailyActivity {
	days := map[string]*litellmDailySpend{}
	var total litellmSpendMetrics
	for _, row := range rows {
		name := row.Model
		if by == usagelog.SpendByTag {
			name = row.Tag
			if q.names == nil && strings.HasPrefix(name, completions.BatchTagPrefix) {
				continue // the batches' own tags, as /tag/list leaves them out
			}
			if q.names != nil && !slices.Contains(q.names, name) {
				continue
			}
		} else if q.model != "" && name != q.model && modelWithoutProvider(name) != q.model {
			continue
		}
		d := days[row.Day]
		if d == nil {
			d = &litellmDailySpend{Date: row.Day, Breakdown: newLiteLLMBreakdown()}
			days[row.Day] = d
		}
		d.Metrics.add(row.DayTotals)
		total.add(row.DayTotals)
		if by == usagelog.SpendByTag {
			addTo(d.Breakdown.Entities, name, row.DayTotals)
			continue
		}
		provider := "unknown" // LiteLLM's provider of a request without one
		if name != usagelog.NoModel {
			addTo(d.Breakdown.Models, name, row.DayTotals)
			if p, _, ok := strings.Cut(name, "/"); ok {
				provider = p
			}
		}
		addTo(d.Breakdown.Providers, provider, row.DayTotals)
	}
	dates := make([]string, 0, len(days))
	for day := range days {
		dates = append(dates, day)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dates)))
	pages := max(1, (len(dates)+q.pageSize-1)/q.pageSize)
	out := litellmDailyActivity{Results: []litellmDailySpend{}, Metadata: litellmDailySpendMetadata{
		TotalSpend: total.Spend, TotalPromptTokens: total.PromptTokens, TotalCompletionTokens: total.CompletionTokens,
		TotalTokens: total.TotalTokens, TotalAPIRequests: total.APIRequests, TotalSuccessfulRequests: total.SuccessfulRequests,
		TotalFailedRequests: total.FailedRequests, Page: q.page, TotalPages: pages, HasMore: q.page < pages}}
	if lo := (q.page - 1) * q.pageSize; lo < len(dates) {
		for _, day := range dates[lo:min(lo+q.pageSize, len(dates))] {
			out.Results = append(out.Results, *days[day])
		}
	}
	return out
}

// modelWithoutProvider is a provider/model name's model part (the name itself without a
// provider).
func modelWithoutProvider(name string) string {
	if _, m, ok := strings.Cut(name, "/"); ok {
		return m
	}
	return name
}
