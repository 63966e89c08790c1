package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

const otherKey = "other-key-456"

// scriptedRouters is a fake routing.CustomModels: one trained router "r1" of the owner of
// testKey that always prefers acme/chat.
type scriptedRouters struct{ owner string }

func (f scriptedRouters) Rank(_ context.Context, owner, id string, texts []string) (*routing.RouterEstimates, error) {
	if owner != f.owner || id != "r1" {
		return nil, routing.ErrNotFound
	}
	out := make([][]routing.ModelProb, len(texts))
	for i := range texts {
		out[i] = []routing.ModelProb{{Model: "acme/chat", Prob: 0.8, Quality: 0.8}, {Model: "openai/gpt-4o", Prob: 0.2, Quality: 0.7}}
	}
	return &routing.RouterEstimates{Texts: out}, nil
}

func modelSelectServer(t *testing.T, custom routing.CustomModels) (*httptest.Server, *store.Store) {
	t.Helper()
	st := newTestStore(t)
	t.Cleanup(func() { st.Close() })
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: custom})
	s, err := New(Config{Store: st, APIKeys: []string{testKey, otherKey}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, ModelSelection(sel))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, st
}

func postSelect(t *testing.T, ts *httptest.Server, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: undecodable body: %v", path, err)
	}
	return resp.StatusCode, out
}

func TestModelSelectShapesAndAlias(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	msgs := `"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"What is 2+2?"}]`
	cases := []struct {
		name, path, body, label string
		first                   map[string]any
	}{
		{"name shape", "/api/v1/model-select", `{` + msgs + `,"llm_providers":[{"name":"openai/gpt-4o-mini"},{"name":"openai/gpt-4o"}]}`,
			"openai/gpt-4o", map[string]any{"name": "openai/gpt-4o"}},
		{"provider/model shape", "/api/v1/model-select", `{` + msgs + `,"llm_providers":[{"provider":"openai","model":"gpt-4o-mini"},{"provider":"openai","model":"gpt-4o"}]}`,
			"openai/gpt-4o", map[string]any{"provider": "openai", "model": "gpt-4o"}},
		{"models alias with strings", "/api/v1/model-select", `{` + msgs + `,"models":["openai/gpt-4o-mini","openai/gpt-4o"]}`,
			"openai/gpt-4o", map[string]any{"provider": "openai", "model": "gpt-4o"}},
		{"alias path", "/v1/modelSelect", `{` + msgs + `,"llm_providers":[{"provider":"openai","model":"gpt-4o-mini"},{"name":"openai/gpt-4o"}],"max_model_depth":1}`,
			"openai/gpt-4o", map[string]any{"name": "openai/gpt-4o"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := postSelect(t, ts, c.path, testKey, c.body)
			if status != 200 {
				t.Fatalf("status %d: %v", status, body)
			}
			if body["llm_label"] != c.label || body["session_id"] == "" {
				t.Errorf("body %v", body)
			}
			provs := body["providers"].([]any)
			first := provs[0].(map[string]any)
			for k, v := range c.first {
				if first[k] != v {
					t.Errorf("providers[0].%s = %v, want %v (%v)", k, first[k], v, first)
				}
			}
			if c.path == "/v1/modelSelect" && len(provs) != 1 {
				t.Errorf("max_model_depth 1 gave %d providers", len(provs))
			}
		})
	}
	// Both paths need the bearer key.
	for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
		for _, key := range []string{"", "wrong-key"} {
			status, body := postSelect(t, ts, path, key, `{`+msgs+`,"models":["a/b"]}`)
			if status != http.StatusUnauthorized || body["error"] != KindUnauthorized {
				t.Errorf("%s with key %q: %d %v", path, key, status, body)
			}
		}
	}
}

