package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

func TestTrainAndPredictCommands(t *testing.T) {
	data := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "..", "examples", "data"))))
	defer data.Close()
	url := cliServer(t, func(st *store.Store) []server.Option {
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
		return []server.Option{server.CustomRouters(svc)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)

	// Flags after the URLs work too.
	code, out, errOut := cli(t, "train", data.URL+"/routing_train.json", "--poll", "50ms", data.URL+"/routing_train.csv")
	if code != 0 {
		t.Fatalf("train: %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("stderr:\n%s\nstdout:\n%s", errOut, out)
	if !regexp.MustCompile(`(?m)^\[\d\d:\d\d\] completed  model rm_\S+$`).MatchString(errOut) {
		t.Fatalf("progress lines:\n%s", errOut)
	}
	m := regexp.MustCompile(`Router model\s+(rm_\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("summary:\n%s", out)
	}
	for _, want := range []string{"Held-out metrics", "top-1 hit rate", "top-3 hit rate", "accuracy", "always ", "switchyard predict --model " + m[1]} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary lacks %q:\n%s", want, out)
		}
	}

	// Predict from arguments and a file.
	file := filepath.Join(t.TempDir(), "inputs.txt")
	os.WriteFile(file, []byte("Write a haiku about rain.\n\nWhat is 12 times 12?\n"), 0o644)
	code, out, errOut = cli(t, "predict", "--model", m[1], "What is the capital of France?", "--file", file, "--top", "2")
	if code != 0 {
		t.Fatalf("predict: %d\n%s", code, errOut)
	}
	rows := regexp.MustCompile(`(?m)^[123]\s+.+\s+\S+/\S+\s+0\.\d{3}`).FindAllString(out, -1)
	if len(rows) != 3 || !strings.Contains(out, "What is the capital of France?") || !strings.Contains(out, "What is 12 times 12?") {
		t.Fatalf("predict table:\n%s", out)
	}
	code, out, _ = cli(t, "predict", "--model", m[1], "--json", "hello")
	if code != 0 || !strings.Contains(out, `"top_model"`) {
		t.Fatalf("predict --json: %s", out)
	}

	// A dataset that cannot train fails with the job's message.
	code, _, errOut = cli(t, "train", "--poll", "20ms", data.URL+"/README.md")
	if code != 1 || !strings.Contains(errOut, "failed") || !strings.Contains(errOut, "README.md") {
		t.Fatalf("bad dataset: %d %s", code, errOut)
	}
	code, _, errOut = cli(t, "predict", "--model", "rm_nope", "x")
	if code != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("unknown model: %d %s", code, errOut)
	}
	code, _, errOut = cli(t, "train")
	if code != 1 || !strings.Contains(errOut, "at least one dataset URL") {
		t.Fatalf("no URLs: %d %s", code, errOut)
	}
	// --no-wait prints the job id; --job follows it.
	code, out, _ = cli(t, "train", "--no-wait", data.URL+"/routing_train.json")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "tj_") {
		t.Fatalf("no-wait: %q", out)
	}
	code, out, errOut = cli(t, "train", "--job", id, "--poll", "50ms", "--json")
	if code != 0 || !strings.Contains(out, `"training_job_id": "`+id+`"`) || !strings.Contains(out, `"top1_hit_rate"`) {
		t.Fatalf("follow: %d\n%s\n%s", code, out, errOut)
	}
}

// TestTrainCancelCommand cancels a queued job (the service is not started, so it stays
// queued) with `train --job ID --cancel`; a second cancel is a 409.
func TestTrainCancelCommand(t *testing.T) {
	url := cliServer(t, func(st *store.Store) []server.Option {
		svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.CustomRouters(svc)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	code, out, errOut := cli(t, "train", "--no-wait", "https://example.com/data.json")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "tj_") {
		t.Fatalf("no-wait: %d %q %s", code, out, errOut)
	}
	code, out, errOut = cli(t, "train", "--job", id, "--cancel")
	if code != 0 || strings.TrimSpace(out) != "job "+id+" failed" {
		t.Fatalf("cancel: %d %q %s", code, out, errOut)
	}
	code, _, errOut = cli(t, "train", "--job", id, "--cancel")
	if code != 1 || !strings.Contains(errOut, "409") {
		t.Fatalf("second cancel: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "train", "--cancel"); code != 1 || !strings.Contains(errOut, "--cancel needs --job") {
		t.Fatalf("cancel without a job: %d %s", code, errOut)
	}
}

// switchyard train took dataset URLs only: a Not Diamond user's joint CSV on disk had to be
// served over HTTP first. --file uploads a local file (records, or the joint CSV with
// --prompt-column, --minimize, --llm-providers).
func TestTrainFileCommand(t *testing.T) {
	url := cliServer(t, func(st *store.Store) []server.Option {
		svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.CustomRouters(svc)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	code, out, errOut := cli(t, "train", "--no-wait", "--file", filepath.Join("..", "..", "examples", "data", "routing_train.csv"))
	if id := strings.TrimSpace(out); code != 0 || !strings.HasPrefix(id, "tj_") {
		t.Fatalf("--file records: %d %q %s", code, out, errOut)
	}
	var joint strings.Builder
	joint.WriteString("prompt,openai/gpt-4o/score,openai/gpt-4o-mini/score\n")
	for i := range 12 {
		joint.WriteString("question number " + strings.Repeat("x", i+1) + ",1,0\n")
	}
	path := filepath.Join(t.TempDir(), "joint.csv")
	if err := os.WriteFile(path, []byte(joint.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "train", "--no-wait", "--file", path, "--prompt-column", "prompt", "--minimize", "--llm-providers", "openai/gpt-4o,openai/gpt-4o-mini")
	if id := strings.TrimSpace(out); code != 0 || !strings.HasPrefix(id, "tj_") {
		t.Fatalf("--file joint CSV: %d %q %s", code, out, errOut)
	}
	code, _, errOut = cli(t, "train", "--no-wait", "--file", path, "--prompt-column", "prompt", "--llm-providers", "anthropic/claude-3-5-haiku")
	if code != 1 || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "anthropic/claude-3-5-haiku/score") {
		t.Fatalf("--llm-providers without a score column: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "train", "--prompt-column", "prompt", "https://example.com/d.csv"); code != 1 || !strings.Contains(errOut, "need --file") {
		t.Fatalf("--prompt-column without --file: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "train", "--file", path, "https://example.com/d.csv"); code != 1 || !strings.Contains(errOut, "not both") {
		t.Fatalf("--file with URLs: %d %s", code, errOut)
	}
}

// switchyard train --custom-router trains a preference's router from a joint CSV as Not
// Diamond's CustomRouter.fit does (/v2/pzn/trainCustomRouter) and prints the preference to
// route with; --preference-id retrains that preference's router; both need the joint CSV,
// and --preference-id "" is a usage error naming it.
func TestTrainCustomRouterCommand(t *testing.T) {
	url := cliServer(t, func(st *store.Store) []server.Option {
		svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})
		return []server.Option{server.CustomRouters(svc), server.ModelSelection(sel)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	var joint strings.Builder
	joint.WriteString("prompt,openai/gpt-4o/score,openai/gpt-4o-mini/score\n")
	for i := range 12 {
		joint.WriteString("question number " + strings.Repeat("x", i+1) + ",1,0\n")
	}
	path := filepath.Join(t.TempDir(), "joint.csv")
	if err := os.WriteFile(path, []byte(joint.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "train", "--no-wait", "--custom-router", "--file", path, "--prompt-column", "prompt")
	pref := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(pref, "pref_") || !strings.Contains(errOut, "preference "+pref) {
		t.Fatalf("--custom-router: %d %q %s", code, out, errOut)
	}
	code, out, errOut = cli(t, "train", "--no-wait", "--preference-id", pref, "--file", path, "--prompt-column", "prompt")
	if code != 0 || strings.TrimSpace(out) != pref {
		t.Fatalf("--preference-id retrain: %d %q %s", code, out, errOut)
	}
	code, _, errOut = cli(t, "train", "--no-wait", "--preference-id", "pref_nosuch", "--file", path, "--prompt-column", "prompt")
	if code != 1 || !strings.Contains(errOut, "preference_id") {
		t.Fatalf("an unknown preference: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "train", "--custom-router", "--file", path); code != 1 || !strings.Contains(errOut, "need --file and --prompt-column") {
		t.Fatalf("--custom-router without --prompt-column: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "train", "--preference-id", "", "--file", path, "--prompt-column", "prompt"); code != 1 || !strings.Contains(errOut, "--preference-id") {
		t.Fatalf("--preference-id \"\": %d %s", code, errOut)
	}
}
