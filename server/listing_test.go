package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
)

// ids returns the value of field of each item of a listing's data.
func ids(t *testing.T, r reply, field string) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.raw)
	}
	data, ok := r.body["data"].([]any)
	if !ok {
		t.Fatalf("list without data: %s", r.raw)
	}
	out := []string{}
	for _, d := range data {
		out = append(out, fmt.Sprint(d.(map[string]any)[field]))
	}
	return out
}

// listingErrors checks the 422s every listing route gives, each naming its parameter.
func listingErrors(t *testing.T, h http.Handler, path string) {
	t.Helper()
	for _, c := range []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=x", "limit"},
		{"cursor=nope", "cursor"}, {"created_after=yesterday", "created_after"},
		{"created_after=2026-01-02T00:00:00Z&created_before=2026-01-01T00:00:00Z", "created_after"},
		{"status=sleeping", "status"},
	} {
		wantError(t, do(t, h, "GET", path+"?"+c.query, testKey, ""), 422, KindValidation, c.field)
	}
}

func TestTrainingJobsAndModelsListAndDelete(t *testing.T) {
	e := routersServer(t)
	var jobs, models []string
	for range 3 {
		r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, fmt.Sprintf(`{"Data_URLs": [%q]}`, e.files.URL+"/train.json"))
		if r.status != http.StatusAccepted {
			t.Fatalf("train: %d %s", r.status, r.raw)
		}
		id := r.body["training_job_id"].(string)
		st := e.waitJob(t, testKey, id)
		jobs = append([]string{id}, jobs...) // newest first
		models = append([]string{st.body["model_id"].(string)}, models...)
		time.Sleep(2 * time.Millisecond) // distinct creation times
	}
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs", testKey, ""), "training_job_id"); fmt.Sprint(got) != fmt.Sprint(jobs) {
		t.Fatalf("jobs %v, want newest first %v", got, jobs)
	}
	// Paging: 2 + 1, with a cursor between.
	p1 := do(t, e.h, "GET", "/api/v1/routers/train/jobs?limit=2", testKey, "")
	cur, _ := p1.body["next_cursor"].(string)
	if got := ids(t, p1, "training_job_id"); fmt.Sprint(got) != fmt.Sprint(jobs[:2]) || cur == "" {
		t.Fatalf("page 1: %s", p1.raw)
	}
	p2 := do(t, e.h, "GET", "/api/v1/routers/train/jobs?limit=2&cursor="+cur, testKey, "")
	if got := ids(t, p2, "training_job_id"); fmt.Sprint(got) != fmt.Sprint(jobs[2:]) || p2.body["next_cursor"] != nil {
		t.Fatalf("page 2: %s", p2.raw)
	}
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs?status=failed", testKey, ""), "training_job_id"); len(got) != 0 {
		t.Errorf("status=failed: %v", got)
	}
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs?status=queued,completed", testKey, ""), "training_job_id"); len(got) != 3 {
		t.Errorf("status=queued,completed: %v", got)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs?created_after="+future, testKey, ""), "training_job_id"); len(got) != 0 {
		t.Errorf("created_after the future: %v", got)
	}
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/models", testKey, ""), "model_id"); fmt.Sprint(got) != fmt.Sprint(models) {
		t.Fatalf("models %v, want %v", got, models)
	}
	// Another key sees nothing and deletes nothing.
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs", routersOtherKey, ""), "training_job_id"); len(got) != 0 {
		t.Fatalf("other key sees %v", got)
	}
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/models", routersOtherKey, ""), "model_id"); len(got) != 0 {
		t.Fatalf("other key sees %v", got)
	}
	wantError(t, do(t, e.h, "DELETE", "/api/v1/routers/models/"+models[0], routersOtherKey, ""), 404, KindNotFound, models[0])
	wantError(t, do(t, e.h, "DELETE", "/api/v1/routers/train/jobs/"+jobs[0], routersOtherKey, ""), 404, KindNotFound, jobs[0])
	listingErrors(t, e.h, "/api/v1/routers/train/jobs")
	listingErrors(t, e.h, "/api/v1/routers/models")

	// Delete a model: gone from details, predictions and the listing; the others stay.
	d := do(t, e.h, "DELETE", "/api/v1/routers/models/"+models[0], testKey, "")
	if d.status != 200 || d.body["deleted"] != true || d.body["id"] != models[0] || d.body["object"] != "router_model" {
		t.Fatalf("delete model: %d %s", d.status, d.raw)
	}
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/models?model_id="+models[0], testKey, ""), 404, KindNotFound, models[0])
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, fmt.Sprintf(`{"model_id": %q, "inputs": ["x"]}`, models[0])), 404, KindNotFound, models[0])
	wantError(t, do(t, e.h, "DELETE", "/api/v1/routers/models/"+models[0], testKey, ""), 404, KindNotFound, models[0])
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/models", testKey, ""), "model_id"); fmt.Sprint(got) != fmt.Sprint(models[1:]) {
		t.Fatalf("models after delete %v", got)
	}
	if p := do(t, e.h, "POST", "/api/v1/routers/predict", testKey, fmt.Sprintf(`{"model_id": %q, "inputs": ["x"]}`, models[1])); p.status != 200 {
		t.Fatalf("a kept model no longer predicts: %d %s", p.status, p.raw)
	}
	// Delete a job: its status is gone, its model stays.
	d = do(t, e.h, "DELETE", "/api/v1/routers/train/jobs/"+jobs[1], testKey, "")
	if d.status != 200 || d.body["deleted"] != true || d.body["object"] != "training_job" || d.body["cancelled"] != nil {
		t.Fatalf("delete job: %d %s", d.status, d.raw)
	}
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/train/status?task_id="+jobs[1], testKey, ""), 404, KindNotFound, jobs[1])
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs", testKey, ""), "training_job_id"); fmt.Sprint(got) != fmt.Sprint([]string{jobs[0], jobs[2]}) {
		t.Fatalf("jobs after delete %v", got)
	}
	if r := do(t, e.h, "GET", "/api/v1/routers/models?model_id="+models[1], testKey, ""); r.status != 200 {
		t.Fatalf("the deleted job's model went with it: %d %s", r.status, r.raw)
	}
}

