package server

import (
	"context"

	"net/http"
	"strings"
	"testing"
)

// Not Diamond's personalized routing flow over HTTP: userPreferenceCreate, modelSelect
// with the preference, report/metrics/feedback; and the rules' statuses naming the fields.
func TestPreferenceFeedbackFlow(t *testing.T) {
	ts, _ := modelSelectServer(t, scriptedRouters{owner: ownerOfKey(t, testKey)})
	code, pref := postSelect(t, ts, "/v2/preferences/userPreferenceCreate", testKey, `{"name":"support"}`)
	pid, _ := pref["preference_id"].(string)
	if code != 200 || !strings.HasPrefix(pid, "pref_") {
		t.Fatalf("userPreferenceCreate: %d %v", code, pref)
	}
	body := `{"messages":[{"role":"user","content":"Reset my password"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"acme","model":"support-ft"}],"preference_id":"` + pid + `"}`
	var sess string
	for i := range 12 {
		code, sel := postSelect(t, ts, "/v2/modelRouter/modelSelect", testKey, body)
		if code != 200 {
			t.Fatalf("modelSelect: %d %v", code, sel)
		}
		sess = sel["session_id"].(string)
		code, fb := postSelect(t, ts, "/v2/report/metrics/feedback", testKey,
			`{"session_id":"`+sess+`","provider":{"provider":"acme","model":"support-ft"},"feedback":{"accuracy":1}}`)
		if code != 200 || fb["personalized"] != true || fb["feedback_count"] != float64(i+1) || fb["session_id"] != sess {
			t.Fatalf("feedback %d: %d %v", i, code, fb)
		}
	}
	code, sel := postSelect(t, ts, "/api/v1/model-select", testKey, body)
	if code != 200 || sel["llm_label"] != "acme/support-ft" {
		t.Fatalf("after feedback: %d %v", code, sel)
	}
	if p := sel["providers"].([]any)[0].(map[string]any); p["score_source"] != "unknown+feedback" {
		t.Errorf("score_source %v", p["score_source"])
	}
	for _, c := range []struct {
		body, key, field string
		status           int
	}{
		{`{"session_id":"` + sess + `","provider":"openai/gpt-4o-mini","feedback":{"accuracy":1}}`, testKey, "provider", 400},
		{`{"session_id":"` + sess + `","provider":{"name":"openai/gpt-4o"},"feedback":{"accuracy":2}}`, testKey, "feedback.accuracy", 400},
		{`{"session_id":"` + sess + `","provider":"openai/gpt-4o","feedback":{}}`, testKey, "feedback.accuracy", 400},
		{`{"session_id":"sess_nope","provider":"openai/gpt-4o","feedback":{"accuracy":1}}`, testKey, "session_id", 404},
		{`{"session_id":"` + sess + `","provider":"openai/gpt-4o","feedback":{"accuracy":1}}`, otherKey, "session_id", 404},
	} {
		code, out := postSelect(t, ts, "/api/v1/feedback", c.key, c.body)
		if code != c.status || !strings.Contains(strings.ToLower(bodyText(out)), c.field) {
			t.Errorf("%s: %d %v, want %d naming %s", c.body, code, out, c.status, c.field)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/preferences/"+pid, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("get preference: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest("DELETE", ts.URL+"/api/v1/preferences/"+pid, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("delete preference: %v %v", resp, err)
	}
	if code, out := postSelect(t, ts, "/api/v1/model-select", testKey, body); code != 404 || !strings.Contains(bodyText(out), "preference_id") {
		t.Errorf("select with a deleted preference: %d %v", code, out)
	}
	// A preference on a trained router, and one naming a router this key does not own.
	if code, out := postSelect(t, ts, "/api/v1/preferences", testKey, `{"router_model_id":"r1"}`); code != 200 || out["router_model_id"] != "r1" {
		t.Errorf("preference on r1: %d %v", code, out)
	}
	if code, out := postSelect(t, ts, "/api/v1/preferences", otherKey, `{"router_model_id":"r1"}`); code != 404 || !strings.Contains(bodyText(out), "router_model_id") {
		t.Errorf("preference on another key's router: %d %v", code, out)
	}
}

func bodyText(out map[string]any) string {
	var b strings.Builder
	for _, v := range out {
		if s, ok := v.(string); ok {
			b.WriteString(s + " ")
		}
		if m, ok := v.(map[string]any); ok {
			b.WriteString(bodyText(m))
		}
	}
	return b.String()
}

// ownerOfKey is the owner the server files key's records under.
func ownerOfKey(t *testing.T, key string) string {
	t.Helper()
	st := newTestStore(t)
	defer st.Close()
	s, err := New(Config{Store: st, APIKeys: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Auth().Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p.Owner
}
