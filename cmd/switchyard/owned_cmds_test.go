package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

func TestJobsModelsConversationsCommands(t *testing.T) {
	data := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "..", "examples", "data"))))
	defer data.Close()
	up := fakeOpenAIUpstream(t)
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
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.CustomRouters(svc), server.Completions(g)}
	})
	t.Setenv("SWITCHYARD_BASE_URL", url)
	t.Setenv("SERVICE_API_KEY", cliKey)

	if code, out, errOut := cli(t, "jobs"); code != 0 || !strings.Contains(out, "(no jobs)") {
		t.Fatalf("empty jobs: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli(t, "train", "--poll", "20ms", data.URL+"/routing_train.json")
	if code != 0 {
		t.Fatalf("train: %d %s", code, errOut)
	}
	model := regexp.MustCompile(`Router model\s+(rm_\S+)`).FindStringSubmatch(out)[1]

	code, out, errOut = cli(t, "jobs", "--type", "training", "--status", "completed", "--since", "1h")
	job := regexp.MustCompile(`(?m)^(tj_\S+)\s+training\s+completed\s+.*` + model).FindStringSubmatch(out)
	if code != 0 || job == nil {
		t.Fatalf("jobs: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := cli(t, "jobs", "--status", "failed"); code != 0 || !strings.Contains(out, "(no jobs)") {
		t.Fatalf("jobs --status failed: %d %s", code, out)
	}
	// "interrupted" is an optimization state only: with --type all it does not reach the
	// training listing (which would refuse it).
	if code, out, errOut := cli(t, "jobs", "--status", "interrupted"); code != 0 || !strings.Contains(out, "(no jobs)") {
		t.Fatalf("jobs --status interrupted: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "jobs", "--status", "sleeping"); code == 0 || !strings.Contains(errOut, "status") {
		t.Fatalf("bad status: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "jobs", "--limit", "0"); code == 0 || !strings.Contains(errOut, "--limit must be 1-100") {
		t.Fatalf("--limit 0: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "jobs", "--since", "last tuesday"); code == 0 || !strings.Contains(errOut, "--since") {
		t.Fatalf("bad --since: %d %s", code, errOut)
	}
	code, out, _ = cli(t, "models")
	if code != 0 || !regexp.MustCompile(`(?m)^`+model+`\s+active\s+\d+\s+0\.\d{3}\s+0\.\d{3}`).MatchString(out) || !strings.Contains(out, "ACCURACY") {
		t.Fatalf("models:\n%s", out)
	}
	if code, out, _ := cli(t, "models", "show", model); code != 0 || !strings.Contains(out, "held-out:") {
		t.Fatalf("models show: %d %s", code, out)
	}
	code, out, _ = cli(t, "models", "--json")
	var page struct {
		Data []struct {
			ModelID string `json:"model_id"`
		} `json:"data"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Data) != 1 || page.Data[0].ModelID != model {
		t.Fatalf("models --json: %d %s", code, out)
	}
	if code, out, errOut := cli(t, "models", "delete", model); code != 0 || !strings.Contains(out, "deleted router_model "+model) {
		t.Fatalf("models delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "models", "delete", model); code == 0 || !strings.Contains(errOut, "404") && !strings.Contains(errOut, "not found") {
		t.Fatalf("second delete: %d %s", code, errOut)
	}
	if code, out, _ := cli(t, "jobs", "delete", job[1]); code != 0 || !strings.Contains(out, "deleted training_job "+job[1]) {
		t.Fatalf("jobs delete: %d %s", code, out)
	}

	// Conversations: a chat makes one; list, show, delete.
	if code, _, errOut := cli(t, "chat", "-m", "openai/gpt-4o-mini", "Tell", "me", "something"); code != 0 {
		t.Fatalf("chat: %s", errOut)
	}
	if code, _, errOut := cli(t, "chat", "-m", "openai/gpt-4o-mini", "And", "another"); code != 0 {
		t.Fatalf("chat: %s", errOut)
	}
	// The next page's command keeps the filters: the relative --since as the time it meant.
	code, out, _ = cli(t, "conversations", "--limit", "1", "--since", "1h")
	if hint := regexp.MustCompile(`more: switchyard conversations --since (\S+) --limit 1 --cursor (\S+)`).FindStringSubmatch(out); code != 0 || hint == nil {
		t.Fatalf("conversations --limit 1 --since 1h:\n%s", out)
	} else if code, more, _ := cli(t, "conversations", "--since", hint[1], "--limit", "1", "--cursor", hint[2]); code != 0 || !strings.Contains(more, "Tell me something") {
		t.Fatalf("the hinted next page:\n%s", more)
	}
	code, out, _ = cli(t, "conversations")
	conv := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+2\s+.*Tell me something$`).FindStringSubmatch(out)
	if code != 0 || conv == nil {
		t.Fatalf("conversations:\n%s", out)
	}
	if code, out, _ := cli(t, "conversations", "show", conv[1]); code != 0 || !strings.Contains(out, "user:\nTell me something") || !strings.Contains(out, "assistant (openai/gpt-4o-mini):") {
		t.Fatalf("conversations show: %d\n%s", code, out)
	}
	if code, out, _ := cli(t, "conversations", "delete", conv[1]); code != 0 || !strings.Contains(out, "(2 messages)") {
		t.Fatalf("conversations delete: %d %s", code, out)
	}
	code, out, _ = cli(t, "conversations")
	if other := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+2\s+.*And another$`).FindStringSubmatch(out); code != 0 || other == nil {
		t.Fatalf("conversations:\n%s", out)
	} else if code, _, _ := cli(t, "conversations", "delete", other[1]); code != 0 {
		t.Fatalf("delete %s", other[1])
	}
	if code, out, _ := cli(t, "conversations", "--json", "--all"); code != 0 || !strings.Contains(out, `"data": []`) {
		t.Fatalf("conversations after delete: %d %s", code, out)
	}
}
