package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// LiteLLM's proxy lists its request log (the LiteLLM_SpendLogs table) at GET /spend/logs;
// dashboards and cost scripts read it. The route here answers it from the gateway's request
// history (package usagelog), in LiteLLM's row fields, with the parameters of LiteLLM's
// current /spend/logs: api_key, user_id, request_id, start_date, end_date and summarize
// (and team_id, which LiteLLM's paginated log routes take); GET /spend/logs/v2 pages the same
// rows as LiteLLM's does. With option RequestHistory the history is the store's (every
// replica's requests, kept across restarts for the history's retention, as LiteLLM keeps its
// LiteLLM_SpendLogs table); without it, what this process recorded since it started (in
// memory, bounded). GET /api/v1/usage/spend is the durable daily spend.

// litellmSpendLog is one request as LiteLLM's /spend/logs lists it (a LiteLLM_SpendLogs row).
type litellmSpendLog struct {
	RequestID           string         `json:"request_id" jsonschema:"description=The id the caller was answered with (chatcmpl- and the answer's uuid) for a chat request; for other operations (and a request refused before any answer) its x-request-id (else its id in GET /api/v1/usage/requests). The request_id filter also takes the x-request-id (metadata.switchyard.request_id)"`
	CallType            string         `json:"call_type" jsonschema:"description=LiteLLM's call type: acompletion (chat on any surface) or aembedding or atranscription or atranslation or aspeech or arerank or amoderation or aimage_generation or aimage_edit or pass_through_endpoint (a provider pass-through request)"`
	APIKey              string         `json:"api_key" jsonschema:"description=The virtual key's token (vk_…) for a request made with a virtual key; else the calling key's owner id (key_…)"`
	Spend               float64        `json:"spend" jsonschema:"description=USD cost (0 when the model's price is unknown or the cache answered)"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	StartTime           time.Time      `json:"startTime" jsonschema:"description=When the request was received (UTC)"`
	EndTime             time.Time      `json:"endTime" jsonschema:"description=When it ended: startTime plus its latency"`
	CompletionStartTime *time.Time     `json:"completionStartTime" jsonschema:"description=When a stream's first fragment came; null when none came or not streamed"`
	Model               string         `json:"model" jsonschema:"description=The model that answered (or was tried last) without its provider; empty when none was tried"`
	ModelGroup          *string        `json:"model_group" jsonschema:"description=The model name the caller asked for: a model group's or the model it named; null when it named several (the native API's models list)"`
	CustomLLMProvider   *string        `json:"custom_llm_provider" jsonschema:"description=The provider of model; null when none was tried"`
	APIBase             *string        `json:"api_base" jsonschema:"description=The endpoint root of the provider that answered (or was tried last) without credentials (user info and query removed\\, as /model/info shows it); null when none was tried or its adapter does not say"`
	User                *string        `json:"user" jsonschema:"description=The virtual key's metadata.user_id as the key is now (the history keeps no user); null without one"`
	Metadata            map[string]any `json:"metadata" jsonschema:"description=user_api_key and user_api_key_alias and user_api_key_team_id and user_api_key_org_id (its own organization or its team's) and user_api_key_user_id (as the key is now) and status and error_information and usage_object (prompt_tokens and completion_tokens and total_tokens; prompt_tokens_details.audio_tokens and completion_tokens_details.audio_tokens: the audio parts of each\\, null details without audio); switchyard holds the request as GET /api/v1/usage/requests lists it (attempts and latency and cache and outcome)"`
	CacheHit            string         `json:"cache_hit" jsonschema:"enum=True,enum=False,description=True when the response cache answered"`
	RequestTags         []string       `json:"request_tags" jsonschema:"description=The request's tags (its tags or metadata.tags or X-Switchyard-Tags)"`
	TeamID              *string        `json:"team_id" jsonschema:"description=The virtual key's team as the key is now; null without one"`
	EndUser             *string        `json:"end_user" jsonschema:"description=The end user the request was made for (the body's user or litellm_metadata.user or metadata.user_id or an x-litellm-end-user-id or x-litellm-customer-id header); null without one"`
	Status              string         `json:"status" jsonschema:"enum=success,enum=failure"`
}

// litellmSpendDay is one day of /spend/logs with summarize (LiteLLM's legacy answer when
// both dates are given): the day's spend in all, per user and per model, and per api_key
// as members of the day itself.
type litellmSpendDay struct {
	StartTime string             `json:"startTime" jsonschema:"description=The day YYYY-MM-DD (UTC)"`
	Spend     float64            `json:"spend" jsonschema:"description=USD spent that day"`
	Users     map[string]float64 `json:"users" jsonschema:"description=USD per user (the key's metadata.user_id; empty string for none)"`
	Models    map[string]float64 `json:"models" jsonschema:"description=USD per model"`
	// Keys is the spend per api_key, written as members of the day as LiteLLM does.
	Keys map[string]float64 `json:"-"`
}

// MarshalJSON writes d with its per-key spend as members of the object, as LiteLLM does.
func (d litellmSpendDay) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(d.Keys)+4)
	for k, v := range d.Keys {
		m[k] = v
	}
	m["startTime"], m["spend"], m["users"], m["models"] = d.StartTime, d.Spend, d.Users, d.Models
	return json.Marshal(m)
}

// litellmSpendPath reports the spend paths answered in LiteLLM's error envelope.
func litellmSpendPath(path string) bool {
	return path == "/spend/logs" || path == "/spend/logs/v2" || path == "/global/spend/logs"
}

// litellmCallTypes maps usagelog's operations onto LiteLLM's call types.
var litellmCallTypes = map[string]string{
	"":                 "acompletion",
	"embeddings":       "aembedding",
	"transcription":    "atranscription",
	"translation":      "atranslation",
	"speech":           "aspeech",
	"rerank":           "arerank",
	"moderation":       "amoderation",
	"image_generation": "aimage_generation",
	"image_edit":       "aimage_edit",
	"pass_through":     "pass_through_endpoint",
}

// litellmSpendParams are the query parameters /spend/logs takes.
var litellmSpendParams = []string{"api_key", "user_id", "request_id", "team_id", "start_date", "end_date", "summarize"}

// litellmSpendRoutes registers GET /spend/logs and /spend/logs/v2 over the request history
// (s.requests(rec)).
func (s *Server) litellmSpendRoutes(rec *usagelog.Recorder) {
	s.Handle(Route{Method: "GET", Path: "/spend/logs", Summary: "LiteLLM's spend logs: this key's recent requests in LiteLLM_SpendLogs rows newest first, at most the 10,000 newest (a virtual key sees its own); with start_date and end_date and summarize (the default) LiteLLM's spend per day",
		Tags: []string{"LiteLLM compatibility", "Usage"}, VirtualKeys: true,
		OneOf: []any{[]litellmSpendLog{}, []litellmSpendDay{}},
		ResponseHeaders: []HeaderParam{{Name: spendLogsTruncatedHeader,
			Description: "true when more than 10,000 requests matched: the answer holds the 10,000 newest (as LiteLLM's); /spend/logs/v2 pages them all"}},
		Query: []QueryParam{
			{Name: "api_key", Description: "Only the requests of this key: a virtual key's token (vk_…) or the key itself or its SHA-256 hex (LiteLLM's hashed token); the calling key's own requests with its owner id (key_…) or itself"},
			{Name: "user_id", Description: "Only the requests of virtual keys whose metadata.user_id is this (as the keys are now)"},
			{Name: "request_id", Description: "Only this request: the id it was answered with (chatcmpl-… or msg_… or the bare uuid), its x-request-id, or its id in GET /api/v1/usage/requests"},
			{Name: "team_id", Description: "Only the requests of virtual keys of this team (as the keys are now)"},
			{Name: "start_date", Description: "Only requests received from then: YYYY-MM-DD (midnight UTC) or YYYY-MM-DD HH:MM:SS (UTC) or RFC 3339"},
			{Name: "end_date", Description: "Only requests received until then: YYYY-MM-DD (the whole day UTC) or YYYY-MM-DD HH:MM:SS (UTC) or RFC 3339"},
			{Name: "summarize", Description: "With both dates: true (default) answers the spend per day; false the requests themselves; without both dates it has no effect", Type: "boolean"},
		},
		Errors: map[int]string{
			400: "a bad or unknown parameter: the message and param name it",
			403: "a virtual key named another key in api_key (a virtual key sees only its own requests)",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			q, err := readSpendLogsQuery(r.URL.Query())
			if err != nil {
				return err
			}
			if q.summarize && q.from != nil && q.until != nil {
				// The days are summed as the rows are read: none is held.
				var days spendDays
				err := s.eachSpendLog(r.Context(), r, rec, q, func(row litellmSpendLog) bool { days.add(row); return true })
				if err != nil {
					return err
				}
				writeJSON(w, http.StatusOK, days.summary(*q.until, time.Now().UTC()))
				return nil
			}
			// At most spendLogsMaxRows rows, the newest, as LiteLLM's legacy /spend/logs
			// truncates: the header says when more matched.
			rows := []litellmSpendLog{}
			err = s.eachSpendLog(r.Context(), r, rec, q, func(row litellmSpendLog) bool {
				rows = append(rows, row)
				return len(rows) <= spendLogsMaxRows
			})
			if err != nil {
				return err
			}
			if len(rows) > spendLogsMaxRows {
				rows = rows[:spendLogsMaxRows]
				w.Header().Set(spendLogsTruncatedHeader, "true")
			}
			writeJSON(w, http.StatusOK, rows)
			return nil
		})
}

// spendLogsQuery is a parsed /spend/logs query.
type spendLogsQuery struct {
	apiKey, userID, requestID, teamID string
	// from and until bound startTime: from ≤ startTime < until.
	from, until *time.Time
	summarize   bool
	// status keeps only the rows of this status (success or failure): /spend/logs/v2's
	// status_filter.
	status string
}

// readSpendLogsQuery parses and checks the query of /spend/logs.
func readSpendLogsQuery(v url.Values) (spendLogsQuery, error) {
	var unknown []string
	for name, vs := range v {
		if !slices.Contains(litellmSpendParams, name) && slices.ContainsFunc(vs, func(s string) bool { return s != "" }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return spendLogsQuery{}, paramError(unknown[0], "unknown query parameter %s: /spend/logs takes %s", strings.Join(unknown, ", "), strings.Join(litellmSpendParams, ", "))
	}
	q := spendLogsQuery{apiKey: v.Get("api_key"), userID: v.Get("user_id"), requestID: v.Get("request_id"), teamID: v.Get("team_id")}
	var err error
	if q.from, err = spendLogsTime(v.Get("start_date"), "start_date", false); err != nil {
		return q, err
	}
	if q.until, err = spendLogsTime(v.Get("end_date"), "end_date", true); err != nil {
		return q, err
	}
	if q.from != nil && q.until != nil && !q.from.Before(*q.until) {
		return q, paramError("end_date", "end_date: must be after start_date, got %q and %q", v.Get("start_date"), v.Get("end_date"))
	}
	summarize := v.Get("summarize")
	if summarize == "" {
		summarize = "true"
	}
	if q.summarize, err = litellmQueryBool(summarize, "summarize"); err != nil {
		return q, err
	}
	return q, nil
}

// spendLogsTime parses a date parameter of /spend/logs; a day alone is its midnight (UTC),
// or with end the next midnight (the whole day is included). nil when v is "".
func spendLogsTime(v, name string, end bool) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return &d, nil
	}
	for _, layout := range []string{time.DateTime, "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.Parse(layout, v); err == nil {
			t = t.UTC()
			if end {
				t = t.Add(time.Nanosecond) // until is exclusive: the instant itself is included
			}
			return &t, nil
		}
	}
	return nil, paramError(name, "%s: must be a day YYYY-MM-DD or a time YYYY-MM-DD HH:MM:SS (UTC) or RFC 3339, got %q", name, v)
}

// spendLogsPlan is how the rows of a spendLogsQuery are read from the request history.
type spendLogsPlan struct {
	who  string
	byID map[string]virtualKey // who's virtual keys by id (the caller's own for a virtual key)
	// teamOrgs is teamOrganizations of who's teams: the organization a key of a team is in.
	teamOrgs map[string]string
	// rq selects the requests: through the scope index of one virtual key when the caller
	// is one or the filters name one (api_key, or a user_id or team_id only one key has).
	rq usagelog.RequestQuery
	// keep checks each row for what rq cannot select (a user or team of several
	// keys, the caller's own key); nil when every request rq selects is a row.
	keep func(*litellmSpendLog) bool
	// none: the filters select no row (an api_key, user_id or team_id no key of who's has).
	none bool
}

// spendLogsPlan plans the rows of q the caller may see: a virtual key's own requests,
// every request of its owner for another key.
func (s *Server) spendLogsPlan(ctx context.Context, r *http.Request, q spendLogsQuery) (spendLogsPlan, error) {
	who := owner(r)
	p, _ := PrincipalFrom(ctx)
	vk, virtual := p.Scope.(virtualKeyScope) // the only scoped keys the route lets in
	tag := ""
	var keys []virtualKey
	if virtual {
		tag = vk.Tag
		if k, err := s.keyInfo(ctx, who, vk.KeyID); err == nil {
			keys = []virtualKey{*k}
		}
	} else {
		var err error
		if keys, err = s.listKeys(ctx, who); err != nil {
			return spendLogsPlan{}, err
		}
	}
	plan := spendLogsPlan{who: who, byID: make(map[string]virtualKey, len(keys)), teamOrgs: s.organizationsOfTeams(ctx, who)}
	for _, k := range keys {
		plan.byID[k.ID] = k
	}
	var checks []func(*litellmSpendLog) bool
	if q.apiKey != "" {
		apiKey := s.spendLogsAPIKey(ctx, who, q.apiKey)
		if virtual && apiKey != vk.KeyID {
			e := Errorf(http.StatusForbidden, KindForbidden, "api_key: a virtual key sees only its own requests (%s)", vk.KeyID)
			e.Param = "api_key"
			return plan, e
		}
		switch {
		case apiKey == "-":
			plan.none = true
		case virtual:
			// tag is the key's own scope already.
		case apiKey == who:
			// The key's own requests: the rows that name no virtual key.
			checks = append(checks, func(row *litellmSpendLog) bool { return row.APIKey == who })
		default:
			tag = "key:" + apiKey // a row names a virtual key exactly when the request had its scope
		}
	}
	if q.userID != "" || q.teamID != "" {
		// A row has a user or team only through its virtual key (as the key is now): the
		// keys that have them are the scopes whose requests can match.
		var scopes []string
		for _, k := range keys {
			if u, _ := k.Metadata["user_id"].(string); (q.userID == "" || u == q.userID) && (q.teamID == "" || k.TeamID == q.teamID) {
				scopes = append(scopes, "key:"+k.ID)
			}
		}
		switch {
		case len(scopes) == 0:
			plan.none = true
		case tag != "":
			plan.none = !slices.Contains(scopes, tag)
		case len(scopes) == 1:
			tag = scopes[0]
		default:
			checks = append(checks, func(row *litellmSpendLog) bool {
				return (q.userID == "" || (row.User != nil && *row.User == q.userID)) &&
					(q.teamID == "" || (row.TeamID != nil && *row.TeamID == q.teamID))
			})
		}
	}
	if len(checks) > 0 {
		plan.keep = func(row *litellmSpendLog) bool {
			for _, c := range checks {
				if !c(row) {
					return false
				}
			}
			return true
		}
	}
	// A row's status is its request's (usagelog's StatusSuccess or StatusFailure): the
	// history lists the failures through their status index, the successes through its
	// listing without those, keys only either way.
	plan.rq = usagelog.RequestQuery{Owner: who, Tag: tag, Status: q.status}
	if q.from != nil {
		plan.rq.From = *q.from
	}
	if q.until != nil {
		plan.rq.Until = *q.until
	}
	if q.requestID != "" {
		// IDs narrow the history to the requests the id can name (read through its lookup
		// index); Match keeps exactly those spendLogsRequestIs accepts.
		plan.rq.IDs = spendLogsRequestIDs(q.requestID)
		plan.rq.Match = func(req *usagelog.Request) bool { return spendLogsRequestIs(*req, q.requestID) }
	}
	return plan, nil
}

// spendLogsMaxRows bounds the rows GET /spend/logs answers (the newest), as LiteLLM's
// legacy /spend/logs truncates to its 10,000 most recent: one call reads at most this
// many requests (and one more), whatever the history holds. /spend/logs/v2 pages the rest.
const spendLogsMaxRows = 10_000

// spendLogsTruncatedHeader is set to true on a /spend/logs answer cut at spendLogsMaxRows
// (LiteLLM's header).
const spendLogsTruncatedHeader = "X-Litellm-Spend-Logs-Truncated"

// eachSpendLog calls fn with the rows of q the caller may see, newest first, until fn
// returns false: a virtual key's own requests, every request of its owner for another key.
func (s *Server) eachSpendLog(ctx context.Context, r *http.Request, rec *usagelog.Recorder, q spendLogsQuery, fn func(litellmSpendLog) bool) error {
	plan, err := s.spendLogsPlan(ctx, r, q)
	if err != nil || plan.none {
		return err
	}
	err = s.requests(rec).Each(ctx, plan.rq, func(req usagelog.Request) bool {
		row := plan.row(req)
		if plan.keep == nil || plan.keep(&row) {
			return fn(row)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("server: reading the request history: %w", err)
	}
	return nil
}

// spendLogsAPIKey is the api_key of the rows ref names: a virtual key's token, or who
// itself for the calling key (its owner id, the key itself or its SHA-256 hex); "-", which
// no row has, when ref names no key of who's.
func (s *Server) spendLogsAPIKey(ctx context.Context, who, ref string) string {
	if ref == who {
		return who
	}
	if ownerOf(keyRefHash(ref)) == who {
		return who
	}
	if rec, err := s.litellmKeyOf(ctx, who, ref); err == nil {
		return rec.ID
	}
	if strings.HasPrefix(ref, "vk_") {
		return ref // a deleted key's requests stay in the history under its token
	}
	return "-"
}

// spendLogsRequestIDs are the ids a request spendLogsRequestIs accepts for id may have
// as its usagelog ID, RequestID or ResponseID: id itself, and id without its surface's
// prefixes.
func spendLogsRequestIDs(id string) []string {
	bare := id
	for _, prefix := range []string{"chatcmpl-", "msg_", "cmpl-"} {
		bare = strings.TrimPrefix(bare, prefix)
	}
	if bare == id {
		return []string{id}
	}
	return []string{id, bare}
}

// spendLogsRequestIs reports whether id names req: its row's request_id, the x-request-id
// it was answered with, the id of its answer on any surface (chatcmpl-…, msg_…, or the
// bare uuid), or its usagelog id.
func spendLogsRequestIs(req usagelog.Request, id string) bool {
	if id == strconv.FormatInt(req.ID, 10) || req.RequestID != "" && id == req.RequestID {
		return true
	}
	if req.ResponseID == "" {
		return false
	}
	for _, prefix := range []string{"chatcmpl-", "msg_", "cmpl-"} {
		id = strings.TrimPrefix(id, prefix)
	}
	return id == req.ResponseID
}

// row is req as a LiteLLM_SpendLogs row, its key described as it is now.
func (p spendLogsPlan) row(req usagelog.Request) litellmSpendLog {
	who, keys, teamOrgs := p.who, p.byID, p.teamOrgs
	row := litellmSpendLog{RequestID: strconv.FormatInt(req.ID, 10), CallType: litellmCallTypes[req.Operation], APIKey: who,
		Spend: req.CostUSD, TotalTokens: req.TotalTokens, PromptTokens: req.PromptTokens, CompletionTokens: req.CompletionTokens,
		StartTime: req.Start, EndTime: req.Start.Add(time.Duration(req.LatencyMS * float64(time.Millisecond))),
		CacheHit: "False", RequestTags: req.Tags, Status: "success"}
	if row.CallType == "" {
		row.CallType = req.Operation
	}
	if req.ResponseID != "" {
		row.RequestID = "chatcmpl-" + req.ResponseID
	} else if req.RequestID != "" {
		row.RequestID = req.RequestID
	}
	if req.TTFTMS > 0 && req.Stream {
		t := req.Start.Add(time.Duration(req.TTFTMS * float64(time.Millisecond)))
		row.CompletionStartTime = &t
	}
	if req.Model != usagelog.NoModel && req.Model != "" {
		provider, model, ok := strings.Cut(req.Model, "/")
		if ok {
			row.Model, row.CustomLLMProvider = model, &provider
		} else {
			row.Model = req.Model
		}
	}
	if req.Cache == completions.CacheHit {
		row.CacheHit = "True"
	}
	for _, f := range []struct {
		v   string
		dst **string
	}{{req.ModelGroup, &row.ModelGroup}, {req.APIBase, &row.APIBase}, {req.EndUser, &row.EndUser}} {
		if f.v != "" {
			v := f.v
			*f.dst = &v
		}
	}
	if row.RequestTags == nil {
		row.RequestTags = []string{}
	}
	if req.Outcome != completions.RequestOK {
		row.Status = "failure"
	}
	md := map[string]any{"status": row.Status, "switchyard": req, "usage_object": spendUsageObject(req)}
	if id, ok := strings.CutPrefix(req.Tag, "key:"); ok {
		row.APIKey = id
		if k, ok := keys[id]; ok {
			if k.Name != "" {
				md["user_api_key_alias"] = k.Name
			}
			if u, ok := k.Metadata["user_id"].(string); ok && u != "" {
				row.User = &u
				md["user_api_key_user_id"] = u
			}
			if k.TeamID != "" {
				team := k.TeamID
				row.TeamID = &team
				md["user_api_key_team_id"] = team
			}
			if org := cmp.Or(k.OrganizationID, teamOrgs[k.TeamID]); org != "" {
				md["user_api_key_org_id"] = org
			}
		}
	}
	md["user_api_key"] = row.APIKey
	if req.Error != "" {
		md["error_information"] = map[string]any{"error_message": req.Error}
	}
	row.Metadata = md
	return row
}

// spendUsageObject is req's usage as LiteLLM's spend logs keep it (metadata.usage_object,
// its Usage as the answer gave it): the token counts, and the audio parts of each in
// prompt_tokens_details.audio_tokens and completion_tokens_details.audio_tokens (null
// details when there is no audio, as LiteLLM logs a usage without details).
func spendUsageObject(req usagelog.Request) map[string]any {
	details := func(audio int) any {
		if audio == 0 {
			return nil
		}
		return map[string]int{"audio_tokens": audio}
	}
	return map[string]any{"prompt_tokens": req.PromptTokens, "completion_tokens": req.CompletionTokens, "total_tokens": req.TotalTokens,
		"prompt_tokens_details": details(req.PromptAudioTokens), "completion_tokens_details": details(req.CompletionAudioTokens)}
}

// spendDays sums rows per day (UTC) as they are read, for LiteLLM's summarized
// /spend/logs. The zero value is empty.
type spendDays struct {
	days        map[string]*litellmSpendDay
	first, last time.Time
}

// add counts row in its day.
func (s *spendDays) add(row litellmSpendLog) {
	if s.days == nil {
		s.days = map[string]*litellmSpendDay{}
		s.first, s.last = row.StartTime, row.StartTime
	}
	s.first, s.last = minTime(s.first, row.StartTime), maxTime(s.last, row.StartTime)
	key := row.StartTime.UTC().Format(time.DateOnly)
	d := s.days[key]
	if d == nil {
		d = &litellmSpendDay{StartTime: key, Users: map[string]float64{}, Models: map[string]float64{}, Keys: map[string]float64{}}
		s.days[key] = d
	}
	user := ""
	if row.User != nil {
		user = *row.User
	}
	d.Spend += row.Spend
	d.Users[user] += row.Spend
	d.Models[row.Model] += row.Spend
	d.Keys[row.APIKey] += row.Spend
}

// summary is LiteLLM's summarized /spend/logs of the rows added: per day (UTC), from the
// first day with a request through the last day of [from, until) that is not after now
// (LiteLLM fills the days up to end_date; future days are left out here), the spend in
// all, per user, per model and per api_key. No request: no day.
func (s *spendDays) summary(until, now time.Time) []litellmSpendDay {
	out := []litellmSpendDay{}
	if s.days == nil {
		return out
	}
	const day = 24 * time.Hour
	last := maxTime(s.last, minTime(until.Add(-time.Nanosecond), now))
	for t := s.first.UTC().Truncate(day); !t.After(last.UTC().Truncate(day)); t = t.Add(day) {
		key := t.Format(time.DateOnly)
		if d := s.days[key]; d != nil {
			out = append(out, *d)
		} else {
			out = append(out, litellmSpendDay{StartTime: key, Users: map[string]float64{}, Models: map[string]float64{}})
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// litellmGlobalSpendDay is one day of GET /global/spend/logs (LiteLLM's MonthlyGlobalSpend
// view: a row per day with spend).
type litellmGlobalSpendDay struct {
	Date  string  `json:"date" jsonschema:"description=The day YYYY-MM-DD (UTC)"`
	Spend float64 `json:"spend" jsonschema:"description=USD spent that day by this key and its virtual keys"`
}

// litellmGlobalSpendRoutes registers GET /global/spend/logs over the durable daily spend.
func (s *Server) litellmGlobalSpendRoutes(roll *usagelog.Rollup) {
	s.Handle(Route{Method: "GET", Path: "/global/spend/logs", Summary: "LiteLLM's global spend logs: this key's spend per day over the last 30 days (with its virtual keys'; api_key= one key's) from the durable daily spend; days without spend are left out",
		Tags: []string{"LiteLLM compatibility", "Usage"}, Response: []litellmGlobalSpendDay{},
		Query:  []QueryParam{{Name: "api_key", Description: "Only this key's spend per day: a virtual key (its token vk_… as /spend/logs shows it\\, or the key itself) or this key itself (its own requests\\, not its virtual keys'); a key that is not this key's answers no days"}},
		Errors: map[int]string{400: "api_key or another parameter given: the message and param name it", 403: "a virtual key or job key called (as on LiteLLM the route is the admin's)"}},
		func(w http.ResponseWriter, r *http.Request) error {
			apiKey := ""
			for name, vs := range r.URL.Query() {
				if !slices.ContainsFunc(vs, func(v string) bool { return v != "" }) {
					continue
				}
				if name == "api_key" { // one value: a repeat is reduced to its last (scalarQuery)
					apiKey = vs[len(vs)-1]
					continue
				}
				return paramError(name, "unknown query parameter %s: /global/spend/logs takes only api_key", name)
			}
			who := owner(r)
			to := time.Now().UTC().Truncate(24 * time.Hour)
			by := usagelog.SpendByModel
			if apiKey != "" {
				by = usagelog.SpendByKey
			}
			rows, err := roll.Spend(r.Context(), who, to.AddDate(0, 0, -30), to, by)
			if err != nil {
				return fmt.Errorf("server: reading the daily spend: %w", err)
			}
			if apiKey != "" {
				id := s.spendLogsAPIKey(r.Context(), who, apiKey) // "-" for no key of who's: no rows
				rows = slices.DeleteFunc(rows, func(row usagelog.SpendRow) bool { return row.Key != id && !(row.Key == "" && id == who) })
			}
			out := []litellmGlobalSpendDay{}
			for _, row := range rows {
				if n := len(out); n > 0 && out[n-1].Date == row.Day {
					out[n-1].Spend += row.CostUSD
				} else {
					out = append(out, litellmGlobalSpendDay{Date: row.Day, Spend: row.CostUSD})
				}
			}
			out = slices.DeleteFunc(out, func(d litellmGlobalSpendDay) bool { return d.Spend == 0 })
			writeJSON(w, http.StatusOK, out)
			return nil
		})
}
