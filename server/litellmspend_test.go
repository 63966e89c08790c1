package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// spendLogRowT is a /spend/logs row as the tests read it.
type spendLogRowT struct {
	RequestID           string         `json:"request_id"`
	CallType            string         `json:"call_type"`
	APIKey              string         `json:"api_key"`
	Spend               float64        `json:"spend"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	StartTime           time.Time      `json:"startTime"`
	EndTime             time.Time      `json:"endTime"`
	CompletionStartTime *time.Time     `json:"completionStartTime"`
	Model               string         `json:"model"`
	ModelGroup          *string        `json:"model_group"`
	CustomLLMProvider   *string        `json:"custom_llm_provider"`
	User                *string        `json:"user"`
	Metadata            map[string]any `json:"metadata"`
	CacheHit            string         `json:"cache_hit"`
	RequestTags         []string       `json:"request_tags"`
	TeamID              *string        `json:"team_id"`
	EndUser             *string        `json:"end_user"`
	Status              string         `json:"status"`
}

// spendLogs reads GET /spend/logs?query as key and fails unless it answers 200.
func spendLogs(t *testing.T, s *Server, key, query string) []spendLogRowT {
	t.Helper()
	r := do(t, s, "GET", "/spend/logs?"+query, key, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /spend/logs?%s: %d %s", query, r.status, r.raw)
	}
	var rows []spendLogRowT
	if err := json.Unmarshal([]byte(r.raw), &rows); err != nil {
		t.Fatalf("GET /spend/logs?%s: %v: %s", query, err, r.raw)
	}
	return rows
}

// chatAnswer is what the tests read of a chat completion.
type chatAnswer struct {
	ID    string `json:"id"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// chatOK makes a chat completion of key for model through the scripted upstream and
// returns its answer, failing unless it answers 200.
func chatOK(t *testing.T, url, key, model, extra string) chatAnswer {
	t.Helper()
	resp, b := post(t, url+"/v1/chat/completions", key, `{"model":"`+model+`",`+extra+`"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat %s: %d %s", model, resp.StatusCode, b)
	}
	var a chatAnswer
	if err := json.Unmarshal(b, &a); err != nil || !strings.HasPrefix(a.ID, "chatcmpl-") || a.Usage.TotalTokens == 0 {
		t.Fatalf("chat answer %s (%v)", b, err)
	}
	return a
}

// TestLiteLLMSpendLogs: requests made through the gateway by two virtual keys and by the
// operator key itself are listed by GET /spend/logs in LiteLLM's SpendLogs rows, newest
// first, with the id each was answered with, its key, cost, tokens, model and provider,
// and its key's user, team and alias; another operator's request is not among them.
func TestLiteLLMSpendLogs(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	team := litellmTeamNew(t, s, `{"team_id":"core","team_alias":"Core"}`)
	a := litellmGenerate(t, s, `{"key_alias":"alpha","user_id":"ann@example.com","team_id":"`+team.TeamID+`"}`)
	b := litellmGenerate(t, s, `{"key_alias":"beta"}`)

	ansA := chatOK(t, hs.URL, a.Key, "openai/ok", `"metadata":{"tags":["feature:search"]},`)
	chatOK(t, hs.URL, b.Key, "openai/ok", "")
	chatOK(t, hs.URL, testKey, "openai/ok", "")
	if code, body := chatStatus(t, hs.URL, testKey, "openai/down"); code == http.StatusOK {
		t.Fatalf("openai/down answered: %s", body)
	}
	chatOK(t, hs.URL, completionsOtherKey, "openai/ok", "")

	rows := spendLogs(t, s, testKey, "")
	if len(rows) != 4 {
		t.Fatalf("%d rows, want the operator's 4 requests: %+v", len(rows), rows)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].StartTime.After(rows[i-1].StartTime) {
			t.Fatalf("not newest first: %+v", rows)
		}
	}
	if rows[0].Status != "failure" || rows[0].APIKey == a.Token || rows[0].Spend != 0 || rows[0].Metadata["error_information"] == nil {
		t.Fatalf("the failed request (newest): %+v", rows[0])
	}
	var row spendLogRowT
	for _, r := range rows {
		if r.RequestID == ansA.ID {
			row = r
		}
	}
	if row.RequestID == "" {
		t.Fatalf("no row has request_id %s (the id alpha was answered with): %+v", ansA.ID, rows)
	}
	// The catalogue of keysServer: ok costs 0.001 per prompt token, 0.002 per completion token.
	wantSpend := float64(ansA.Usage.PromptTokens)*0.001 + float64(ansA.Usage.CompletionTokens)*0.002
	switch {
	case row.APIKey != a.Token, row.CallType != "acompletion", row.Status != "success", row.CacheHit != "False":
		t.Fatalf("key, call type, status or cache_hit: %+v", row)
	case math.Abs(row.Spend-wantSpend) > 1e-12 || wantSpend == 0:
		t.Fatalf("spend %v, want %v", row.Spend, wantSpend)
	case row.PromptTokens != ansA.Usage.PromptTokens || row.CompletionTokens != ansA.Usage.CompletionTokens || row.TotalTokens != ansA.Usage.TotalTokens:
		t.Fatalf("tokens %+v, answer's usage %+v", row, ansA.Usage)
	case row.Model != "ok" || row.CustomLLMProvider == nil || *row.CustomLLMProvider != "openai":
		t.Fatalf("model %q provider %v", row.Model, row.CustomLLMProvider)
	case row.User == nil || *row.User != "ann@example.com" || row.TeamID == nil || *row.TeamID != team.TeamID:
		t.Fatalf("user or team: %+v", row)
	case row.Metadata["user_api_key_alias"] != "alpha" || row.Metadata["user_api_key"] != a.Token || row.Metadata["switchyard"] == nil:
		t.Fatalf("metadata %v", row.Metadata)
	case len(row.RequestTags) != 1 || row.RequestTags[0] != "feature:search":
		t.Fatalf("request_tags %v", row.RequestTags)
	case row.EndTime.Before(row.StartTime) || row.StartTime.IsZero():
		t.Fatalf("startTime %v endTime %v", row.StartTime, row.EndTime)
	case row.ModelGroup == nil || *row.ModelGroup != "openai/ok" || row.EndUser != nil || row.CompletionStartTime != nil:
		t.Fatalf("model_group is the model asked for; end_user (none sent) and completionStartTime (not streamed) are null: %+v", row)
	}
	// The request of the operator key itself carries its owner id, as do its own filters.
	own := spendLogs(t, s, testKey, "api_key="+url.QueryEscape(testKey))
	if len(own) != 2 || own[0].APIKey != own[1].APIKey || !strings.HasPrefix(own[0].APIKey, "key_") || own[0].User != nil || own[0].TeamID != nil {
		t.Fatalf("the operator key's own requests: %+v", own)
	}
	if again := spendLogs(t, s, testKey, "api_key="+own[0].APIKey); len(again) != 2 {
		t.Fatalf("api_key=%s: %d rows", own[0].APIKey, len(again))
	}
}

// TestLiteLLMSpendLogsFilters: api_key (token, key, LiteLLM's hashed token), request_id
// (as answered, bare, or the usage id), user_id, team_id and the dates each keep only their
// requests; with both dates summarize (the default) answers LiteLLM's spend per day.
func TestLiteLLMSpendLogsFilters(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	team := litellmTeamNew(t, s, `{"team_id":"core"}`)
	a := litellmGenerate(t, s, `{"user_id":"ann@example.com","team_id":"`+team.TeamID+`"}`)
	b := litellmGenerate(t, s, `{}`)
	ansA := chatOK(t, hs.URL, a.Key, "openai/ok", "")
	chatOK(t, hs.URL, a.Key, "openai/ok", "")
	chatOK(t, hs.URL, b.Key, "openai/ok", "")

	hashed := sha256.Sum256([]byte(a.Key))
	for _, ref := range []string{a.Token, a.Key, hex.EncodeToString(hashed[:])} {
		rows := spendLogs(t, s, testKey, "api_key="+url.QueryEscape(ref))
		if len(rows) != 2 || rows[0].APIKey != a.Token || rows[1].APIKey != a.Token {
			t.Fatalf("api_key=%s: %+v", ref, rows)
		}
	}
	if rows := spendLogs(t, s, testKey, "api_key=sk-not-a-key-here"); len(rows) != 0 {
		t.Fatalf("an unknown api_key lists %d rows", len(rows))
	}
	byID := spendLogs(t, s, testKey, "request_id="+ansA.ID)
	if len(byID) != 1 || byID[0].RequestID != ansA.ID {
		t.Fatalf("request_id=%s: %+v", ansA.ID, byID)
	}
	usageID := byID[0].Metadata["switchyard"].(map[string]any)["id"].(float64)
	for _, id := range []string{strings.TrimPrefix(ansA.ID, "chatcmpl-"), "msg_" + strings.TrimPrefix(ansA.ID, "chatcmpl-"), fmt.Sprint(usageID)} {
		if rows := spendLogs(t, s, testKey, "request_id="+id); len(rows) != 1 || rows[0].RequestID != ansA.ID {
			t.Fatalf("request_id=%s: %+v", id, rows)
		}
	}
	if rows := spendLogs(t, s, testKey, "user_id=ann@example.com"); len(rows) != 2 || rows[0].APIKey != a.Token {
		t.Fatalf("user_id: %+v", rows)
	}
	if rows := spendLogs(t, s, testKey, "team_id=core"); len(rows) != 2 || rows[1].APIKey != a.Token {
		t.Fatalf("team_id: %+v", rows)
	}
	if rows := spendLogs(t, s, testKey, "user_id=bob"); len(rows) != 0 {
		t.Fatalf("user_id=bob: %+v", rows)
	}

	now := time.Now().UTC()
	yesterday, tomorrow := now.AddDate(0, 0, -1).Format(time.DateOnly), now.AddDate(0, 0, 1).Format(time.DateOnly)
	if rows := spendLogs(t, s, testKey, "start_date="+tomorrow); len(rows) != 0 {
		t.Fatalf("start_date tomorrow: %+v", rows)
	}
	if rows := spendLogs(t, s, testKey, "end_date="+yesterday); len(rows) != 0 {
		t.Fatalf("end_date yesterday: %+v", rows)
	}
	window := "start_date=" + yesterday + "&end_date=" + tomorrow
	all := spendLogs(t, s, testKey, window+"&summarize=false")
	if len(all) != 3 {
		t.Fatalf("summarize=false: %+v", all)
	}
	if rows := spendLogs(t, s, testKey, "start_date="+url.QueryEscape(all[2].StartTime.Format(time.RFC3339Nano))+"&summarize=false"); len(rows) != 3 {
		t.Fatalf("start_date at the oldest request's instant: %d rows", len(rows))
	}
	if rows := spendLogs(t, s, testKey, "end_date="+url.QueryEscape(all[2].StartTime.Add(-time.Second).Format(time.DateTime))); len(rows) != 0 {
		t.Fatalf("end_date before the oldest request: %d rows", len(rows))
	}

	var total, totalA float64
	for _, r := range all {
		total += r.Spend
		if r.APIKey == a.Token {
			totalA += r.Spend
		}
	}
	r := do(t, s, "GET", "/spend/logs?"+window, testKey, "")
	var days []map[string]any
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &days) != nil || len(days) == 0 {
		t.Fatalf("summarized: %d %s", r.status, r.raw)
	}
	var spend, spendA, spendOK, spendAnn float64
	for _, d := range days {
		spend += d["spend"].(float64)
		if v, ok := d[a.Token].(float64); ok {
			spendA += v
		}
		spendOK += d["models"].(map[string]any)["ok"].(float64)
		spendAnn += d["users"].(map[string]any)["ann@example.com"].(float64)
		if _, err := time.Parse(time.DateOnly, d["startTime"].(string)); err != nil {
			t.Fatalf("startTime of a day: %v", d)
		}
	}
	if total == 0 || math.Abs(spend-total) > 1e-12 || math.Abs(spendOK-total) > 1e-12 || math.Abs(spendA-totalA) > 1e-12 || math.Abs(spendAnn-totalA) > 1e-12 {
		t.Fatalf("summarized %v: spend %v (want %v), alpha %v / ann %v (want %v)", days, spend, total, spendA, spendAnn, totalA)
	}
}

// TestLiteLLMSpendLogsScoping: a virtual key sees only its own requests and is refused
// another key's; another operator key sees only its own; no key is a 401.
func TestLiteLLMSpendLogsScoping(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	a := litellmGenerate(t, s, `{}`)
	b := litellmGenerate(t, s, `{}`)
	chatOK(t, hs.URL, a.Key, "openai/ok", "")
	chatOK(t, hs.URL, b.Key, "openai/ok", "")
	chatOK(t, hs.URL, testKey, "openai/ok", "")
	chatOK(t, hs.URL, completionsOtherKey, "openai/ok", "")

	for _, q := range []string{"", "api_key=" + a.Token, "api_key=" + url.QueryEscape(a.Key)} {
		if rows := spendLogs(t, s, a.Key, q); len(rows) != 1 || rows[0].APIKey != a.Token {
			t.Fatalf("virtual key alpha (%s): %+v", q, rows)
		}
	}
	for _, ref := range []string{b.Token, b.Key, testKey} {
		r := do(t, s, "GET", "/spend/logs?api_key="+url.QueryEscape(ref), a.Key, "")
		wantLiteLLMError(t, r, http.StatusForbidden, "api_key")
	}
	if rows := spendLogs(t, s, completionsOtherKey, ""); len(rows) != 1 || strings.HasPrefix(rows[0].APIKey, "vk_") {
		t.Fatalf("the other operator key: %+v", rows)
	}
	if rows := spendLogs(t, s, completionsOtherKey, "api_key="+a.Token); len(rows) != 0 {
		t.Fatalf("another operator's virtual key: %+v", rows)
	}
	if r := do(t, s, "GET", "/spend/logs", "", ""); r.status != http.StatusUnauthorized {
		t.Fatalf("no key: %d %s", r.status, r.raw)
	}
}

// TestLiteLLMSpendLogsBadParams: a bad date, summarize, an end before the start or an
// unknown parameter is a 400 in LiteLLM's envelope naming the parameter; the route is in
// the OpenAPI document.
func TestLiteLLMSpendLogsBadParams(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for q, param := range map[string]string{
		"start_date=2024-13-01":                       "start_date",
		"end_date=yesterday":                          "end_date",
		"summarize=maybe":                             "summarize",
		"start_date=2024-02-02&end_date=2024-02-01":   "end_date",
		"limit=10":                                    "limit",
		"api_key=vk_0000000000000000&page_size=10000": "page_size",
	} {
		r := do(t, s, "GET", "/spend/logs?"+q, testKey, "")
		wantLiteLLMError(t, r, http.StatusBadRequest, param)
		if e := r.body["error"].(map[string]any); e["param"] != param {
			t.Fatalf("%s: param %v, want %s", q, e["param"], param)
		}
	}
	doc := do(t, s, "GET", "/api/v1/openapi.json", "", "").raw
	if !strings.Contains(doc, `"/spend/logs"`) {
		t.Fatal("/spend/logs is not in the OpenAPI document")
	}
}

// TestLiteLLMGlobalSpendLogs: GET /global/spend/logs answers the operator's spend per day
// (its own requests and its virtual keys') from the durable daily spend, as LiteLLM's
// MonthlyGlobalSpend rows; a virtual key is refused (the route is the admin's), another
// operator sees none of it, api_key= narrows it to one key's days, and another parameter is
// a 400.
func TestLiteLLMGlobalSpendLogs(t *testing.T) {
	prices, err := providers.ParseCatalog([]byte(`{"ok": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}`))
	if err != nil {
		t.Fatal(err)
	}
	hs, s := spendServer(t, newTestStore(t), "openai", prices)
	vk := litellmGenerate(t, s, `{}`)
	var want float64
	for _, key := range []string{testKey, vk.Key, vk.Key} {
		a := chatOK(t, hs.URL, key, "openai/ok", "")
		want += float64(a.Usage.PromptTokens)*0.001 + float64(a.Usage.CompletionTokens)*0.002
	}
	chatOK(t, hs.URL, completionsOtherKey, "openai/ok", "")

	r := do(t, s, "GET", "/global/spend/logs", testKey, "")
	var days []struct {
		Date  string  `json:"date"`
		Spend float64 `json:"spend"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &days) != nil || len(days) == 0 {
		t.Fatalf("GET /global/spend/logs: %d %s", r.status, r.raw)
	}
	var got float64
	for _, d := range days {
		if _, err := time.Parse(time.DateOnly, d.Date); err != nil || d.Spend <= 0 {
			t.Fatalf("day %+v", d)
		}
		got += d.Spend
	}
	if want == 0 || math.Abs(got-want) > 1e-9 {
		t.Fatalf("spend %v, want %v (%s)", got, want, r.raw)
	}
	var other []map[string]any
	if r := do(t, s, "GET", "/global/spend/logs", completionsOtherKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &other) != nil ||
		len(other) != 1 || math.Abs(other[0]["spend"].(float64)-want/3) > 1e-9 {
		t.Fatalf("the other operator's own spend only: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/global/spend/logs", vk.Key, ""); r.status != http.StatusForbidden {
		t.Fatalf("a virtual key: %d %s", r.status, r.raw)
	}
	// api_key= one key's days: the virtual key's two requests (by its token or the key
	// itself), the operator's own one, none for another operator's key.
	sum := func(q string) float64 {
		t.Helper()
		r := do(t, s, "GET", "/global/spend/logs?"+q, testKey, "")
		var days []struct {
			Spend float64 `json:"spend"`
		}
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &days) != nil {
			t.Fatalf("GET /global/spend/logs?%s: %d %s", q, r.status, r.raw)
		}
		var total float64
		for _, d := range days {
			total += d.Spend
		}
		return total
	}
	for q, want := range map[string]float64{"api_key=" + vk.Token: want * 2 / 3, "api_key=" + vk.Key: want * 2 / 3, "api_key=" + testKey: want / 3, "api_key=" + completionsOtherKey: 0,
		// Repeated, the last one is taken, as on LiteLLM (FastAPI): scalarQuery.
		"api_key=" + testKey + "&api_key=" + vk.Token: want * 2 / 3} {
		if got := sum(q); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: spend %v, want %v", q, got, want)
		}
	}
	for q, param := range map[string]string{"start_date=2024-01-01": "start_date"} {
		r := do(t, s, "GET", "/global/spend/logs?"+q, testKey, "")
		wantLiteLLMError(t, r, http.StatusBadRequest, param)
	}
}
