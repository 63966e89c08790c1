package server

import (
	"context"
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
// (usagelog.Rollup), which keeps an owner's totals per day and model, tag, team, virtual
// key and user, and per user, key and model together (not per team and model, say): what it
// does not keep (per model group, prompt-cache tokens, the tags' or teams' combinations) is
// refused as a filter and left empty or zero in the answer, never made up.

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

// litellmKeyMetadata is LiteLLM's KeyMetadata: the key as it is now.
type litellmKeyMetadata struct {
	KeyAlias  *string `json:"key_alias" jsonschema:"description=The virtual key's name (null without one\\, and for the calling key's own requests)"`
	TeamID    *string `json:"team_id" jsonschema:"description=The virtual key's team"`
	UserID    *string `json:"user_id" jsonschema:"description=The virtual key's user_id"`
	KeyExists bool    `json:"key_exists" jsonschema:"description=false for a key deleted since"`
}

// litellmKeyMetric is LiteLLM's KeyMetricWithMetadata.
type litellmKeyMetric struct {
	Metrics  litellmSpendMetrics `json:"metrics"`
	Metadata litellmKeyMetadata  `json:"metadata"`
}

// litellmMetric is LiteLLM's MetricWithMetadata.
type litellmMetric struct {
	Metrics  litellmSpendMetrics `json:"metrics"`
	Metadata map[string]any      `json:"metadata" jsonschema:"description=On /team/daily/activity's entities the team's team_alias; else empty"`
	// APIKeyBreakdown is the entry's totals per key: on /user/daily/activity's models and
	// providers (from the user, key and model rows; empty on the days before they were
	// kept), else empty.
	APIKeyBreakdown map[string]litellmKeyMetric `json:"api_key_breakdown" jsonschema:"description=On /user/daily/activity's models and providers: per key\\, keyed as breakdown.api_keys (empty on the days before the daily spend was kept per model and key); else empty (not kept per tag or team and key)"`
}

// litellmBreakdown is LiteLLM's BreakdownMetrics: a day's totals per model, provider, …
type litellmBreakdown struct {
	MCPServers  map[string]litellmMetric    `json:"mcp_servers" jsonschema:"description=Always empty: the daily spend keeps no MCP calls"`
	Models      map[string]litellmMetric    `json:"models" jsonschema:"description=Per model that answered (or was tried last)\\, as provider/model; empty on /tag/daily/activity and /team/daily/activity (their totals are not kept per model)"`
	ModelGroups map[string]litellmMetric    `json:"model_groups" jsonschema:"description=Always empty: the daily spend keeps the model that answered\\, not the name asked for"`
	Providers   map[string]litellmMetric    `json:"providers" jsonschema:"description=Per provider: the provider part of each model's provider/model (unknown for requests that tried none); empty on /tag/daily/activity"`
	Endpoints   map[string]litellmMetric    `json:"endpoints" jsonschema:"description=Always empty: the daily spend is not kept per endpoint"`
	APIKeys     map[string]litellmKeyMetric `json:"api_keys" jsonschema:"description=On /user/daily/activity per key (a virtual key's id\\, the calling key's owner id for its own requests); else empty"`
	Entities    map[string]litellmMetric    `json:"entities" jsonschema:"description=On /tag/daily/activity per tag\\, on /team/daily/activity per team id; else empty"`
}

// newLiteLLMBreakdown is a breakdown with every map empty (LiteLLM answers {} for none).
func newLiteLLMBreakdown() litellmBreakdown {
	return litellmBreakdown{MCPServers: map[string]litellmMetric{}, Models: map[string]litellmMetric{}, ModelGroups: map[string]litellmMetric{},
		Providers: map[string]litellmMetric{}, Endpoints: map[string]litellmMetric{}, APIKeys: map[string]litellmKeyMetric{}, Entities: map[string]litellmMetric{}}
}

// addTo adds t to m's entry name; md is the entry's metadata when it is new (nil for
// none).
func addTo(m map[string]litellmMetric, name string, md map[string]any, t usagelog.DayTotals) {
	e, ok := m[name]
	if !ok {
		if md == nil {
			md = map[string]any{}
		}
		e = litellmMetric{Metadata: md, APIKeyBreakdown: map[string]litellmKeyMetric{}}
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
	// names are the tags (tag route) or team ids (team route) to read; nil for every one.
	names []string
	// exclude are the team ids the team route leaves out.
	exclude []string
	// apiKey is the user route's api_key ("" for every key).
	apiKey string
	// userID is the user route's user_id ("" for every user's requests and those of no
	// user), a user's virtual key's own user when it gives none.
	userID string
}

// dailyActivityRoute describes one of the three routes.
type dailyActivityRoute struct {
	path, summary string
	// params are the route's own query parameters besides the common ones, with their
	// documentation; refused are LiteLLM parameters it answers with a 400 when given, with why.
	params  []QueryParam
	refused map[string]string
	// virtualKeys lets virtual keys with a user_id call the route (for their user's days).
	virtualKeys bool
	// pageSize is the route's page_size default, LiteLLM's.
	pageSize int
}

// LiteLLM's page_size defaults (50 days on /user/daily/activity, 10 on the team and tag
// routes) and dailyActivityMaxPageSize its bound on the user route (here on every route).
const (
	userDailyActivityPageSize    = 50
	teamTagDailyActivityPageSize = 10
	dailyActivityMaxPageSize     = 1000
)

// The daily activity routes.
const (
	userDailyActivity = "/user/daily/activity"
	teamDailyActivity = "/team/daily/activity"
	tagDailyActivity  = "/tag/daily/activity"
)

// litellmDailyActivityRoutes registers GET /user/daily/activity, /team/daily/activity and
// /tag/daily/activity over roll.
func (s *Server) litellmDailyActivityRoutes(roll *usagelog.Rollup) {
	common := []QueryParam{
		{Name: "start_date", Required: true, Description: "The first day YYYY-MM-DD (UTC)"},
		{Name: "end_date", Required: true, Description: "The last day YYYY-MM-DD (UTC); at most 365 days after start_date"},
		{Name: "page", Description: "The page of days (default 1)", Type: "integer", Minimum: Bound(1)},
		{Name: "timezone", Description: "The caller's UTC offset in minutes (JavaScript's getTimezoneOffset); accepted and without effect: the days are UTC days (as LiteLLM keys its past days)",
			Type: "integer", Minimum: Bound(-24 * 60), Maximum: Bound(24 * 60)},
	}
	model := QueryParam{Name: "model", Description: "Only this model: provider/model as in breakdown.models (or the model without its provider)"}
	routes := []dailyActivityRoute{
		{path: userDailyActivity, virtualKeys: true, pageSize: userDailyActivityPageSize,
			summary: "LiteLLM's user daily activity: this key's spend, tokens and requests per day (with its virtual keys') from the durable daily spend, broken down per model and provider and per api key " +
				"(breakdown.api_keys keyed as /spend/logs shows api_key: a virtual key's id vk_…, the calling key's own requests under its owner id key_…; metadata.key_alias is the key's name) and per model and key (each model's and provider's api_key_breakdown); " +
				"model, api_key and user_id narrow the days to one model's, key's or user's requests (any of them together); a virtual key with a user_id (LiteLLM's internal user) sees its user's requests only, an operator any user's or every request; " +
				"the per-user totals, and the per model and key breakdown, are kept from this release on (the days before have none: empty breakdowns, and no days for user_id or two filters together); no model group or prompt-cache figures (not kept)",
			params: []QueryParam{model,
				{Name: "api_key", Description: "Only this key's requests, as /spend/logs takes it: a virtual key's id (vk_…), the key itself or its SHA-256 hex (LiteLLM's hashed token), or the calling key's owner id (key_…) or the key itself for its own requests"},
				{Name: "user_id", Description: "Only this user's requests (those of the virtual keys whose user_id it was when they were made); a virtual key with a user_id reads its own user's by default and may not name another (a 403), one without a user_id may not call the route"}}},
		{path: teamDailyActivity, pageSize: teamTagDailyActivityPageSize,
			summary: "LiteLLM's team daily activity: the spend, tokens and requests of this key's teams per day (the requests made with a team's virtual keys; the others do not count), per team id in breakdown.entities (metadata.team_alias the team's name); " +
				"team_ids narrows to these teams and exclude_team_ids leaves these out; no model, provider or api_key breakdown (the teams' totals are not kept per model or key); the days before team totals were kept have none",
			params: []QueryParam{
				{Name: "team_ids", Description: "Only these teams: team ids, comma-separated"},
				{Name: "exclude_team_ids", Description: "Not these teams: team ids, comma-separated"},
				{Name: "model", Description: "Not supported: the teams' totals are not kept per model; a 400 naming it"},
				{Name: "api_key", Description: "Not supported: the teams' totals are not kept per key (GET /user/daily/activity?api_key= answers one key's days); a 400 naming it"}},
			refused: map[string]string{"model": "the daily spend by team is not kept per model here (GET /user/daily/activity?model= reads the spend per model)",
				"api_key": "the daily spend by team is not kept per key here (GET /user/daily/activity?api_key= reads one key's days)"}},
		{path: tagDailyActivity, pageSize: teamTagDailyActivityPageSize,
			summary: "LiteLLM's tag daily activity: the spend, tokens and requests of this key's requests per day and request tag (with its virtual keys') from the durable daily spend, per tag in breakdown.entities; a request naming several tags counts in each; no model, provider or api_key breakdown (the tags' totals are not kept per model or key)",
			params: []QueryParam{{Name: "tags", Description: "Only these tags, comma-separated (default: every tag but the batches' own batch:…)"},
				{Name: "model", Description: "Not supported: the tags' totals are not kept per model; a 400 naming it"},
				{Name: "api_key", Description: "Not supported: the tags' totals are not kept per key (GET /user/daily/activity?api_key= answers one key's days); a 400 naming it"}},
			refused: map[string]string{"model": "the daily spend by tag is not kept per model here (GET /user/daily/activity?model= reads the spend per model)",
				"api_key": "the daily spend by tag is not kept per key here (GET /user/daily/activity?api_key= reads one key's days)"}},
	}
	for _, rt := range routes {
		query := append(slices.Clone(common), QueryParam{Name: "page_size", Description: fmt.Sprintf("Days per page (default %d, LiteLLM's on this route)", rt.pageSize),
			Type: "integer", Minimum: Bound(1), Maximum: Bound(dailyActivityMaxPageSize)})
		query = append(query, rt.params...)
		s.Handle(Route{Method: "GET", Path: rt.path, Summary: rt.summary, Tags: []string{"LiteLLM compatibility", "Usage"},
			Response: litellmDailyActivity{}, Query: query, VirtualKeys: rt.virtualKeys,
			Errors: map[int]string{
				400: "start_date or end_date missing or not YYYY-MM-DD, end_date before start_date or more than 365 days after it, a bad page or page_size, a parameter not supported here (a team or tag route's model or api_key) or unknown: the message and param name it",
				403: "a job key called, or a virtual key: on /user/daily/activity one without a user_id, or one naming another user_id than its own (LiteLLM: non-admin users can only view their own spend data); on the team and tag routes any"}},
			func(w http.ResponseWriter, r *http.Request) error {
				q, err := readDailyActivityQuery(r.URL.Query(), rt, query)
				if err != nil {
					return err
				}
				if err := virtualKeyDailyActivity(r, &q); err != nil {
					return err
				}
				a, err := s.dailyActivity(r.Context(), owner(r), roll, rt.path, q)
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, a)
				return nil
			})
	}
}

// virtualKeyDailyActivity applies LiteLLM's rule to a virtual key calling
// /user/daily/activity (the only daily activity route it may call): a key with a user_id
// (LiteLLM's internal user) sees its own user's days, user_id or not, and may not name
// another; one without a user_id may not read its owner's spend. An operator's key may
// name any user_id, or none for every request.
func virtualKeyDailyActivity(r *http.Request, q *dailyActivityQuery) error {
	p, _ := PrincipalFrom(r.Context())
	vk, virtual := p.Scope.(virtualKeyScope)
	switch {
	case !virtual:
		return nil
	case vk.UserID == "":
		return Errorf(http.StatusForbidden, KindForbidden, "this virtual key has no user_id: it may not read the daily activity of its owner's keys (a key made for a user reads its user's)")
	case q.userID == "":
		q.userID = vk.UserID
	case q.userID != vk.UserID:
		e := Errorf(http.StatusForbidden, KindForbidden, "user_id: Non-admin users can only view their own spend data (this key's user_id is %s)", vk.UserID)
		e.Param = "user_id"
		return e
	}
	return nil
}

// dailyActivity reads who's daily spend q asks of route path and sums it into LiteLLM's
// answer.
func (s *Server) dailyActivity(ctx context.Context, who string, roll *usagelog.Rollup, path string, q dailyActivityQuery) (litellmDailyActivity, error) {
	spend := func(by string) ([]usagelog.SpendRow, error) {
		rows, err := roll.Spend(ctx, who, q.from, q.to, by)
		if err != nil {
			return nil, fmt.Errorf("server: reading the daily spend: %w", err)
		}
		return rows, nil
	}
	b := activityDays{days: map[string]*litellmDailySpend{}}
	switch path {
	case tagDailyActivity:
		rows, err := spend(usagelog.SpendByTag)
		if err != nil {
			return litellmDailyActivity{}, err
		}
		for _, row := range rows {
			if q.names == nil && strings.HasPrefix(row.Tag, completions.BatchTagPrefix) {
				continue // the batches' own tags, as /tag/list leaves them out
			}
			if q.names != nil && !slices.Contains(q.names, row.Tag) {
				continue
			}
			addTo(b.count(row).Breakdown.Entities, row.Tag, nil, row.DayTotals)
		}
	case teamDailyActivity:
		rows, err := spend(usagelog.SpendByTeam)
		if err != nil {
			return litellmDailyActivity{}, err
		}
		teams, err := storedTeamsOf(ctx, s.cfg.Store, who)
		if err != nil {
			return litellmDailyActivity{}, fmt.Errorf("server: listing teams: %w", err)
		}
		alias := make(map[string]string, len(teams))
		for _, t := range teams {
			alias[t.TeamID] = t.Name
		}
		for _, row := range rows {
			if q.names != nil && !slices.Contains(q.names, row.Team) || slices.Contains(q.exclude, row.Team) {
				continue
			}
			var md map[string]any // a deleted team's: empty
			if name, ok := alias[row.Team]; ok {
				md = map[string]any{"team_alias": nil} // null for a team without a name, as LiteLLM's
				if name != "" {
					md["team_alias"] = name
				}
			}
			addTo(b.count(row).Breakdown.Entities, row.Team, md, row.DayTotals)
		}
	default: // userDailyActivity
		if err := s.userDailyActivity(ctx, who, roll, q, &b); err != nil {
			return litellmDailyActivity{}, err
		}
	}
	return b.answer(q), nil
}

// userDailyActivity sums who's daily spend into b as /user/daily/activity answers q, from
// one read of the rollup (so that every figure of the answer counts the same requests):
//
//   - the days' totals are the models' rows (the model's with model), the key's rows with
//     api_key, the user's with user_id, and the user, key and model rows when two of these
//     filters are given;
//   - breakdown.models and providers are the models' rows unless api_key or user_id is
//     given, then the user, key and model rows;
//   - breakdown.api_keys is the keys' rows unless model or user_id is given, then the user,
//     key and model rows;
//   - each model's and provider's api_key_breakdown is the user, key and model rows.
//
// The user, key and model rows are kept from the release after the user totals on: the
// breakdowns they make are empty on the days before.
func (s *Server) userDailyActivity(ctx context.Context, who string, roll *usagelog.Rollup, q dailyActivityQuery, b *activityDays) error {
	keyMeta, err := s.dailyActivityKeys(ctx, who)
	if err != nil {
		return err
	}
	groups, err := roll.SpendGroups(ctx, who, q.from, q.to, usagelog.SpendByKey, usagelog.SpendByModel, usagelog.SpendByUser, usagelog.SpendByUserKeyModel)
	if err != nil {
		return fmt.Errorf("server: reading the daily spend: %w", err)
	}
	keyID := "" // the api_key's row name: a virtual key's id, who for who's own requests
	if q.apiKey != "" {
		keyID = s.spendLogsAPIKey(ctx, who, q.apiKey) // "-" for no key of who's: no rows
	}
	keyName := func(row usagelog.SpendRow) string { // as api_keys names it
		if row.Key == "" {
			return who
		}
		return row.Key
	}
	modelOK := func(name string) bool {
		return q.model == "" || name == q.model || modelWithoutProvider(name) == q.model
	}
	crossOK := func(row usagelog.SpendRow) bool {
		return modelOK(row.Model) && (keyID == "" || keyName(row) == keyID) && (q.userID == "" || row.User == q.userID)
	}
	filters := 0
	for _, f := range []string{q.model, q.apiKey, q.userID} {
		if f != "" {
			filters++
		}
	}
	// The days' totals.
	switch {
	case filters > 1:
		for _, row := range groups[usagelog.SpendByUserKeyModel] {
			if crossOK(row) {
				b.count(row)
			}
		}
	case keyID != "":
		for _, row := range groups[usagelog.SpendByKey] {
			if keyName(row) == keyID {
				b.count(row)
			}
		}
	case q.userID != "":
		for _, row := range groups[usagelog.SpendByUser] {
			if row.User == q.userID {
				b.count(row)
			}
		}
	default:
		for _, row := range groups[usagelog.SpendByModel] {
			if modelOK(row.Model) {
				b.count(row)
			}
		}
	}
	// The breakdowns, on the days counted.
	modelsOfModels := q.apiKey == "" && q.userID == ""
	keysOfKeys := q.model == "" && q.userID == ""
	if modelsOfModels {
		for _, row := range groups[usagelog.SpendByModel] {
			if d := b.days[row.Day]; d != nil && modelOK(row.Model) {
				addModel(d, row, nil)
			}
		}
	}
	if keysOfKeys {
		for _, row := range groups[usagelog.SpendByKey] {
			if d := b.days[row.Day]; d != nil && (keyID == "" || keyName(row) == keyID) {
				b.addKey(d.Breakdown.APIKeys, row, who, keyMeta)
			}
		}
	}
	for _, row := range groups[usagelog.SpendByUserKeyModel] {
		d := b.days[row.Day]
		if d == nil || !crossOK(row) {
			continue
		}
		if !modelsOfModels {
			addModel(d, row, nil)
		}
		if !keysOfKeys {
			b.addKey(d.Breakdown.APIKeys, row, who, keyMeta)
		}
		addModel(d, row, func(e *litellmMetric) { b.addKey(e.APIKeyBreakdown, row, who, keyMeta) })
	}
	return nil
}

// addModel adds row (of a model) to d's models and providers; with breakdown, it calls it
// on the model's and the provider's entry instead.
func addModel(d *litellmDailySpend, row usagelog.SpendRow, breakdown func(*litellmMetric)) {
	provider := "unknown" // LiteLLM's provider of a request without one
	if row.Model != usagelog.NoModel {
		if p, _, ok := strings.Cut(row.Model, "/"); ok {
			provider = p
		}
		addEntry(d.Breakdown.Models, row.Model, row, breakdown)
	}
	addEntry(d.Breakdown.Providers, provider, row, breakdown)
}

// addEntry adds row to m's entry name, or calls breakdown on the entry (made when new).
func addEntry(m map[string]litellmMetric, name string, row usagelog.SpendRow, breakdown func(*litellmMetric)) {
	if breakdown == nil {
		addTo(m, name, nil, row.DayTotals)
		return
	}
	e, ok := m[name]
	if !ok {
		e = litellmMetric{Metadata: map[string]any{}, APIKeyBreakdown: map[string]litellmKeyMetric{}}
	}
	breakdown(&e)
	m[name] = e
}

// dailyActivityKeys is LiteLLM's KeyMetadata of who's virtual keys by id, and of who's own
// requests (under who).
func (s *Server) dailyActivityKeys(ctx context.Context, who string) (map[string]litellmKeyMetadata, error) {
	keys, err := s.listKeys(ctx, who)
	if err != nil {
		return nil, err
	}
	out := make(map[string]litellmKeyMetadata, len(keys)+1)
	for _, k := range keys {
		md := litellmKeyMetadata{KeyExists: true}
		if k.Name != "" {
			md.KeyAlias = &k.Name
		}
		if k.TeamID != "" {
			md.TeamID = &k.TeamID
		}
		if u, _ := k.Metadata["user_id"].(string); u != "" {
			md.UserID = &u
		}
		out[k.ID] = md
	}
	out[who] = litellmKeyMetadata{KeyExists: true}
	return out, nil
}

// activityDays sums rows into the days of a daily activity answer.
type activityDays struct {
	days  map[string]*litellmDailySpend
	total litellmSpendMetrics
}

// count adds row to its day's and the period's totals and returns its day.
func (b *activityDays) count(row usagelog.SpendRow) *litellmDailySpend {
	d := b.days[row.Day]
	if d == nil {
		d = &litellmDailySpend{Date: row.Day, Breakdown: newLiteLLMBreakdown()}
		b.days[row.Day] = d
	}
	d.Metrics.add(row.DayTotals)
	b.total.add(row.DayTotals)
	return d
}

// addKey adds a row of a key to keys (a day's api_keys, an entry's api_key_breakdown),
// under the key's id or, for who's own requests (row.Key ""), under who, as /spend/logs
// names them.
func (b *activityDays) addKey(keys map[string]litellmKeyMetric, row usagelog.SpendRow, who string, meta map[string]litellmKeyMetadata) {
	id := row.Key
	if id == "" {
		id = who
	}
	e, ok := keys[id]
	if !ok {
		e.Metadata = meta[id] // a deleted key's: no alias, key_exists false
	}
	e.Metrics.add(row.DayTotals)
	keys[id] = e
}

// answer is LiteLLM's daily activity answer of the days: those with any request, newest
// first, the page q asks for, and the totals of every day.
func (b *activityDays) answer(q dailyActivityQuery) litellmDailyActivity {
	dates := make([]string, 0, len(b.days))
	for day := range b.days {
		dates = append(dates, day)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dates)))
	pages := max(1, (len(dates)+q.pageSize-1)/q.pageSize)
	total := b.total
	out := litellmDailyActivity{Results: []litellmDailySpend{}, Metadata: litellmDailySpendMetadata{
		TotalSpend: total.Spend, TotalPromptTokens: total.PromptTokens, TotalCompletionTokens: total.CompletionTokens,
		TotalTokens: total.TotalTokens, TotalAPIRequests: total.APIRequests, TotalSuccessfulRequests: total.SuccessfulRequests,
		TotalFailedRequests: total.FailedRequests, Page: q.page, TotalPages: pages, HasMore: q.page < pages}}
	// A page past the last answers no days; checked before (page-1)*page_size, which a
	// large page would overflow.
	if q.page <= pages && len(dates) > 0 {
		lo := (q.page - 1) * q.pageSize
		for _, day := range dates[lo:min(lo+q.pageSize, len(dates))] {
			out.Results = append(out.Results, *b.days[day])
		}
	}
	return out
}

