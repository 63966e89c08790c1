package server

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestDailyActivityPerUser: /user/daily/activity?user_id= answers one user's days (the
// requests of the virtual keys made for that user), with its keys, models and providers,
// each adding up to the day; with model or api_key too it narrows further. As LiteLLM's
// non-admin users, a virtual key with a user_id sees its own user's days, user_id or not,
// and is refused another user's (a 403 naming user_id); a virtual key without a user_id is
// refused, as any virtual key is on the team and tag routes.
func TestDailyActivityPerUser(t *testing.T) {
	hs, s, setNow := dailyActivityServer(t)
	ann1 := litellmGenerate(t, s, `{"user_id":"ann","key_alias":"ann-1"}`)
	ann2 := litellmGenerate(t, s, `{"user_id":"ann"}`)
	bob := litellmGenerate(t, s, `{"user_id":"bob"}`)
	anon := litellmGenerate(t, s, `{}`)
	day1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	setNow(day1)
	chatOK(t, hs.URL, ann1.Key, "openai/ok", "")
	chatOK(t, hs.URL, ann1.Key, "openai/ok", "")
	chatOK(t, hs.URL, ann2.Key, "openai/free", "")
	chatOK(t, hs.URL, bob.Key, "openai/ok", "")
	chatOK(t, hs.URL, anon.Key, "openai/ok", "")
	chatOK(t, hs.URL, testKey, "openai/ok", "")
	setNow(day1.AddDate(0, 0, 1))
	chatOK(t, hs.URL, ann1.Key, "openai/ok", "")
	if resp, body := post(t, hs.URL+"/v1/chat/completions", bob.Key, `{"model":"openai/down","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode < 400 {
		t.Fatalf("openai/down: %d %s", resp.StatusCode, body)
	}
	chatOK(t, hs.URL, completionsOtherKey, "openai/ok", "")

	const path = "/user/daily/activity?start_date=2026-03-01&end_date=2026-03-02"
	answer := func(key, query string) litellmDailyActivity {
		t.Helper()
		a := dailyActivityAnswer(t, s, key, path+query)
		checkDailyActivityAddsUp(t, query, a)
		return a
	}
	all := answer(testKey, "")
	if all.Metadata.TotalAPIRequests != 8 || all.Metadata.TotalFailedRequests != 1 {
		t.Fatalf("every request: %+v", all.Metadata)
	}
	ann := answer(testKey, "&user_id=ann")
	if len(ann.Results) != 2 || ann.Metadata.TotalAPIRequests != 4 || ann.Metadata.TotalFailedRequests != 0 {
		t.Fatalf("user_id=ann: %+v", ann.Metadata)
	}
	d2, d1 := ann.Results[0].Breakdown, ann.Results[1].Breakdown
	if len(d1.APIKeys) != 2 || d1.APIKeys[ann1.Token].Metrics.APIRequests != 2 || *d1.APIKeys[ann1.Token].Metadata.KeyAlias != "ann-1" || *d1.APIKeys[ann1.Token].Metadata.UserID != "ann" ||
		d1.APIKeys[ann2.Token].Metrics.APIRequests != 1 || len(d1.Models) != 2 || d1.Models["openai/ok"].APIKeyBreakdown[ann1.Token].Metrics.APIRequests != 2 ||
		d1.Models["openai/free"].APIKeyBreakdown[ann2.Token].Metrics.APIRequests != 1 || d1.Providers["openai"].Metrics.APIRequests != 3 {
		t.Fatalf("ann's day 1: %+v", d1)
	}
	if len(d2.APIKeys) != 1 || d2.APIKeys[ann1.Token].Metrics.APIRequests != 1 {
		t.Fatalf("ann's day 2: %+v", d2)
	}
	if a := answer(testKey, "&user_id=bob"); len(a.Results) != 2 || a.Metadata.TotalAPIRequests != 2 || a.Results[0].Metrics.FailedRequests != 1 ||
		a.Results[0].Breakdown.Models["openai/down"].APIKeyBreakdown[bob.Token].Metrics.FailedRequests != 1 {
		t.Fatalf("user_id=bob: %+v", a)
	}
	if a := answer(testKey, "&user_id=nobody"); len(a.Results) != 0 || a.Metadata.TotalAPIRequests != 0 {
		t.Fatalf("user_id=nobody: %+v", a)
	}
	if a := answer(testKey, "&user_id=ann&model=openai/ok"); a.Metadata.TotalAPIRequests != 3 || len(a.Results[1].Breakdown.APIKeys) != 1 || len(a.Results[1].Breakdown.Models) != 1 {
		t.Fatalf("user_id=ann&model=openai/ok: %+v", a)
	}
	if a := answer(testKey, "&user_id=ann&api_key="+url.QueryEscape(ann2.Key)); a.Metadata.TotalAPIRequests != 1 || a.Results[0].Breakdown.Models["openai/free"].Metrics.APIRequests != 1 {
		t.Fatalf("user_id=ann&api_key=ann2: %+v", a)
	}
	if a := answer(testKey, "&user_id=ann&api_key="+url.QueryEscape(bob.Token)); len(a.Results) != 0 {
		t.Fatalf("user_id=ann&api_key=bob's: %+v", a)
	}

	// ann's keys see ann's days, with user_id=ann or without.
	for _, q := range []string{"", "&user_id=ann"} {
		a := answer(ann2.Key, q)
		if a.Metadata != ann.Metadata || len(a.Results) != 2 || len(a.Results[1].Breakdown.APIKeys) != 2 {
			t.Fatalf("ann's key, %q: %+v, want %+v", q, a.Metadata, ann.Metadata)
		}
	}
	if a := answer(ann1.Key, "&model=openai/free"); a.Metadata.TotalAPIRequests != 1 {
		t.Fatalf("ann's key, model=openai/free: %+v", a.Metadata)
	}
	r := do(t, s, "GET", path+"&user_id=bob", ann1.Key, "")
	if e, _ := r.body["error"].(map[string]any); r.status != http.StatusForbidden || e["param"] != "user_id" {
		t.Fatalf("ann's key asking for bob's days: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", path, anon.Key, ""); r.status != http.StatusForbidden {
		t.Fatalf("a virtual key of no user: %d %s", r.status, r.raw)
	}
	for _, p := range []string{"/team/daily/activity", "/tag/daily/activity"} {
		if r := do(t, s, "GET", p+"?start_date=2026-03-01&end_date=2026-03-02", ann1.Key, ""); r.status != http.StatusForbidden {
			t.Fatalf("%s with a user's virtual key: %d %s", p, r.status, r.raw)
		}
	}
}

// TestDailyActivityDefaultPageSize: without page_size the routes page as LiteLLM's do: 50
// days on /user/daily/activity, 10 on /team/daily/activity and /tag/daily/activity.
func TestDailyActivityDefaultPageSize(t *testing.T) {
	hs, s, setNow := dailyActivityServer(t)
	if r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"eng"}`); r.status != http.StatusOK {
		t.Fatalf("/team/new: %d %s", r.status, r.raw)
	}
	eng := litellmGenerate(t, s, `{"team_id":"eng"}`)
	day0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 11 {
		setNow(day0.AddDate(0, 0, i))
		chatOK(t, hs.URL, eng.Key, "openai/ok", `"metadata":{"tags":["eng"]},`)
	}
	for path, want := range map[string]int{"/user/daily/activity": 11, "/team/daily/activity": 10, "/tag/daily/activity": 10} {
		a := dailyActivityAnswer(t, s, testKey, path+"?start_date=2026-03-01&end_date=2026-03-31")
		if len(a.Results) != want || a.Metadata.HasMore != (want < 11) || a.Metadata.TotalAPIRequests != 11 {
			t.Fatalf("%s: %d days (has_more %v), want %d: %+v", path, len(a.Results), a.Metadata.HasMore, want, a.Metadata)
		}
	}
}
