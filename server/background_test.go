package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// slowUpstream is a scripted OpenAI upstream: model "slow" answers after 300 ms, model
// "hang" never answers (it waits for its request's context, and counts the cancellations).
type slowUpstream struct {
	mu        sync.Mutex
	calls     int
	cancelled int
}

func (u *slowUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string `json:"model"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.calls++
	u.mu.Unlock()
	wait := 300 * time.Millisecond
	if body.Model == "hang" {
		wait = time.Hour
	}
	select {
	case <-r.Context().Done():
		u.mu.Lock()
		u.cancelled++
		u.mu.Unlock()
		return
	case <-time.After(wait):
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"`+body.Model+`","choices":[{"index":0,"message":{"role":"assistant","content":"Thought it through."},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}`)
}

func (u *slowUpstream) counts() (calls, cancelled int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls, u.cancelled
}

// backgroundReplica is one server on st whose provider "up" is ups, counting a run stale
// after 400 ms without a heartbeat.
func backgroundReplica(t *testing.T, st *store.Store, ups *httptest.Server) *httptest.Server {
	t.Helper()
	return backgroundReplicaStaleAfter(t, st, ups, 400*time.Millisecond)
}

// backgroundReplicaStaleAfter is backgroundReplica counting a run stale after staleAfter
// without a heartbeat. A test whose runs must stay alive across replicas takes a long one:
// on a loaded machine a 400 ms heartbeat can be late, and a reader on another replica
// would end the live run as failed.
func backgroundReplicaStaleAfter(t *testing.T, st *store.Store, ups *httptest.Server, staleAfter time.Duration) *httptest.Server {
	t.Helper()
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, DefaultMaxRetries: -1,
		StoredResponses: completions.StoredResponsesOptions{BackgroundStaleAfter: staleAfter}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey, completionsOtherKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

// pollStatus reads GET /v1/responses/{id} until its status is want (5 s at most).
func pollStatus(t *testing.T, base, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, b := do2(t, "GET", base+"/v1/responses/"+id, testKey, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", id, resp.StatusCode, b)
		}
		o := responseOf(t, b)
		if o["status"] == want {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v, want %s", id, o["status"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBackgroundResponsesOverHTTP: POST background: true answers 200 at once with a queued
// response; GET shows it in progress, then completed with the answer; another key cannot
// see or cancel it; cancel of the ended one answers it as it is; store: false is a 400
// naming background (background with stream: background_stream_test.go).
func TestBackgroundResponsesOverHTTP(t *testing.T) {
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs := backgroundReplica(t, newTestStore(t), ups)
	start := time.Now()
	resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/slow","input":"Think.","background":true}`, nil)
	o := responseOf(t, b)
	if resp.StatusCode != 200 || o["status"] != "queued" && o["status"] != "in_progress" || o["background"] != true || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("start: %d %s", resp.StatusCode, b)
	}
	id := o["id"].(string)
	if resp, b := do2(t, "GET", hs.URL+"/v1/responses/"+id, completionsOtherKey, "", nil); resp.StatusCode != 404 {
		t.Fatalf("another key read it: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "POST", hs.URL+"/v1/responses/"+id+"/cancel", completionsOtherKey, "", nil); resp.StatusCode != 404 {
		t.Fatalf("another key cancelled it: %d %s", resp.StatusCode, b)
	}
	done := pollStatus(t, hs.URL, id, "completed")
	if !strings.Contains(mustJSON(t, done["output"]), "Thought it through.") {
		t.Fatalf("completed: %v", done)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/responses/"+id+"/cancel", testKey, "", nil)
	if resp.StatusCode != 200 || responseOf(t, b)["status"] != "completed" {
		t.Fatalf("cancel of the completed one: %d %s", resp.StatusCode, b)
	}
	for body, param := range map[string]string{
		`{"model":"up/slow","input":"x","background":true,"store":false}`: "background",
	} {
		resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, body, nil)
		e := wantOpenAIError(t, body, resp, b, 400, "invalid_request_error", "")
		if e.Param == nil || *e.Param != param {
			t.Fatalf("%s: param %v, want %s (%s)", body, e.Param, param, b)
		}
	}
	// A synchronous response still cannot be cancelled.
	resp, b = do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/slow","input":"x"}`, nil)
	sid := responseOf(t, b)["id"].(string)
	resp, b = do2(t, "POST", hs.URL+"/v1/responses/"+sid+"/cancel", testKey, "", nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "Cannot cancel a synchronous response.") {
		t.Fatalf("cancel of a synchronous response: %d %s", resp.StatusCode, b)
	}
}

// TestBackgroundResponsesCancelAcrossReplicas: a run on replica A reads in progress on B;
// a cancel on B answers cancelled and stops A's upstream call; DELETE of a running one
// stops it too.
func TestBackgroundResponsesCancelAcrossReplicas(t *testing.T) {
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	a, b := backgroundReplica(t, st, ups), backgroundReplica(t, st, ups)
	resp, body := do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/hang","input":"Think.","background":true}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("start: %d %s", resp.StatusCode, body)
	}
	id := responseOf(t, body)["id"].(string)
	pollStatus(t, b.URL, id, "in_progress")
	resp, body = do2(t, "POST", b.URL+"/v1/responses/"+id+"/cancel", testKey, "", nil)
	if resp.StatusCode != 200 || responseOf(t, body)["status"] != "cancelled" {
		t.Fatalf("cancel on B: %d %s", resp.StatusCode, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, c := up.counts(); c < 1; _, c = up.counts() {
		if time.Now().After(deadline) {
			t.Fatal("A's upstream call was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pollStatus(t, a.URL, id, "cancelled")

	resp, body = do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/hang","input":"Again.","background":true}`, nil)
	id2 := responseOf(t, body)["id"].(string)
	pollStatus(t, b.URL, id2, "in_progress")
	if resp, body := do2(t, "DELETE", b.URL+"/v1/responses/"+id2, testKey, "", nil); resp.StatusCode != 200 {
		t.Fatalf("delete on B: %d %s", resp.StatusCode, body)
	}
	deadline = time.Now().Add(5 * time.Second)
	for _, c := up.counts(); c < 2; _, c = up.counts() {
		if time.Now().After(deadline) {
			t.Fatal("the deleted run's upstream call was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBackgroundResponsesStaleRun: a run whose process died (in progress, heartbeat
// stale) reads failed with an error object.
func TestBackgroundResponsesStaleRun(t *testing.T) {
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	a := backgroundReplica(t, st, ups)
	resp, body := do2(t, "POST", a.URL+"/v1/responses", testKey, `{"model":"up/hang","input":"Think.","background":true}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("start: %d %s", resp.StatusCode, body)
	}
	id := responseOf(t, body)["id"].(string)
	// The process "dies": its record stays in progress with a heartbeat from long ago.
	raw, err := st.Get(t.Context(), store.Responses, id)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	json.Unmarshal(raw, &rec)
	run := rec["run"].(map[string]any)
	run["id"] = "run_of_a_dead_process"
	run["heartbeat"] = time.Now().Add(-time.Hour).Format(time.RFC3339Nano)
	raw, _ = json.Marshal(rec)
	if err := st.Put(t.Context(), store.Responses, id, raw); err != nil {
		t.Fatal(err)
	}
	o := pollStatus(t, a.URL, id, "failed")
	if e, _ := o["error"].(map[string]any); e == nil || e["code"] == "" || e["message"] == "" {
		t.Fatalf("failed without an error: %v", o)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
