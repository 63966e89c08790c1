package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// dataServer serves examples/data (the bundled router training files).
func dataServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "examples", "data"))))
	t.Cleanup(ts.Close)
	return ts.URL
}

// trainerOptions wires the real trainer service (one L2 value to keep the test quick) as
// custom routers and as the preference_id source of model selection.
func trainerOptions(t *testing.T) func(st *store.Store, _ string) []server.Option {
	return func(st *store.Store, _ string) []server.Option {
		svc, err := trainer.New(st,
			trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
			trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			trainer.WithFitOptions(func(o *inference.FitOptions) { o.L2 = []float64{1e-3} }))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})
		return []server.Option{server.CustomRouters(svc), server.ModelSelection(sel)}
	}
}

func TestRouterTrainerAgainstServer(t *testing.T) {
	data := dataServer(t)
	c, _ := realServer(t, trainerOptions(t))
	ctx := context.Background()
	tr := c.RouterTrainer()
	if _, err := tr.Status(ctx); err == nil {
		t.Fatal("status without a job")
	}
	job, err := tr.TrainWithPrices(ctx, map[string]float64{"qwen/qwen2.5-7b-instruct": 0.2, "nvidia/llama-3.1-nemotron-51b-instruct": 0.9},
		data+"/routing_train.json", data+"/routing_train.csv")
	if err != nil {
		t.Fatal(err)
	}
	if job.TrainingJobID == "" || job.Version == "" || tr.JobID() != job.TrainingJobID {
		t.Fatalf("job %+v", job)
	}
	st, err := tr.Wait(ctx, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != client.TrainCompleted || st.ModelID == "" || tr.ModelID() != st.ModelID || st.TrainingConfig == nil ||
		st.TrainingConfig.Timing.TotalTimeSeconds <= 0 || st.StartedAt == "" || st.CompletedAt == "" {
		t.Fatalf("status %+v (%s)", st, st.ErrorMessage)
	}
	m, err := tr.Model(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.ModelID != st.ModelID || m.Status != "active" || m.NumClasses < 2 || m.Metrics == nil || m.EmbeddingModel == "" {
		t.Fatalf("model %+v", m)
	}
	// The frontier was measured with the prices sent (model_prices).
	if m.Tradeoff == nil || m.Tradeoff.Prices["qwen/qwen2.5-7b-instruct"] != 0.2 || len(m.Tradeoff.Frontier) == 0 ||
		m.Tradeoff.Frontier[0].MeanPrice == nil || m.Metrics.Ranking == "" {
		t.Fatalf("tradeoff %+v metrics %+v", m.Tradeoff, m.Metrics)
	}

	// 1,050 inputs: three requests, answers in input order (each input's prediction is the
	// same as predicting it alone).
	inputs := make([]string, 1050)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("Question %d: what is %d plus %d?", i, i, i*7)
	}
	inputs[0], inputs[1049] = "Write a haiku about rain.", "Sort these words alphabetically: pear, apple, fig."
	res, err := tr.Predict(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Predictions) != 1050 || res.Version == "" {
		t.Fatalf("%d predictions", len(res.Predictions))
	}
	for _, i := range []int{0, 499, 500, 1049} {
		one, err := tr.Predict(ctx, inputs[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		if one.Predictions[0].TopModel != res.Predictions[i].TopModel || one.Predictions[0].TopProb != res.Predictions[i].TopProb {
			t.Fatalf("prediction %d out of order", i)
		}
	}
	p := res.Predictions[0]
	if p.TopModel != p.Models[0].Model || p.Models[0].Rank != 1 || p.TopProb <= 0 || p.TopProb > 1 {
		t.Fatalf("prediction %+v", p)
	}

	// The trained model drives model selection through preference_id.
	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "What is 12 times 12?"}},
		LLMProviders: []client.Provider{{Provider: "qwen", Model: "qwen2.5-7b-instruct"}, {Provider: "openai", Model: "gpt-4o-mini"}},
		PreferenceID: m.ModelID,
	})
	if err != nil || sel.Providers[0].ScoreSource != "router" || !(sel.Providers[0].Quality > 0) {
		t.Fatalf("selection with preference_id: %+v %v", sel, err)
	}
}

func TestRouterTrainerErrorsAgainstServer(t *testing.T) {
	data := dataServer(t)
	c, _ := realServer(t, trainerOptions(t))
	ctx := context.Background()
	tr := c.RouterTrainer()
	_, err := tr.Train(ctx)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, "Data_URLs") {
		t.Fatalf("no URLs: %#v", err)
	}
	// A file that is not a dataset: the job fails with a message naming it.
	if _, err := tr.Train(ctx, data+"/README.md"); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Wait(ctx, 20*time.Millisecond)
	if err != nil || st.Status != client.TrainFailed || !strings.Contains(st.ErrorMessage, "README.md") || tr.ModelID() != "" {
		t.Fatalf("bad file: %+v %v", st, err)
	}
	tr.UseModel("rm_nope")
	if _, err := tr.Model(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("unknown model: %v", err)
	}
	if _, err := tr.Predict(ctx, []string{"x"}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("predict unknown model: %v", err)
	}
	// Another key cannot see this key's job.
	other, _ := client.New(client.WithBaseURL(c.BaseURL()), client.WithAPIKey(otherKey))
	otr := other.RouterTrainer()
	otr.UseJob(tr.JobID())
	if _, err := otr.Status(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("another key's job: %v", err)
	}
}

// TestRouterTrainerCancel cancels a queued job (the service is not started, so it stays
// queued): it ends failed saying so, and a second cancel is a 409.
func TestRouterTrainerCancel(t *testing.T) {
	c, _ := realServer(t, func(st *store.Store, _ string) []server.Option {
		svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.CustomRouters(svc)}
	})
	ctx := context.Background()
	tr := c.RouterTrainer()
	if _, err := tr.Cancel(ctx); err == nil {
		t.Fatal("cancel without a job")
	}
	if _, err := tr.Train(ctx, "https://example.com/data.json"); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Cancel(ctx)
	if err != nil || st.Status != client.TrainFailed || !strings.Contains(st.ErrorMessage, "cancelled") || st.TrainingJobID != tr.JobID() {
		t.Fatalf("cancel: %+v, %v", st, err)
	}
	_, err = tr.Cancel(ctx)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
		t.Fatalf("second cancel: %v, want a 409", err)
	}
}