// readDailyActivityQuery parses and checks a daily activity query; params are the route's.
func readDailyActivityQuery(v url.Values, rt dailyActivityRoute, params []QueryParam) (dailyActivityQuery, error) {
	q := dailyActivityQuery{page: 1, pageSize: rt.pageSize}
	var unknown []string
	for name, vs := range v {
		if !slices.ContainsFunc(vs, func(s string) bool { return s != "" }) {
			continue
		}
		if why, ok := rt.refused[name]; ok {
			return q, paramError(name, "%s: %s", name, why)
		}
		if !slices.ContainsFunc(params, func(p QueryParam) bool { return p.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		names := make([]string, 0, len(params))
		for _, p := range params {
			if rt.refused[p.Name] == "" {
				names = append(names, p.Name)
			}
		}
		return q, paramError(unknown[0], "unknown query parameter %s: %s takes %s", strings.Join(unknown, ", "), rt.path, strings.Join(names, ", "))
	}
	start, end := v.Get("start_date"), v.Get("end_date")
	if start == "" || end == "" {
		param := "start_date"
		if start != "" {
			param = "end_date"
		}
		return q, paramError(param, "Please provide start_date and end_date (YYYY-MM-DD)")
	}
	var err error
	if q.from, err = time.Parse(time.DateOnly, start); err != nil {
		return q, paramError("start_date", "start_date: Invalid date format, expected YYYY-MM-DD, got %q", start)
	}
	if q.to, err = time.Parse(time.DateOnly, end); err != nil {
		return q, paramError("end_date", "end_date: Invalid date format, expected YYYY-MM-DD, got %q", end)
	}
	if q.to.Before(q.from) {
		return q, paramError("end_date", "end_date: must be on or after start_date, got %q and %q", start, end)
	}
	if q.to.Sub(q.from) >= usagelog.MaxSpendDays*24*time.Hour {
		return q, paramError("end_date", "end_date: at most %d days after start_date", usagelog.MaxSpendDays-1)
	}
	if p := v.Get("page"); p != "" {
		if q.page, err = strconv.Atoi(p); err != nil || q.page < 1 {
			return q, paramError("page", "page: must be an integer of at least 1, got %q", p)
		}
	}
	if p := v.Get("page_size"); p != "" {
		if q.pageSize, err = strconv.Atoi(p); err != nil || q.pageSize < 1 || q.pageSize > dailyActivityMaxPageSize {
			return q, paramError("page_size", "page_size: must be an integer from 1 to %d, got %q", dailyActivityMaxPageSize, p)
		}
	}
	if tz := v.Get("timezone"); tz != "" {
		if n, err := strconv.Atoi(tz); err != nil || n < -24*60 || n > 24*60 {
			return q, paramError("timezone", "timezone: must be a UTC offset in minutes (-1440 to 1440), got %q", tz)
		}
	}
	q.model, q.apiKey, q.userID = v.Get("model"), v.Get("api_key"), v.Get("user_id")
	if tags := v.Get("tags"); tags != "" {
		q.names = completions.SplitTags(tags)
	}
	if ids := v.Get("team_ids"); ids != "" {
		q.names = splitIDs(ids)
	}
	if ids := v.Get("exclude_team_ids"); ids != "" {
		q.exclude = splitIDs(ids)
	}
	return q, nil
}

// splitIDs are the ids of a comma-separated list, spaces around each trimmed, empty ones
// left out.
func splitIDs(s string) []string {
	ids := []string{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// modelWithoutProvider is a provider/model name's model part (the name itself without a
// provider).
func modelWithoutProvider(name string) string {
	if _, m, ok := strings.Cut(name, "/"); ok {
		return m
	}
	return name
}
