package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// dailyActivityServer is spendServer with the rollup's clock set by the returned func: the
// requests made after a call count in that day.
func dailyActivityServer(t *testing.T) (*httptest.Server, *Server, func(time.Time)) {
	t.Helper()
	hs, s, setNow, _ := dailyActivityServerOn(t, nil)
	return hs, s, setNow
}

// dailyActivityServerOn is dailyActivityServer on the test driver as wrap wraps it (nil:
// as it is), with its rollup.
func dailyActivityServerOn(t *testing.T, wrap func(store.Driver) store.Driver) (*httptest.Server, *Server, func(time.Time), *usagelog.Rollup) {
	t.Helper()
	prices, err := providers.ParseCatalog([]byte(`{"ok": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now().UTC()
	setNow := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d := newTestDriver(t)
	if wrap != nil {
		d = wrap(d)
	}
	st := store.New(d)
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
	return hs, s, setNow, roll
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
// and its virtual key, tagged or not, one failing) come back from /user/daily/activity and
// /tag/daily/activity per day, newest first, with their spend, tokens and requests, per
// model, provider and api key (the user route) or per tag (the tag
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
	for _, path := range []string{"/user/daily/activity"} {
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
		if own := b.APIKeys[ownerOfKey(t, testKey)]; len(b.APIKeys) != 2 || own.Metrics.APIRequests != 3 || own.Metrics.FailedRequests != 1 ||
			b.APIKeys[vk.Token].Metrics.APIRequests != 1 || math.Abs(b.APIKeys[vk.Token].Metrics.Spend-cost(a3)) > 1e-9 || !own.Metadata.KeyExists {
			t.Fatalf("%s: api keys %+v", path, b.APIKeys)
		}
		if len(b.Entities) != 0 || len(b.ModelGroups) != 0 {
			t.Fatalf("%s: not kept, so empty: %+v", path, b)
		}
		md := a.Metadata
		if md.TotalAPIRequests != 5 || md.TotalFailedRequests != 1 || md.TotalSuccessfulRequests != 4 || math.Abs(md.TotalSpend-cost(a1)-cost(a2)-cost(a3)) > 1e-9 ||
			md.Page != 1 || md.TotalPages != 1 || md.HasMore {
			t.Fatalf("%s: metadata %+v", path, md)
		}
	}

	// model: provider/model or the model alone; the day's totals are the model's. Repeated,
	// the last value is the filter (as on LiteLLM), an empty first one hiding nothing.
	for _, m := range []string{"openai/ok", "ok", "&model=openai/ok", "openai/free&model=ok"} {
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
// daily spend cannot answer (a team or tag route's model or api_key, team_ids but on the
// team route) or an unknown
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
		{"/user/daily/activity", ok + "&team_ids=t1", "team_ids"},
		{"/team/daily/activity", ok + "&model=openai/ok", "model"},
		{"/team/daily/activity", ok + "&api_key=vk_x", "api_key"},
		{"/tag/daily/activity", ok + "&api_key=vk_x", "api_key"},
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

// TestLiteLLMDailyActivityPerTeamAndKey: /team/daily/activity counts the requests of team
// keys only, per team id in entities (with its team_alias); team_ids narrows and
// exclude_team_ids excludes. /user/daily/activity's api_keys are per virtual key id (the
// operator's own requests under its owner id, as /spend/logs shows them), with the key's
// alias and team; api_key (an id, the key itself, its hash, the owner id) answers one key's
// days, per model and provider from the user, key and model rows; a key of nobody's answers
// none; model answers one model's days with its keys, from those rows too.
func TestLiteLLMDailyActivityPerTeamAndKey(t *testing.T) {
	hs, s, setNow := dailyActivityServer(t)
	for _, body := range []string{`{"team_id":"eng","team_alias":"Engineering"}`, `{"team_id":"ops"}`} {
		if r := do(t, s, "POST", "/team/new", testKey, body); r.status != http.StatusOK {
			t.Fatalf("/team/new %s: %d %s", body, r.status, r.raw)
		}
	}
	eng := litellmGenerate(t, s, `{"team_id":"eng","key_alias":"eng-bot"}`)
	ops := litellmGenerate(t, s, `{"team_id":"ops"}`)
	solo := litellmGenerate(t, s, `{"key_alias":"solo"}`)
	day1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	setNow(day1)
	chatOK(t, hs.URL, eng.Key, "openai/ok", "")
	chatOK(t, hs.URL, eng.Key, "openai/ok", "")
	chatOK(t, hs.URL, ops.Key, "openai/ok", "")
	chatOK(t, hs.URL, solo.Key, "openai/ok", "")
	setNow(day1.AddDate(0, 0, 1))
	chatOK(t, hs.URL, ops.Key, "openai/ok", "")
	chatOK(t, hs.URL, testKey, "openai/ok", "")
	chatOK(t, hs.URL, completionsOtherKey, "openai/ok", "")

	const period = "?start_date=2026-03-01&end_date=2026-03-02"
	a := dailyActivityAnswer(t, s, testKey, "/team/daily/activity"+period)
	if len(a.Results) != 2 || a.Metadata.TotalAPIRequests != 4 {
		t.Fatalf("teams: the team keys' 4 requests on 2 days: %+v", a)
	}
	d2, d1 := a.Results[0], a.Results[1]
	if e := d1.Breakdown.Entities; len(e) != 2 || e["eng"].Metrics.APIRequests != 2 || e["eng"].Metadata["team_alias"] != "Engineering" ||
		e["ops"].Metrics.APIRequests != 1 || e["ops"].Metadata["team_alias"] != nil || d1.Metrics.APIRequests != 3 {
		t.Fatalf("teams of day 1: %+v", d1)
	}
	if e := d2.Breakdown.Entities; len(e) != 1 || e["ops"].Metrics.APIRequests != 1 || d2.Metrics.APIRequests != 1 || len(d2.Breakdown.Models) != 0 {
		t.Fatalf("teams of day 2: %+v", d2)
	}
	for q, want := range map[string]int64{"&team_ids=eng": 2, "&team_ids=eng,%20ops": 4, "&exclude_team_ids=eng": 2, "&team_ids=eng,ops&exclude_team_ids=ops": 2, "&team_ids=nosuch": 0} {
		if a := dailyActivityAnswer(t, s, testKey, "/team/daily/activity"+period+q); a.Metadata.TotalAPIRequests != want {
			t.Fatalf("%s: %d requests, want %d: %+v", q, a.Metadata.TotalAPIRequests, want, a)
		}
	}
	if a := dailyActivityAnswer(t, s, completionsOtherKey, "/team/daily/activity"+period); len(a.Results) != 0 {
		t.Fatalf("the other operator has no teams: %+v", a)
	}

	own := ownerOfKey(t, testKey)
	a = dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period)
	k1 := a.Results[1].Breakdown.APIKeys
	if len(k1) != 3 || k1[eng.Token].Metrics.APIRequests != 2 || *k1[eng.Token].Metadata.KeyAlias != "eng-bot" || *k1[eng.Token].Metadata.TeamID != "eng" ||
		k1[solo.Token].Metadata.TeamID != nil || k1[ops.Token].Metrics.APIRequests != 1 {
		t.Fatalf("keys of day 1: %+v", k1)
	}
	if k2 := a.Results[0].Breakdown.APIKeys; len(k2) != 2 || k2[own].Metrics.APIRequests != 1 || k2[own].Metadata.KeyAlias != nil || k2[ops.Token].Metrics.APIRequests != 1 {
		t.Fatalf("keys of day 2: %+v", k2)
	}
	sum := sha256.Sum256([]byte(ops.Key))
	for _, ref := range []string{ops.Token, ops.Key, hex.EncodeToString(sum[:])} {
		a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&api_key="+url.QueryEscape(ref))
		if len(a.Results) != 2 || a.Metadata.TotalAPIRequests != 2 || len(a.Results[0].Breakdown.APIKeys) != 1 || a.Results[0].Breakdown.APIKeys[ops.Token].Metrics.APIRequests != 1 ||
			len(a.Results[0].Breakdown.Models) != 1 || a.Results[0].Breakdown.Models["openai/ok"].APIKeyBreakdown[ops.Token].Metrics.APIRequests != 1 ||
			a.Results[0].Breakdown.Providers["openai"].Metrics.APIRequests != 1 {
			t.Fatalf("api_key=%s: %+v", ref, a)
		}
	}
	for _, ref := range []string{own, testKey} {
		if a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&api_key="+url.QueryEscape(ref)); len(a.Results) != 1 || a.Metadata.TotalAPIRequests != 1 ||
			a.Results[0].Breakdown.APIKeys[own].Metrics.APIRequests != 1 {
			t.Fatalf("api_key=%s (the operator's own): %+v", ref, a)
		}
	}
	if a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&api_key=sk-nobodys"); len(a.Results) != 0 || a.Metadata.TotalAPIRequests != 0 {
		t.Fatalf("a key of nobody's: %+v", a)
	}
	// With model, the days are the model's, with its keys.
	if a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&model=openai/ok"); a.Metadata.TotalAPIRequests != 6 || len(a.Results[0].Breakdown.APIKeys) != 2 ||
		a.Results[0].Breakdown.APIKeys[ops.Token].Metrics.APIRequests != 1 || a.Results[1].Breakdown.APIKeys[eng.Token].Metrics.APIRequests != 2 {
		t.Fatalf("model=openai/ok: %+v", a)
	}
	if a := dailyActivityAnswer(t, s, testKey, "/user/daily/activity"+period+"&model=openai/nosuch"); len(a.Results) != 0 {
		t.Fatalf("model=openai/nosuch: %+v", a)
	}
}
