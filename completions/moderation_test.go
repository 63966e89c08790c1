package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeModerationAPI is a scripted OpenAI moderations endpoint: a result per string of the
// input (one otherwise), flagged when it says "kill"; fail holds the statuses of the next
// calls, short makes it answer one result too few.
type fakeModerationAPI struct {
	srv   *httptest.Server
	mu    sync.Mutex
	fail  []int
	short bool
	calls int
	last  map[string]any
}

func newFakeModerationAPI(t *testing.T) *fakeModerationAPI {
	u := &fakeModerationAPI{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		if r.URL.Path != "/v1/moderations" {
			w.WriteHeader(404)
			return
		}
		if len(u.fail) > 0 {
			status := u.fail[0]
			u.fail = u.fail[1:]
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"scripted failure","type":"server_error"}}`)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		u.last = nil
		json.Unmarshal(raw, &u.last)
		texts := []string{fmt.Sprint(u.last["input"])}
		if arr, ok := u.last["input"].([]any); ok {
			if s, ok := arr[0].(string); ok {
				texts = []string{s}
				for _, it := range arr[1:] {
					texts = append(texts, it.(string))
				}
			}
		}
		if u.short {
			texts = texts[1:]
		}
		var res []string
		for _, s := range texts {
			res = append(res, fmt.Sprintf(`{"flagged":%t,"categories":{"violence":%[1]t},"category_scores":{"violence":0.5}}`, strings.Contains(s, "kill")))
		}
		fmt.Fprintf(w, `{"id":"modr-1","model":"omni-moderation-2024-09-26","results":[%s]}`, strings.Join(res, ","))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func newModerationGateway(t *testing.T, api *fakeModerationAPI, obs *recordingObserver) *Gateway {
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": api.srv.URL + "/v1", "ANTHROPIC_API_KEY": "ak",
		"AZURE_API_KEY": "az", "AZURE_API_BASE": api.srv.URL}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Observer: obs,
		ModelGroups: map[string]ModelGroup{"mods": {Models: []string{"azure/omni", "openai/omni-moderation-latest"}}},
		Sleep:       func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestModerate: the default model is OpenAI's omni-moderation-latest; results come back
// as OpenAI sent them, one per string; a failing call is retried; the request counts
// against a key's budget at no cost and is observed as a moderation.
func TestModerate(t *testing.T) {
	api := newFakeModerationAPI(t)
	obs := &recordingObserver{}
	g := newModerationGateway(t, api, obs)
	budget := NewBudget(BudgetLimits{})
	api.fail = []int{503}
	resp, err := g.Moderate(context.Background(), Scope{Owner: "k1", Budget: budget},
		&ModerationRequest{Input: ModerationInput(`["hello", "I will kill"]`)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ID != "modr-1" || resp.Model != "openai/omni-moderation-latest" || len(resp.Results) != 2 ||
		string(resp.Results[0]) != `{"flagged":false,"categories":{"violence":false},"category_scores":{"violence":0.5}}` ||
		!strings.Contains(string(resp.Results[1]), `"flagged":true`) {
		t.Fatalf("response %+v", resp)
	}
	if api.last["model"] != "omni-moderation-latest" || api.calls != 2 {
		t.Errorf("sent %v in %d calls", api.last, api.calls)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || used.CostUSD != 0 {
		t.Errorf("budget %+v", used)
	}
	r := obs.take(t)
	if r.Operation != OperationModeration || r.Outcome != RequestOK || r.Model != "openai/omni-moderation-latest" || len(r.Attempts) != 2 ||
		!r.Usage.Costs.PriceKnown || r.Usage.Costs.Spent() != 0 {
		t.Errorf("observed %+v", r)
	}

	// A group's Azure member has no moderations API: refused by name before any call.
	_, err = g.Moderate(context.Background(), Scope{}, &ModerationRequest{Model: "mods", Input: ModerationInput(`"hi"`)})
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Field, "member 0") || !strings.Contains(ve.Error(), "no moderations API") {
		t.Errorf("azure member: %v", err)
	}

	// An answer with a result missing is a bad response: not retried on the model.
	api.short, api.calls = true, 0
	_, err = g.Moderate(context.Background(), Scope{}, &ModerationRequest{Input: ModerationInput(`["a", "b"]`)})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindBadResponse || api.calls != 1 || !strings.Contains(err.Error(), "1 results for 2 inputs") {
		t.Errorf("short answer: %v after %d calls", err, api.calls)
	}
}

// TestModerationValidation: each malformed input is refused naming its field, before any
// call.
func TestModerationValidation(t *testing.T) {
	api := newFakeModerationAPI(t)
	g := newModerationGateway(t, api, &recordingObserver{})
	for _, tc := range []struct{ model, input, field, says string }{
		{"", ``, "input", "required"},
		{"", `null`, "input", "required"},
		{"", `""`, "input", "must not be empty"},
		{"", `[]`, "input", "must not be empty"},
		{"", `3`, "input", "must be a string"},
		{"", `["a", 3]`, "input[1]", "mixes"},
		{"", `["a", ""]`, "input[1]", "non-empty string"},
		{"", `[{"type":"text","text":"a"}, "b"]`, "input[1]", "mixes"},
		{"", `[{"type":"text"}]`, "input[0].text", "required"},
		{"", `[{"type":"image_url","image_url":{}}]`, "input[0].image_url.url", "required"},
		{"", `[{"type":"audio"}]`, "input[0].type", "text or image_url"},
		{"", `[[1]]`, "input[0]", "part object"},
		{"anthropic/claude-3-5-haiku-latest", `"hi"`, "model", "no moderations API"},
		{"acme/mod", `"hi"`, "model", "unknown provider"},
	} {
		_, err := g.Moderate(context.Background(), Scope{}, &ModerationRequest{Model: tc.model, Input: ModerationInput(tc.input)})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(ve.Error(), tc.says) {
			t.Errorf("%s %s: %v, want %s saying %q", tc.model, tc.input, err, tc.field, tc.says)
		}
	}
	if api.calls != 0 {
		t.Errorf("%d calls for refused requests", api.calls)
	}
	resp, err := g.Moderate(context.Background(), Scope{}, &ModerationRequest{Model: "text-moderation-latest",
		Input: ModerationInput(`[{"type":"text","text":"a cat"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]`)})
	if err != nil || len(resp.Results) != 1 || resp.Model != "openai/text-moderation-latest" {
		t.Fatalf("parts: %+v %v", resp, err)
	}
	if parts, _ := api.last["input"].([]any); len(parts) != 2 {
		t.Errorf("parts sent %v", api.last["input"])
	}
}
