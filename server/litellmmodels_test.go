package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// modelInfoSecret is in the upstream's API key and in its base URL's user info: no answer of
// these routes may show it.
const modelInfoSecret = "SECRET-7f3a"

// hangingUpstream is fakeOpenAIUpstream, except that the models whose names begin with
// "hang" answer nothing until their request is cancelled (each such request is announced on
// hung first).
type hangingUpstream struct {
	fake fakeOpenAIUpstream
	hung chan string
}

func (u *hangingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(b, &body)
	if strings.HasPrefix(body.Model, "hang") {
		if u.hung != nil {
			u.hung <- body.Model
		}
		<-r.Context().Done()
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	u.fake.ServeHTTP(w, r)
}

// modelInfoServer is a server whose gateway has the model groups grp (up/gpt-4o, then
// up/down, which answers 503), other (up/gpt-4o-mini) and stuck (up/hang and up/hang2, which
// never answer), over a scripted upstream whose base URL carries user info and whose key is
// secret; cfg tweaks the server's Config.
func modelInfoServer(t *testing.T, up *hangingUpstream, cfg func(*Config)) (*Server, string) {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	base := strings.Replace(ups.URL, "http://", "http://user:"+modelInfoSecret+"@", 1) + "/v1"
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: base, APIKey: "sk-" + modelInfoSecret}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{
			"grp":   {Models: []string{"up/gpt-4o", "up/down"}},
			"other": {Models: []string{"up/gpt-4o-mini"}},
			"stuck": {Models: []string{"up/hang", "up/hang2"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Store: st, APIKeys: []string{testKey}}
	if cfg != nil {
		cfg(&c)
	}
	s := testServer(t, c, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	return s, ups.URL + "/v1"
}

// catalogueEntry is the raw entry of the embedded LiteLLM catalogue for key.
func catalogueEntry(t *testing.T, key string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../providers/catalogdata/litellm_chat_prices.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	e, ok := all[key]
	if !ok {
		t.Fatalf("the catalogue has no %q", key)
	}
	return e
}

type modelInfoRow struct {
	ModelName     string         `json:"model_name"`
	LiteLLMParams map[string]any `json:"litellm_params"`
	ModelInfo     map[string]any `json:"model_info"`
}

func modelInfoRows(t *testing.T, r reply) []modelInfoRow {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	var out struct{ Data []modelInfoRow }
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// TestLiteLLMModelInfo: /model/info and /v1/model/info list every deployment with the
// catalogue's prices, limits and capabilities, the upstream model and its api_base without
// credentials, never the key; litellm_model_id picks one, and an unknown one is LiteLLM's 400.
func TestLiteLLMModelInfo(t *testing.T) {
	s, apiBase := modelInfoServer(t, &hangingUpstream{}, nil)
	r := do(t, s, "GET", "/model/info", testKey, "")
	if strings.Contains(r.raw, modelInfoSecret) {
		t.Fatalf("/model/info shows the secret: %s", r.raw)
	}
	rows := modelInfoRows(t, r)
	got := map[string]modelInfoRow{}
	for _, row := range rows {
		got[row.ModelName+" "+row.LiteLLMParams["model"].(string)] = row
	}
	for _, want := range []string{"grp up/gpt-4o", "grp up/down", "other up/gpt-4o-mini", "stuck up/hang", "stuck up/hang2"} {
		if _, ok := got[want]; !ok {
			t.Errorf("no deployment %q in %s", want, r.raw)
		}
	}
	if len(rows) != 5 {
		t.Errorf("%d deployments, want 5: %s", len(rows), r.raw)
	}
	gpt := got["grp up/gpt-4o"]
	if gpt.LiteLLMParams["api_base"] != apiBase {
		t.Errorf("api_base %v, want %s (no user info)", gpt.LiteLLMParams["api_base"], apiBase)
	}
	if _, ok := gpt.LiteLLMParams["api_key"]; ok {
		t.Errorf("litellm_params has api_key: %v", gpt.LiteLLMParams)
	}
	cat := catalogueEntry(t, "gpt-4o")
	mi := gpt.ModelInfo
	for _, f := range []string{"input_cost_per_token", "output_cost_per_token", "max_input_tokens", "max_output_tokens", "supports_function_calling", "supports_vision"} {
		if mi[f] != cat[f] {
			t.Errorf("model_info.%s = %v, the catalogue says %v", f, mi[f], cat[f])
		}
	}
	if mi["max_tokens"] != cat["max_output_tokens"] || mi["mode"] != "chat" || mi["key"] != "gpt-4o" || mi["litellm_provider"] != "up" {
		t.Errorf("model_info %v", mi)
	}
	id, _ := mi["id"].(string)
	if id == "" || id == got["grp up/down"].ModelInfo["id"] {
		t.Errorf("ids %q and %v are not distinct", id, got["grp up/down"].ModelInfo["id"])
	}
	// A model the catalogue does not know: nulls, not made-up figures.
	if down := got["grp up/down"].ModelInfo; down["input_cost_per_token"] != nil || down["max_input_tokens"] != nil || down["key"] != nil {
		t.Errorf("up/down's model_info invents figures: %v", down)
	}

	if v1 := do(t, s, "GET", "/v1/model/info", testKey, ""); v1.raw != r.raw {
		t.Errorf("/v1/model/info differs from /model/info:\n%s\n%s", v1.raw, r.raw)
	}
	one := modelInfoRows(t, do(t, s, "GET", "/model/info?litellm_model_id="+id, testKey, ""))
	if len(one) != 1 || one[0].ModelInfo["id"] != id || one[0].LiteLLMParams["model"] != "up/gpt-4o" {
		t.Errorf("litellm_model_id=%s gave %+v", id, one)
	}
	for _, path := range []string{"/model/info?litellm_model_id=nope", "/v1/model/info?litellm_model_id=nope"} {
		bad := do(t, s, "GET", path, testKey, "")
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.raw, "Model id = nope not found on litellm proxy") || !strings.Contains(bad.raw, `"param":"litellm_model_id"`) {
			t.Errorf("%s: %d %s, want LiteLLM's 400", path, bad.status, bad.raw)
		}
	}
	if r := do(t, s, "GET", "/model/info", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("/model/info without a key: %d", r.status)
	}
}

// TestLiteLLMModelGroupInfo: each model name once, its deployments folded, model_group
// filters.
func TestLiteLLMModelGroupInfo(t *testing.T) {
	s, _ := modelInfoServer(t, &hangingUpstream{}, nil)
	r := do(t, s, "GET", "/model_group/info", testKey, "")
	if r.status != http.StatusOK || strings.Contains(r.raw, modelInfoSecret) {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	var out struct{ Data []map[string]any }
	json.Unmarshal([]byte(r.raw), &out)
	groups := map[string]map[string]any{}
	for _, g := range out.Data {
		groups[g["model_group"].(string)] = g
	}
	if len(out.Data) != 3 || groups["grp"] == nil || groups["other"] == nil || groups["stuck"] == nil {
		t.Fatalf("groups %s, want grp, other and stuck once each", r.raw)
	}
	cat := catalogueEntry(t, "gpt-4o")
	grp := groups["grp"]
	if grp["max_input_tokens"] != cat["max_input_tokens"] || grp["input_cost_per_token"] != cat["input_cost_per_token"] ||
		grp["supports_vision"] != true || grp["mode"] != "chat" || len(grp["providers"].([]any)) != 1 || grp["providers"].([]any)[0] != "up" {
		t.Errorf("grp folded as %v (gpt-4o: %v)", grp, cat)
	}
	mini := catalogueEntry(t, "gpt-4o-mini")
	if groups["other"]["output_cost_per_token"] != mini["output_cost_per_token"] {
		t.Errorf("other: %v, the catalogue's gpt-4o-mini %v", groups["other"], mini)
	}
	r = do(t, s, "GET", "/model_group/info?model_group=other", testKey, "")
	json.Unmarshal([]byte(r.raw), &out)
	if len(out.Data) != 1 || out.Data[0]["model_group"] != "other" {
		t.Errorf("model_group=other: %s", r.raw)
	}
}

// TestLiteLLMModelInfoVirtualKey: a virtual key limited to a model group sees only that
// group's deployments (as /v1/models lists only what it may call), cannot pick another's by
// id, and may not run the health check.
func TestLiteLLMModelInfoVirtualKey(t *testing.T) {
	s, _ := modelInfoServer(t, &hangingUpstream{}, nil)
	mk := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"limited","models":["other"]}`)
	vk, _ := mk.body["key"].(string)
	if vk == "" {
		t.Fatalf("issuing a virtual key: %d %s", mk.status, mk.raw)
	}
	all := modelInfoRows(t, do(t, s, "GET", "/model/info", testKey, ""))
	rows := modelInfoRows(t, do(t, s, "GET", "/model/info", vk, ""))
	if len(rows) != 1 || rows[0].ModelName != "other" {
		t.Fatalf("the virtual key sees %+v, want other's deployment only", rows)
	}
	for _, row := range all {
		if row.ModelName == "grp" {
			r := do(t, s, "GET", "/model/info?litellm_model_id="+row.ModelInfo["id"].(string), vk, "")
			if r.status != http.StatusBadRequest {
				t.Errorf("the virtual key reads grp's deployment by id: %d %s", r.status, r.raw)
			}
		}
	}
	r := do(t, s, "GET", "/model_group/info", vk, "")
	if !strings.Contains(r.raw, `"model_group":"other"`) || strings.Contains(r.raw, `"grp"`) || strings.Contains(r.raw, `"stuck"`) {
		t.Errorf("/model_group/info for the virtual key: %s", r.raw)
	}
	if r := do(t, s, "GET", "/health", vk, ""); r.status != http.StatusForbidden {
		t.Errorf("/health with a virtual key: %d %s, want 403", r.status, r.raw)
	}
}

type healthReply struct {
	Healthy        []map[string]any `json:"healthy_endpoints"`
	Unhealthy      []map[string]any `json:"unhealthy_endpoints"`
	HealthyCount   int              `json:"healthy_count"`
	UnhealthyCount int              `json:"unhealthy_count"`
}

func healthOf(t *testing.T, r reply) healthReply {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("/health: %d %s", r.status, r.raw)
	}
	if strings.Contains(r.raw, modelInfoSecret) {
		t.Fatalf("/health shows the secret: %s", r.raw)
	}
	var h healthReply
	if err := json.Unmarshal([]byte(r.raw), &h); err != nil {
		t.Fatal(err)
	}
	if h.HealthyCount != len(h.Healthy) || h.UnhealthyCount != len(h.Unhealthy) {
		t.Errorf("counts %d/%d for %d/%d endpoints", h.HealthyCount, h.UnhealthyCount, len(h.Healthy), len(h.Unhealthy))
	}
	return h
}

func endpointModels(es []map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range es {
		msg, _ := e["error"].(string)
		out[e["model_name"].(string)+" "+e["model"].(string)] = msg
	}
	return out
}

// TestLiteLLMHealth: /health calls every deployment once; the one that answers is healthy,
// the one answering 503 and the one that never answers (cut off by the timeout) are
// unhealthy with the reason; model and model_id narrow the check.
func TestLiteLLMHealth(t *testing.T) {
	up := &hangingUpstream{}
	s, apiBase := modelInfoServer(t, up, func(c *Config) { c.ModelHealthTimeout = 50 * time.Millisecond })
	h := healthOf(t, do(t, s, "GET", "/health", testKey, ""))
	healthy, unhealthy := endpointModels(h.Healthy), endpointModels(h.Unhealthy)
	if len(healthy) != 2 || len(unhealthy) != 3 {
		t.Fatalf("healthy %v, unhealthy %v", healthy, unhealthy)
	}
	for _, m := range []string{"grp up/gpt-4o", "other up/gpt-4o-mini"} {
		if _, ok := healthy[m]; !ok {
			t.Errorf("%s is not healthy: %v", m, unhealthy)
		}
	}
	if msg, ok := unhealthy["grp up/down"]; !ok || !strings.Contains(msg, "503") && !strings.Contains(msg, "overloaded") {
		t.Errorf("up/down: %q (unhealthy: %v)", msg, ok)
	}
	for _, m := range []string{"stuck up/hang", "stuck up/hang2"} {
		if msg, ok := unhealthy[m]; !ok || !strings.Contains(msg, "deadline exceeded") {
			t.Errorf("%s: %q, want the timeout (unhealthy: %v)", m, msg, ok)
		}
	}
	if h.Healthy[0]["api_base"] != apiBase || h.Healthy[0]["model_id"] == "" {
		t.Errorf("endpoint %v", h.Healthy[0])
	}
	// Only the named model's deployments.
	h = healthOf(t, do(t, s, "GET", "/health?model=grp", testKey, ""))
	if h.HealthyCount != 1 || h.UnhealthyCount != 1 {
		t.Errorf("model=grp: %+v", h)
	}
	// One deployment by id.
	rows := modelInfoRows(t, do(t, s, "GET", "/model/info", testKey, ""))
	for _, row := range rows {
		if row.LiteLLMParams["model"] == "up/gpt-4o-mini" {
			h = healthOf(t, do(t, s, "GET", "/health?model_id="+row.ModelInfo["id"].(string), testKey, ""))
			if h.HealthyCount != 1 || h.UnhealthyCount != 0 || h.Healthy[0]["model"] != "up/gpt-4o-mini" {
				t.Errorf("model_id of up/gpt-4o-mini: %+v", h)
			}
		}
	}
	if r := do(t, s, "GET", "/health?model_id=nope", testKey, ""); r.status != http.StatusNotFound || !strings.Contains(r.raw, "Model with ID nope not found") {
		t.Errorf("model_id=nope: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/health", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("/health without a key: %d", r.status)
	}
}

// TestLiteLLMHealthCancelled: without a timeout, the checks run concurrently (both hanging
// deployments are in flight at once: one at a time, the second would never start) and stop
// when the request's context is cancelled.
func TestLiteLLMHealthCancelled(t *testing.T) {
	up := &hangingUpstream{hung: make(chan string, 4)}
	s, _ := modelInfoServer(t, up, func(c *Config) { c.ModelHealthTimeout = -1 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest("GET", "/health", nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		s.ServeHTTP(rec, req)
		close(done)
	}()
	for range 2 { // both hanging deployments' requests reached the upstream
		select {
		case <-up.hung:
		case <-time.After(10 * time.Second):
			t.Fatal("the hanging deployments were not checked at once")
		}
	}
	select {
	case <-done:
		t.Fatal("/health answered while a deployment's check was still running, without a timeout")
	default:
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("/health did not stop when its request was cancelled")
	}
}

// TestLiteLLMHealthUnnarrowedChecksModelGroupsOnly: without model or model_id, /health calls
// the model groups' members only, never the catalogued models of a provider (hundreds of paid
// calls for an OpenAI key); with no model groups it is a 400 naming model, and no upstream
// call is made.
func TestLiteLLMHealthUnnarrowedChecksModelGroupsOnly(t *testing.T) {
	var calls atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var body struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen[body.Model] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"`+body.Model+`","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(up.Close)
	for _, groups := range []map[string]completions.ModelGroup{{"grp": {Models: []string{"openai/gpt-4o-mini"}}}, nil} {
		calls.Store(0)
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-test"}))
		st := newTestStore(t)
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, ModelGroups: groups})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(g.Deployments()); n < 20 {
			t.Fatalf("the catalogue gives openai only %d deployments: the test needs many", n)
		}
		s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
		if err := Completions(g)(s); err != nil {
			t.Fatal(err)
		}
		r := do(t, s, "GET", "/health", testKey, "")
		if groups == nil {
			if r.status != http.StatusBadRequest || !strings.Contains(r.raw, "model") || calls.Load() != 0 {
				t.Errorf("no model groups: %d %s after %d upstream calls, want a 400 naming model and none", r.status, r.raw, calls.Load())
			}
			// Narrowed, it still checks a catalogued model.
			h := healthOf(t, do(t, s, "GET", "/health?model=openai/gpt-4o", testKey, ""))
			if h.HealthyCount != 1 || calls.Load() != 1 {
				t.Errorf("model=openai/gpt-4o: %+v after %d calls", h, calls.Load())
			}
			continue
		}
		h := healthOf(t, r)
		if h.HealthyCount != 1 || h.UnhealthyCount != 0 || calls.Load() != 1 || !seen["gpt-4o-mini"] {
			t.Errorf("unnarrowed with one model group: %+v after %d upstream calls (%v), want only the group's member", h, calls.Load(), seen)
		}
	}
}