func TestModelSelectBadRequests(t *testing.T) {
	ts, st := modelSelectServer(t, scriptedRouters{})
	msg := `"messages":[{"role":"user","content":"hi"}]`
	cand := `"llm_providers":[{"name":"openai/gpt-4o"}]`
	tools := make([]string, 129)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name":"t%d"}`, i)
	}
	cases := []struct{ name, body, field string }{
		{"malformed json", `{"messages": [`, "malformed JSON"},
		{"no messages", `{"messages":[],` + cand + `}`, "messages"},
		{"no candidates", `{` + msg + `,"llm_providers":[]}`, "llm_providers"},
		{"no candidates in models", `{` + msg + `,"models":[]}`, "llm_providers"},
		{"empty role", `{"messages":[{"role":"","content":"hi"}],` + cand + `}`, "messages[0].role"},
		{"empty content", `{"messages":[{"role":"user","content":""}],` + cand + `}`, "messages[0].content"},
		{"role outside the set", `{"messages":[{"role":"developer","content":"hi"}],` + cand + `}`, "messages[0].role"},
		{"too many tools", `{` + msg + `,` + cand + `,"tools":[` + strings.Join(tools, ",") + `]}`, "tools"},
		{"tool without name", `{` + msg + `,` + cand + `,"tools":[{"description":"no name"}]}`, "tools[0].name"},
		{"bad tradeoff", `{` + msg + `,` + cand + `,"tradeoff":"quality"}`, "tradeoff"},
		{"max_model_depth < 1", `{` + msg + `,` + cand + `,"max_model_depth":0}`, "max_model_depth"},
		{"tradeoff_tolerance above 1", `{` + msg + `,` + cand + `,"tradeoff":"cost","tradeoff_tolerance":2}`, "tradeoff_tolerance"},
		{"tradeoff_tolerance without tradeoff", `{` + msg + `,` + cand + `,"tradeoff_tolerance":0.1}`, "tradeoff_tolerance"},
		{"duplicate candidates", `{` + msg + `,"llm_providers":[{"name":"openai/gpt-4o"},{"provider":"openai","model":"gpt-4o"}]}`, "llm_providers[1]"},
		{"wrong type", `{` + msg + `,` + cand + `,"max_model_depth":"3"}`, "max_model_depth"},
		{"unknown field", `{` + msg + `,` + cand + `,"temperature":0}`, "temperature"},
		{"metric other than accuracy", `{` + msg + `,` + cand + `,"metric":"latency"}`, "metric"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
				status, body := postSelect(t, ts, path, testKey, c.body)
				msg, _ := body["message"].(string)
				if status != http.StatusBadRequest || body["error"] != KindBadRequest || !strings.Contains(msg, c.field) {
					t.Errorf("%s: %d %v; want 400 naming %q", path, status, body, c.field)
				}
			}
		})
	}
	if entries, _ := st.List(context.Background(), store.Sessions, store.ListOptions{}); len(entries) != 0 {
		t.Errorf("bad requests stored %d sessions", len(entries))
	}
}

