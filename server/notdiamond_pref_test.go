package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/trainer"
)

// Not Diamond's workflow end to end: CustomRouter.fit's upload answers a pref_ preference;
// model selection with it ranks with the default router until the job completes and with
// the trained router after; feedback personalizes it; fit again with that preference_id
// retrains the same preference; an unknown one is refused before a job is queued.
func TestNotDiamondTrainingBindsPreference(t *testing.T) {
	st := newTestStore(t)
	quiet := slog.New(slog.DiscardHandler)
	svc, err := trainer.New(st, trainer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc), Logger: quiet})
	srv, err := New(Config{Store: st, APIKeys: []string{testKey, routersOtherKey}, Logger: quiet}, CustomRouters(svc), ModelSelection(sel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	e := &routersEnv{h: srv}

	ctype, body := multipartBody(t, sdkFields("True"), "dataset_file", "joint.csv", ndJointCSV(t, 60, false))
	r := postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
	pref, _ := r.body["preference_id"].(string)
	jobID, _ := r.body["training_job_id"].(string)
	if r.status != http.StatusOK || !strings.HasPrefix(pref, routing.PreferencePrefix) || !strings.HasPrefix(jobID, "tj_") {
		t.Fatalf("trainCustomRouter: %d %s; want a pref_ preference and the job", r.status, r.raw)
	}
	selectBody := fmt.Sprintf(`{"messages":[{"role":"user","content":"please integral and algebra, then prime"}],
		"llm_providers":[{"provider":"anthropic","model":"claude-3-5-sonnet-20240620"},{"provider":"openai","model":"gpt-4o"},
		{"provider":"mistral","model":"mistral-large-latest"}],"preference_id":%q}`, pref)
	source := func() (string, string) {
		t.Helper()
		s := do(t, e.h, "POST", "/v2/modelRouter/modelSelect", testKey, selectBody)
		if s.status != http.StatusOK {
			t.Fatalf("select: %d %s", s.status, s.raw)
		}
		p := s.body["providers"].([]any)[0].(map[string]any)
		return fmt.Sprint(p["provider"], "/", p["model"]), p["score_source"].(string)
	}
	// queued: the learned default router ranks (the job has not run: the service is not started)
	if _, src := source(); src != routing.SourceLearned {
		t.Fatalf("before the job completed the pick's score_source is %s, want learned", src)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.waitJob(t, testKey, jobID); st.body["status"] != "completed" {
		t.Fatalf("job: %s", st.raw)
	}
	if pick, src := source(); pick != "openai/gpt-4o" || src != routing.SourceRouter {
		t.Fatalf("after the job completed the pick is %s by %s, want openai/gpt-4o by router (the maths topic's best)", pick, src)
	}

	// fit again naming the preference: the same preference, a new job
	fields := append(sdkFields("True"), [2]string{"preference_id", pref})
	ctype, body = multipartBody(t, fields, "dataset_file", "joint.csv", ndJointCSV(t, 30, false))
	r = postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
	if r.status != http.StatusOK || r.body["preference_id"] != pref || r.body["training_job_id"] == jobID {
		t.Fatalf("retrain: %d %s; want preference %s with a new job", r.status, r.raw, pref)
	}
	p, err := sel.Preference(context.Background(), ownerOfKey(t, testKey), pref)
	if err != nil || p.RouterTrainingJobID != r.body["training_job_id"] {
		t.Fatalf("preference after the retrain: %+v, %v", p, err)
	}

	// an unknown preference, or another key's, is refused and queues nothing
	jobs := func() int {
		l := do(t, e.h, "GET", "/api/v1/routers/train/jobs", testKey, "")
		return len(l.body["data"].([]any))
	}
	before := jobs()
	for _, key := range []string{testKey, routersOtherKey} {
		ctype, body = multipartBody(t, append(sdkFields("True"), [2]string{"preference_id", "pref_000000000000000000000000"}), "dataset_file", "joint.csv", ndJointCSV(t, 20, false))
		wantError(t, postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", key, ctype, body), http.StatusBadRequest, KindBadRequest, "preference_id")
	}
	ctype, body = multipartBody(t, append(sdkFields("True"), [2]string{"preference_id", pref}), "dataset_file", "joint.csv", ndJointCSV(t, 20, false))
	wantError(t, postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", routersOtherKey, ctype, body), http.StatusBadRequest, KindBadRequest, "preference_id")
	if after := jobs(); after != before {
		t.Errorf("refused requests queued %d jobs", after-before)
	}
}

// Not Diamond's Python SDK reports each call's speed to /v2/report/metrics/latency.
func TestNotDiamondLatencyReportRoute(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	code, body := postSelect(t, ts, "/v2/modelRouter/modelSelect", testKey,
		`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"}],"metric":"accuracy","max_model_depth":1,"hash_content":false}`)
	sess, _ := body["session_id"].(string)
	if code != http.StatusOK || sess == "" {
		t.Fatalf("select: %d %v", code, body)
	}
	report := fmt.Sprintf(`{"session_id":%q,"provider":{"provider":"openai","model":"gpt-4o"},"feedback":{"tokens_per_second":%s}}`, sess, "%s")
	for _, path := range []string{"/v2/report/metrics/latency", "/api/v1/feedback/latency"} {
		code, body = postSelect(t, ts, path, testKey, fmt.Sprintf(report, "61.5"))
		if code != http.StatusOK || body["provider"] != "openai/gpt-4o" {
			t.Errorf("%s: %d %v", path, code, body)
		}
		code, body = postSelect(t, ts, path, testKey, fmt.Sprintf(report, "0"))
		if msg, _ := body["message"].(string); code != http.StatusBadRequest || !strings.HasPrefix(msg, "feedback.tokens_per_second") {
			t.Errorf("%s with 0 tokens per second: %d %v, want 400 naming feedback.tokens_per_second", path, code, body)
		}
	}
}
