package server

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// dailyActivityServer is spendServer with the rollup's clock set by the returned func: the
// requests made after a call count in that day.
func dailyActivityServer(t *testing.T) (*httptest.Server, *Server, func(time.Time)) {
	t.Helper()
	prices, err := providers.ParseCatalog([]byte(`{"ok": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now().UTC()
	setNow := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := newTestStore(t)
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour, Now: clock})
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: prices, Store: st, Observer: roll})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey, completionsOtherKey}}, nil)
	for _, o := range []Option{Completions(g), Spend(roll)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s, setNow
}

// dailyActivityAnswer reads a daily activity answer.
func dailyActivityAnswer(t *testing.T, s *Server, key, path string) litellmDailyActivity {
	t.Helper()
	r := do(t, s, "GET", path, key, "")
	var a litellmDailyActivity
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &a) != nil {
		t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
	}
	return a
}

// TestLiteLLMDailyActivity: requests made through the gateway on two days (by the operator
// and its virtual key, tagged or not, one failing) come back from /user/daily/activity,
// /team/daily/activity and /tag/daily/activity per day, newest first, with their spend,
// tokens and requests, per model and provider (the user and team routes) or per tag (the tag
// route), and the totals of the period; model and tags filter, page and page_size page the
// days; another operator sees only its own; a virtual key is refused.
func TestLiteLLMDailyActivity(t *testing.T) {
	hs, s, setNow := dailyActivityServer(t)
	vk := litellmGenerate(t, s, `{}`)
	day1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)

	cost := func(a chatAnswer) float64 {
		return float64(a.Usage.PromptTokens)*0.001 + float64(a.Usage.CompletionTokens)*0.002
	}
	setNow(day1)
	a1 := chatOK(t, hs.URL, testKey, "openai/ok", `"metadata":{"tags":["eng"]},`)
	setNow(day2)
	a2 := chatOK(t, hs.URL, testKey, "openai/ok", `"metadata":{"tags":["eng"]},`)
	a3 := chatOK(t, hs.URL, vk.Key, "openai/ok", `"metadata":{"tags":["eng","web"]},`)
	a4 := chatOK(t, hs.URL, testKey, "openai/free", "")
	if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/down","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode < 400 {
		t.Fatalf("openai/down: %d %s", resp.StatusCode, b)
	}
	chatOK(t, hs.URL, completionsOtherKey, "openai/ok", `"metadata":{"tags":["eng"]},`)

	const period = "?start_date=2026-03-01&end_date=2026-03-02"
	for _, path := range []string{"/user/daily/activity", "/team/daily/activity"} {
		a := dailyActivityAnswer(t, s, testKey, path+period)
		if len(a.Results) != 2 || a.Results[0].Date != "2026-03-02" || a.Results[1].Date != "2026-03-01" {
			t.Fatalf("%s: the two days, newest first: %+v", path, a.Results)
		}
		d2, d1 := a.Results[0], a.Results[1]
		if m := d2.Metrics; m.APIRequests != 4 || m.FailedRequests != 1 || m.SuccessfulRequests != 3 || math.Abs(m.Spend-cost(a2)-cost(a3)) > 1e-9 ||
			m.PromptTokens != int64(a2.Usage.PromptTokens+a3.Usage.PromptTokens+a4.Usage.PromptTokens) || m.TotalTokens != m.PromptTokens+m.CompletionTokens {
			t.Fatalf("%s: day 2 %+v", path, m)
		}
		if m := d1.Metrics; m.APIRequests != 1 || m.SuccessfulRequests != 1 || math.Abs(m.Spend-cost(a1)) > 1e-9 {
			t.Fatalf("%s: day 1 %+v", path, m)
		}
		b := d2.Breakdown
		if b.Models["openai/ok"].Metrics.APIRequests != 2 || b.Models["openai/free"].Metrics.APIRequests != 1 || b.Models["openai/free"].Metrics.Spend != 0 ||
			b.Models["openai/down"].Metrics.FailedRequests != 1 || len(b.Models) != 3 {
			t.Fatalf("%s: models %+v", path, b.Models)
		}
		if pm := b.Providers["openai"].Metrics; len(b.Providers) != 1 || pm.APIRequests != 4 || pm.FailedRequests != 1 || math.Abs(pm.Spend-d2.Metrics.Spend) > 1e-9 {
			t.Fatalf("%s: providers %+v", path, b.Providers)
		}
		if b.APIKeys == nil || len(b.APIKeys) != 0 || len(b.Entities) != 0 || len(b.ModelGroups) != 0 {
			t.Fatalf("%s: not kept, so empty: %+v", path, b)
		}
		md := a.Metadata
		if md.TotalAPIRequests != 5 || md.TotalFailedRequests != 1 || md.TotalSuccessfulRequests != 4 || math.Abs(md.TotalSpend-cost(a1)-cost(a2)-cost(a3)) > 1e-9 ||
			md.Page != 1 || md.TotalPages != 1 || md.HasMore {
			t.Fatalf("%s: metadata %+v", path, md)
		}
	}

	// model: provider/model or the model alone; the day's totals are the model's.
	for _, m := range []string{"openai/ok", "ok"} {
		a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&model="+m)
		if a.Metadata.TotalAPIRequests != 3 || len(a.Results) != 2 || a.Results[0].Metrics.APIRequests != 2 || len(a.Results[0].Breakdown.Models) != 1 {
			t.Fatalf("model=%s: %+v", m, a)
		}
	}
	// One day, and paging: page_size 1 answers the newest day, page 2 the other.
	if a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity?start_date=2026-03-01&end_date=2026-03-01"); len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 {
		t.Fatalf("day 1 only: %+v", a)
	}
	p1 := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&page_size=1")
	p2 := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&page_size=1&page=2")
	p3 := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&page_size=1&page=3&timezone=-120")
	if len(p1.Results) != 1 || p1.Results[0].Date != "2026-03-02" || !p1.Metadata.HasMore || p1.Metadata.TotalPages != 2 || p1.Metadata.TotalAPIRequests != 5 ||
		len(p2.Results) != 1 || p2.Results[0].Date != "2026-03-01" || p2.Metadata.HasMore || p2.Metadata.Page != 2 ||
		len(p3.Results) != 0 || p3.Metadata.HasMore {
		t.Fatalf("pages: %+v / %+v / %+v", p1, p2, p3)
	}

	// Per tag: a request naming two tags counts in each; tags narrows.
	a := dailyActivityAnswer(t, s, testKey, "/tag/daily/activity"+period)
	if len(a.Results) != 2 {
		t.Fatalf("tags: %+v", a)
	}
	d2 := a.Results[0]
	if e := d2.Breakdown.Entities; len(e) != 2 || e["eng"].Metrics.APIRequests != 2 || e["web"].Metrics.APIRequests != 1 ||
		math.Abs(e["web"].Metrics.Spend-cost(a3)) > 1e-9 || d2.Metrics.APIRequests != 3 || len(d2.Breakdown.Models) != 0 {
		t.Fatalf("tags of day 2: %+v", d2)
	}
	if a := dailyActivityAnswer(t, s, testKey, "/tag/daily/activity"+period+"&tags=web,nosuch"); len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 ||
		len(a.Results[0].Breakdown.Entities) != 1 {
		t.Fatalf("tags=web: %+v", a)
	}

	// Another operator sees its own request only; a virtual key is refused.
	if a := dailyActivityAnswer(t, s, completionsOtherKey, "/user/daily/activity"+period); a.Metadata.TotalAPIRequests != 1 || len(a.Results) != 1 {
		t.Fatalf("the other operator: %+v", a)
	}
	for _, path := range []string{"/user/daily/activity", "/team/daily/activity", "/tag/daily/activity"} {
		if r := do(t, s, "GET", path+period, vk.Key, ""); r.status != http.StatusForbidden {
			t.Fatalf("%s with a virtual key: %d %s", path, r.status, r.raw)
		}
	}
}

// TestLiteLLMDailyActivityBadQuery: a missing or bad date, a bad page, a parameter the
// daily spend cannot answer (api_key, user_id, team_ids, a tag route's model) or an unknown
// one is a 400 in LiteLLM's envelope naming it.
func TestLiteLLMDailyActivityBadQuery(t *testing.T) {
	_, s, _ := dailyActivityServer(t)
	const ok = "start_date=2026-03-01&end_date=2026-03-02"
	for _, c := range []struct{ path, query, param string }{
		{"/user/daily/activity", "", "start_date"},
		{"/user/daily/activity", "start_date=2026-03-01", "end_date"},
		{"/user/daily/activity", "start_date=03/01/2026&end_date=2026-03-02", "start_date"},
		{"/team/daily/activity", "start_date=2026-03-01&end_date=tomorrow", "end_date"},
		{"/tag/daily/activity", "start_date=2026-03-02&end_date=2026-03-01", "end_date"},
		{"/user/daily/activity", "start_date=2024-01-01&end_date=2026-03-01", "end_date"},
		{"/user/daily/activity", ok + "&page=0", "page"},
		{"/user/daily/activity", ok + "&page_size=1001", "page_size"},
		{"/user/daily/activity", ok + "&timezone=CET", "timezone"},
		{"/user/daily/activity", ok + "&api_key=vk_x", "api_key"},
		{"/user/daily/activity", ok + "&user_id=u1", "user_id"},
		{"/team/daily/activity", ok + "&team_ids=t1,t2", "team_ids"},
		{"/team/daily/activity", ok + "&exclude_team_ids=t1", "exclude_team_ids"},
		{"/tag/daily/activity", ok + "&model=openai/ok", "model"},
		{"/tag/daily/activity", ok + "&team_ids=t1", "team_ids"},
		{"/user/daily/activity", ok + "&tags=eng", "tags"},
		{"/user/daily/activity", ok + "&colour=red", "colour"},
	} {
		r := do(t, s, "GET", c.path+"?"+c.query, testKey, "")
		wantLiteLLMError(t, r, http.StatusBadRequest, c.param)
		if e, _ := r.body["error"].(map[string]any); e["param"] != c.param {
			t.Fatalf("%s?%s: param %v, want %s (%s)", c.path, c.query, e["param"], c.param, r.raw)
		}
	}
}