func TestOptimizationJobsListAndDelete(t *testing.T) {
	var blocking atomic.Bool
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return blocking.Load() }})
	submit := func() string {
		r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"],"n_iterations":1,"overall_timeout_seconds":300,"sandbox_timeout_seconds":60}`)
		if r.status != 202 {
			t.Fatalf("submit: %d %s", r.status, r.raw)
		}
		return r.body["job_id"].(string)
	}
	done := submit()
	if st := e.wait(t, done); st.body["status"] != "completed" {
		t.Fatalf("job: %s", st.raw)
	}
	res := e.call(t, "GET", "/api/v1/optimize/results?job_id="+done, testKey, "")
	url := res.body["results"].([]any)[0].(map[string]any)["agent_code_url"].(string)
	path := strings.TrimPrefix(url, e.hs.URL)
	if r := e.call(t, "GET", path, "", ""); r.status != 200 {
		t.Fatalf("artifact before delete: %d", r.status)
	}
	time.Sleep(2 * time.Millisecond)
	blocking.Store(true)
	running := submit()
	deadline := time.Now().Add(20 * time.Second)
	for e.call(t, "GET", "/api/v1/optimize/status?job_id="+running, testKey, "").body["status"] != "running" {
		if time.Now().After(deadline) {
			t.Fatal("job never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := ids(t, e.call(t, "GET", "/api/v1/optimize/jobs", testKey, ""), "job_id"); fmt.Sprint(got) != fmt.Sprint([]string{running, done}) {
		t.Fatalf("jobs %v, want [%s %s]", got, running, done)
	}
	if got := ids(t, e.call(t, "GET", "/api/v1/optimize/jobs?status=completed", testKey, ""), "job_id"); fmt.Sprint(got) != fmt.Sprint([]string{done}) {
		t.Fatalf("completed jobs %v", got)
	}
	if got := ids(t, e.call(t, "GET", "/api/v1/optimize/jobs", optimizeOtherKey, ""), "job_id"); len(got) != 0 {
		t.Fatalf("other key sees %v", got)
	}
	listingErrors(t, e.s, "/api/v1/optimize/jobs")
	wantError(t, e.call(t, "DELETE", "/api/v1/optimize/jobs/"+done, optimizeOtherKey, ""), 404, KindNotFound, done)

	// A running job is cancelled, waited for, then deleted.
	d := e.call(t, "DELETE", "/api/v1/optimize/jobs/"+running, testKey, "")
	if d.status != 200 || d.body["deleted"] != true || d.body["cancelled"] != true {
		t.Fatalf("delete running: %d %s", d.status, d.raw)
	}
	wantError(t, e.call(t, "GET", "/api/v1/optimize/status?job_id="+running, testKey, ""), 404, KindNotFound, running)
	// A finished one takes its best agent.py with it.
	d = e.call(t, "DELETE", "/api/v1/optimize/jobs/"+done, testKey, "")
	if d.status != 200 || d.body["artifacts"] != 1.0 || d.body["cancelled"] != nil {
		t.Fatalf("delete done: %d %s", d.status, d.raw)
	}
	if r := e.call(t, "GET", path, "", ""); r.status != 404 {
		t.Fatalf("artifact after delete: %d", r.status)
	}
	wantError(t, e.call(t, "DELETE", "/api/v1/optimize/jobs/"+done, testKey, ""), 404, KindNotFound, done)
	if got := ids(t, e.call(t, "GET", "/api/v1/optimize/jobs", testKey, ""), "job_id"); len(got) != 0 {
		t.Fatalf("jobs after delete %v", got)
	}
	// The freed slot counts: the key can submit again up to its limit.
	blocking.Store(false)
	if st := e.wait(t, submit()); st.body["status"] != "completed" {
		t.Fatalf("job after deletes: %s", st.raw)
	}
}

func TestConversationsListReadAndDelete(t *testing.T) {
	hs, s, _ := completionsServer(t)
	var convs []string
	for i := range 3 {
		resp, b := post(t, hs.URL+"/api/v1/completions", testKey, fmt.Sprintf(`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"question %d"}]}]}`, i))
		if resp.StatusCode != 200 {
			t.Fatalf("completion: %d %s", resp.StatusCode, b)
		}
		convs = append([]string{decodeMap(t, b)["conversationId"].(string)}, convs...)
		time.Sleep(2 * time.Millisecond)
	}
	// A second turn in the oldest conversation.
	resp, b := post(t, hs.URL+"/api/v1/completions", testKey, fmt.Sprintf(`{"models":["up/ok"],"conversationId":%q,"messages":[{"role":"user","content":[{"type":"text","text":"and then?"}]}]}`, convs[2]))
	if resp.StatusCode != 200 {
		t.Fatalf("second turn: %d %s", resp.StatusCode, b)
	}
	list := do(t, s, "GET", "/api/v1/conversations", testKey, "")
	if got := ids(t, list, "id"); fmt.Sprint(got) != fmt.Sprint(convs) {
		t.Fatalf("conversations %v, want %v", got, convs)
	}
	first := list.body["data"].([]any)[2].(map[string]any)
	if first["title"] != "question 0" || first["message_count"] != 4.0 || first["object"] != "conversation" {
		t.Errorf("summary: %v", first)
	}
	if got := ids(t, do(t, s, "GET", "/api/v1/conversations", completionsOtherKey, ""), "id"); len(got) != 0 {
		t.Fatalf("other key sees %v", got)
	}
	listingErrors(t, s, "/api/v1/conversations")

	one := do(t, s, "GET", "/api/v1/conversations/"+convs[2], testKey, "")
	if one.status != 200 || one.body["id"] != convs[2] || one.body["message_count"] != 4.0 || one.body["owner"] != nil {
		t.Fatalf("conversation: %d %s", one.status, one.raw)
	}
	// Messages, oldest first, in pages of 3 then 1.
	m1 := do(t, s, "GET", "/api/v1/conversations/"+convs[2]+"/messages?limit=3", testKey, "")
	cur, _ := m1.body["next_cursor"].(string)
	if got := ids(t, m1, "role"); fmt.Sprint(got) != "[user assistant user]" || cur == "" {
		t.Fatalf("messages page 1: %s", m1.raw)
	}
	m2 := do(t, s, "GET", "/api/v1/conversations/"+convs[2]+"/messages?limit=3&cursor="+cur, testKey, "")
	if got := ids(t, m2, "seq"); fmt.Sprint(got) != "[3]" || m2.body["next_cursor"] != nil {
		t.Fatalf("messages page 2: %s", m2.raw)
	}
	wantError(t, do(t, s, "GET", "/api/v1/conversations/"+convs[2]+"/messages?cursor=x", testKey, ""), 422, KindValidation, "cursor")
	for _, q := range []string{"created_after=2030-01-01T00:00:00Z", "created_before=1", "status=a"} {
		wantError(t, do(t, s, "GET", "/api/v1/conversations/"+convs[2]+"/messages?"+q, testKey, ""), 422, KindValidation, "take only limit and cursor")
	}
	wantError(t, do(t, s, "GET", "/api/v1/conversations/"+convs[2]+"/messages", completionsOtherKey, ""), 404, KindNotFound, convs[2])
	wantError(t, do(t, s, "DELETE", "/api/v1/conversations/"+convs[2], completionsOtherKey, ""), 404, KindNotFound, convs[2])

	d := do(t, s, "DELETE", "/api/v1/conversations/"+convs[2], testKey, "")
	if d.status != 200 || d.body["deleted"] != true || d.body["messages"] != 4.0 {
		t.Fatalf("delete: %d %s", d.status, d.raw)
	}
	wantError(t, do(t, s, "GET", "/api/v1/conversations/"+convs[2], testKey, ""), 404, KindNotFound, convs[2])
	wantError(t, do(t, s, "GET", "/api/v1/conversations/"+convs[2]+"/messages", testKey, ""), 404, KindNotFound, convs[2])
	if got := ids(t, do(t, s, "GET", "/api/v1/conversations", testKey, ""), "id"); fmt.Sprint(got) != fmt.Sprint(convs[:2]) {
		t.Fatalf("after delete %v", got)
	}
	// Continuing a deleted conversation is a 404, not a resurrection.
	resp, b = post(t, hs.URL+"/api/v1/completions", testKey, fmt.Sprintf(`{"models":["up/ok"],"conversationId":%q,"messages":[{"role":"user","content":[{"type":"text","text":"still there?"}]}]}`, convs[2]))
	if resp.StatusCode != 404 {
		t.Fatalf("continue deleted: %d %s", resp.StatusCode, b)
	}
	// No message of it is left in the store.
	entries, err := s.cfg.Store.List(t.Context(), store.Messages, store.ListOptions{Prefix: convs[2] + "/"})
	if err != nil || len(entries) != 0 {
		t.Fatalf("messages left: %d %v", len(entries), err)
	}
}

func TestListingRoutesInOpenAPI(t *testing.T) {
	check := func(h http.Handler, want map[string]string) {
		t.Helper()
		r := do(t, h, "GET", "/api/v1/openapi.json", "", "")
		paths, _ := r.body["paths"].(map[string]any)
		for p, method := range want {
			op, _ := paths[p].(map[string]any)[method].(map[string]any)
			if op == nil {
				t.Errorf("openapi lacks %s %s", method, p)
				continue
			}
			if method == "get" && !strings.Contains(p, "{") || strings.HasSuffix(p, "/messages") {
				names := []string{}
				for _, q := range op["parameters"].([]any) {
					names = append(names, q.(map[string]any)["name"].(string))
				}
				if !strings.Contains(strings.Join(names, ","), "limit") || !strings.Contains(strings.Join(names, ","), "cursor") {
					t.Errorf("%s %s parameters %v lack limit/cursor", method, p, names)
				}
			}
		}
	}
	e := optimizeServer(t, fakeAgentRunner{})
	check(e.s, map[string]string{
		"/api/v1/optimize/jobs": "get", "/api/v1/optimize/jobs/{job_id}": "delete",
		"/api/v1/conversations": "get", "/api/v1/conversations/{conversation_id}": "delete",
		"/api/v1/conversations/{conversation_id}/messages": "get",
	})
	r := routersServer(t)
	check(r.h, map[string]string{
		"/api/v1/routers/train/jobs": "get", "/api/v1/routers/train/jobs/{task_id}": "delete",
		"/api/v1/routers/models": "get", "/api/v1/routers/models/{model_id}": "delete",
	})
	doc := do(t, r.h, "GET", "/api/v1/openapi.json", "", "").raw
	if !strings.Contains(doc, `"oneOf"`) || !strings.Contains(doc, `"next_cursor"`) {
		t.Error("GET /api/v1/routers/models does not document both its answers (details or a page)")
	}
}
