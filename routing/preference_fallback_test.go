package routing_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// vanishingModels is a fake CustomModels and TrainingJobModels whose router models and
// training jobs a test deletes: every router model prefers acme/chef.
type vanishingModels struct {
	mu     sync.Mutex
	models map[string]bool
	jobs   map[string]string // job id → the model it trained ("" while running)
}

func (v *vanishingModels) Rank(_ context.Context, _, modelID string, texts []string) (*routing.RouterEstimates, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.models[modelID] {
		return nil, routing.ErrNotFound
	}
	out := &routing.RouterEstimates{}
	for range texts {
		out.Texts = append(out.Texts, []routing.ModelProb{{Model: "acme/chef", Prob: 0.9, Quality: 0.9}, {Model: "openai/gpt-4o", Prob: 0.1, Quality: 0.1}})
	}
	return out, nil
}

func (v *vanishingModels) JobModel(_ context.Context, _, jobID string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	m, ok := v.jobs[jobID]
	if !ok {
		return "", routing.ErrNotFound
	}
	return m, nil
}

// TestPreferenceFallsBackWhenItsRouterIsGone: a preference whose router_model_id was
// deleted, and one whose training job was deleted before it trained a router, both rank
// with the learned default router (score_source learned), say so in router_fallback
// (router_deleted, training_job_deleted: unlike a preference whose job still trains) and
// log a warning; the router model named directly is a 404.
func TestPreferenceFallsBackWhenItsRouterIsGone(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	models := &vanishingModels{models: map[string]bool{"rm_a": true}, jobs: map[string]string{"tj_a": ""}}
	sel := routing.NewSelector(routing.Options{Store: memstore.New(), CustomModels: models, Logger: logger})

	byModel, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{RouterModelID: "rm_a"})
	if err != nil {
		t.Fatal(err)
	}
	byJob, err := sel.BindTrainingJob(ctx, "alice", "", "nd", "tj_a")
	if err != nil {
		t.Fatal(err)
	}
	var fallback string
	pick := func(pref string) string {
		t.Helper()
		resp, err := sel.Select(ctx, "alice", &routing.Request{Messages: userMsg("please write python code that merges two lists"),
			LLMProviders: names("acme/chef", "openai/gpt-4o"), PreferenceID: pref})
		if err != nil {
			t.Fatalf("select with %s: %v", pref, err)
		}
		fallback = resp.RouterFallback
		return resp.Providers[0].ScoreSource
	}
	if src := pick(byModel.ID); src != routing.SourceRouter || fallback != "" {
		t.Fatalf("with its router model: score_source %s router_fallback %q, want router and none", src, fallback)
	}
	// Still training: the learned default router ranks, and nothing was lost.
	if src := pick(byJob.ID); src != routing.SourceLearned || fallback != "" {
		t.Fatalf("while its job trains: score_source %s router_fallback %q, want learned and none", src, fallback)
	}

	models.mu.Lock()
	delete(models.models, "rm_a")
	delete(models.jobs, "tj_a")
	models.mu.Unlock()
	for _, c := range []struct{ pref, logged, fallback string }{
		{byModel.ID, "router model is gone", routing.FallbackRouterDeleted},
		{byJob.ID, "training job is gone", routing.FallbackTrainingJobDeleted},
	} {
		logMu.Lock()
		logs.Reset()
		logMu.Unlock()
		if src := pick(c.pref); src != routing.SourceLearned {
			t.Errorf("%s: score_source %s, want learned (the default router's fallback)", c.pref, src)
		}
		if fallback != c.fallback {
			t.Errorf("%s: router_fallback %q, want %q (the response says its router is gone)", c.pref, fallback, c.fallback)
		}
		logMu.Lock()
		got := logs.String()
		logMu.Unlock()
		if !strings.Contains(got, "level=WARN") || !strings.Contains(got, c.logged) || !strings.Contains(got, c.pref) {
			t.Errorf("%s: log %q, want a warning that its %s", c.pref, got, c.logged)
		}
	}

	// A router model named directly (not through a preference) that is gone is still a 404.
	_, err = sel.Select(ctx, "alice", &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/chef", "openai/gpt-4o"), PreferenceID: "rm_a"})
	if !errors.Is(err, routing.ErrNotFound) {
		t.Errorf("a deleted router model named directly: err = %v, want ErrNotFound", err)
	}
}

// lockedWriter serialises writes to a buffer shared with the test.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