func TestModelSelectNotFoundAndCustomRouter(t *testing.T) {
	// The fake router belongs to testKey's owner; find that owner through an echo request.
	st := newTestStore(t)
	defer st.Close()
	s, err := New(Config{Store: st, APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Auth().Authenticate(context.Background(), testKey)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := modelSelectServer(t, scriptedRouters{owner: p.Owner})
	base := `"messages":[{"role":"user","content":"hello there"}],"llm_providers":[{"name":"openai/gpt-4o"},{"name":"acme/chat"},{"name":"zzz/other"}]`

	status, body := postSelect(t, ts, "/api/v1/model-select", testKey, `{`+base+`,"preference_id":"r1"}`)
	if status != 200 || body["llm_label"] != "acme/chat" {
		t.Fatalf("custom router: %d %v", status, body)
	}
	first := body["providers"].([]any)[0].(map[string]any)
	if first["score_source"] != routing.SourceRouter {
		t.Errorf("first provider %v", first)
	}
	sessionID := body["session_id"].(string)

	notFound := []struct{ name, key, body, field string }{
		{"unknown preference_id", testKey, `{` + base + `,"preference_id":"nope"}`, "preference_id"},
		{"another owner's preference_id", otherKey, `{` + base + `,"preference_id":"r1"}`, "preference_id"},
		{"unknown previous_session", testKey, `{` + base + `,"previous_session":"sess_000"}`, "previous_session"},
		{"another owner's previous_session", otherKey, `{` + base + `,"previous_session":"` + sessionID + `"}`, "previous_session"},
	}
	for _, c := range notFound {
		status, body := postSelect(t, ts, "/v1/modelSelect", c.key, c.body)
		msg, _ := body["message"].(string)
		if status != http.StatusNotFound || body["error"] != KindNotFound || !strings.HasPrefix(msg, c.field) {
			t.Errorf("%s: %d %v; want 404 naming %s", c.name, status, body, c.field)
		}
	}
	// The owner can link to its own session.
	status, body = postSelect(t, ts, "/api/v1/model-select", testKey, `{`+base+`,"previous_session":"`+sessionID+`","hash_content":true}`)
	if status != 200 {
		t.Errorf("linking own session: %d %v", status, body)
	}
}

func TestModelSelectOpenAPI(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	resp, err := http.Get(ts.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
		op, ok := doc.Paths[p]["post"]
		if !ok {
			t.Fatalf("OpenAPI lacks POST %s", p)
		}
		for _, want := range []string{"llm_providers", "max_model_depth", "oneOf", "llm_label", "tradeoff_tolerance", "quality", "estimated_from"} {
			if !strings.Contains(string(op), want) {
				t.Errorf("POST %s schema lacks %q", p, want)
			}
		}
		// The spec's failure statuses, the candidates' requirement and its bounds.
		var o struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						AnyOf      []struct{ Required []string } `json:"anyOf"`
						Properties map[string]struct {
							Maximum *float64 `json:"maximum"`
							Format  string   `json:"format"`
							Default any      `json:"default"`
						} `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(op, &o); err != nil {
			t.Fatal(err)
		}
		for _, code := range []string{"200", "400", "401", "404", "500"} {
			if o.Responses[code] == nil {
				t.Errorf("POST %s documents no %s", p, code)
			}
		}
		sch := o.RequestBody.Content["application/json"].Schema
		if len(sch.AnyOf) != 2 || sch.AnyOf[0].Required[0] != "llm_providers" || sch.AnyOf[1].Required[0] != "models" {
			t.Errorf("POST %s: candidates not required: anyOf %+v", p, sch.AnyOf)
		}
		if d := sch.Properties["max_model_depth"]; d.Maximum == nil || *d.Maximum != 2147483647 || d.Format != "int32" {
			t.Errorf("POST %s: max_model_depth %+v", p, d)
		}
		if h := sch.Properties["hash_content"]; h.Default != false {
			t.Errorf("POST %s: hash_content default %v", p, h.Default)
		}
	}
}

// TestModelSelectWithRouterTrainedOverHTTP trains a router through the custom-router API
// (POST /api/v1/routers/train, polling the status) and routes with its model_id as
// preference_id; another key's model is not found.
func TestModelSelectWithRouterTrainedOverHTTP(t *testing.T) {
	type record struct {
		Problem       string   `json:"problem"`
		CorrectModels []string `json:"correct_models"`
	}
	var recs []record
	for i, topic := range []string{"reverse a list", "parse json", "sort a dict by value", "match emails with a regex",
		"read a csv file", "implement binary search", "write a stack class", "fix an index error"} {
		recs = append(recs, record{fmt.Sprintf("python code to %s (%d)", topic, i), []string{"acme/coder"}})
	}
	for i, dish := range []string{"banana bread", "tomato soup", "roast vegetables", "sourdough bread",
		"pasta sauce", "boiled eggs", "marinated chicken", "rice pudding"} {
		recs = append(recs, record{fmt.Sprintf("recipe and cooking time for %s (%d)", dish, i), []string{"acme/chef"}})
	}
	data, _ := json.Marshal(recs)
	path := filepath.Join(t.TempDir(), "train.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st := newTestStore(t)
	defer st.Close()
	quiet := slog.New(slog.DiscardHandler)
	svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithLogger(quiet),
		trainer.WithFitOptions(func(o *inference.FitOptions) { o.L2 = []float64{1e-3} }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})
	srv, err := New(Config{Store: st, APIKeys: []string{testKey, otherKey}, Logger: quiet}, CustomRouters(svc), ModelSelection(sel))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	fileURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	status, body := postSelect(t, ts, "/api/v1/routers/train", testKey, `{"Data_URLs":["`+fileURL+`"]}`)
	if status != http.StatusAccepted {
		t.Fatalf("train: %d %v", status, body)
	}
	jobID, _ := body["training_job_id"].(string)
	var modelID string
	for modelID == "" {
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/routers/train/status?task_id="+url.QueryEscape(jobID), nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st map[string]any
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		switch st["status"] {
		case "completed":
			modelID, _ = st["model_id"].(string)
		case "failed":
			t.Fatalf("training failed: %v", st)
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}

	cands := `"llm_providers":[{"provider":"acme","model":"chef"},{"name":"openai/gpt-4o"},{"provider":"acme","model":"coder"}]`
	for prompt, want := range map[string]string{
		"python code to merge two lists":   "acme/coder",
		"recipe and cooking time for stew": "acme/chef",
	} {
		status, body := postSelect(t, ts, "/api/v1/model-select", testKey,
			`{"messages":[{"role":"user","content":"`+prompt+`"}],`+cands+`,"preference_id":"`+modelID+`"}`)
		if status != 200 || body["llm_label"] != want {
			t.Errorf("%q: %d %v, want %s", prompt, status, body, want)
		}
	}
	status, body = postSelect(t, ts, "/v1/modelSelect", otherKey,
		`{"messages":[{"role":"user","content":"hi"}],`+cands+`,"preference_id":"`+modelID+`"}`)
	if msg, _ := body["message"].(string); status != http.StatusNotFound || !strings.HasPrefix(msg, "preference_id") {
		t.Errorf("other key with the model id: %d %v", status, body)
	}
}

// TestModelSelectAliasTakesAuthorizationOnly: /v1/modelSelect is the spec's alias of model
// selection, not an SDK compatibility surface: as the spec says of every operation, it takes
// the key in the Authorization header only (x-api-key is for Anthropic's SDKs on /v1/).
func TestModelSelectAliasTakesAuthorizationOnly(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	body := `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"name":"openai/gpt-4o"}]}`
	req, _ := http.NewRequest("POST", ts.URL+"/v1/modelSelect", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "x-api-key") {
		t.Errorf("/v1/modelSelect with x-api-key only: %d %s, want 401 naming the Authorization header alone", resp.StatusCode, b)
	}
	if code, out := postSelect(t, ts, "/v1/modelSelect", testKey, body); code != http.StatusOK {
		t.Errorf("/v1/modelSelect with Authorization: %d %v", code, out)
	}
}
