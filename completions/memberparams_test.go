package completions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestMemberParams: a member's default parameters are sent when the request leaves them
// unset, the request's own winning; a member without any gets nothing added; they hold
// when the member is called by its own name too.
func TestMemberParams(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	t.Cleanup(up.Close)
	temp, seed := 0.2, int64(7)
	g, err := New(Options{
		Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL, KeyOptional: true})),
		ModelGroups: map[string]ModelGroup{
			"tuned": {Models: []string{"up/tuned"}, Params: []MemberParams{{Temperature: &temp, MaxTokens: 300, Stop: []string{"END"}, Seed: &seed, ReasoningEffort: "low"}}},
			"plain": {Models: []string{"up/plain"}},
		},
		DefaultMaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	last := func(body string) map[string]any {
		t.Helper()
		if _, err := g.Complete(context.Background(), Scope{}, chatRequest(t, body)); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return bodies[len(bodies)-1]
	}
	sent := last(`{"model":"tuned","messages":[{"role":"user","content":"hi"}]}`)
	if sent["temperature"] != 0.2 || sent["max_tokens"] != 300.0 && sent["max_completion_tokens"] != 300.0 || sent["seed"] != 7.0 || sent["reasoning_effort"] != "low" {
		t.Errorf("defaults not sent: %v", sent)
	}
	if stop, _ := sent["stop"].([]any); len(stop) != 1 || stop[0] != "END" {
		t.Errorf("stop %v, want [END]", sent["stop"])
	}
	sent = last(`{"model":"tuned","temperature":0.9,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)
	if sent["temperature"] != 0.9 || sent["max_tokens"] != 20.0 && sent["max_completion_tokens"] != 20.0 {
		t.Errorf("the request's own values should win: %v", sent)
	}
	sent = last(`{"model":"up/tuned","messages":[{"role":"user","content":"hi"}]}`)
	if sent["temperature"] != 0.2 {
		t.Errorf("called by its own name: %v, want the member's temperature", sent)
	}
	sent = last(`{"model":"plain","messages":[{"role":"user","content":"hi"}]}`)
	if _, ok := sent["temperature"]; ok {
		t.Errorf("a member without params got a temperature: %v", sent)
	}
}

// TestMemberParamsChecked: out-of-range parameters and two groups giving one model
// different parameters are refused, naming the field or both groups.
func TestMemberParamsChecked(t *testing.T) {
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: "http://127.0.0.1:1", KeyOptional: true}))
	hot, cool := 2.5, 0.1
	for name, c := range map[string]struct {
		groups map[string]ModelGroup
		want   string
	}{
		"range":    {map[string]ModelGroup{"a": {Models: []string{"up/m"}, Params: []MemberParams{{Temperature: &hot}}}}, "params[0].temperature: must be 0 to 2"},
		"effort":   {map[string]ModelGroup{"a": {Models: []string{"up/m"}, Params: []MemberParams{{ReasoningEffort: "max"}}}}, "params[0].reasoning_effort"},
		"count":    {map[string]ModelGroup{"a": {Models: []string{"up/m", "up/n"}, Params: []MemberParams{{}}}}, "params: one per model"},
		"conflict": {map[string]ModelGroup{"a": {Models: []string{"up/m"}, Params: []MemberParams{{Temperature: &cool}}}, "b": {Models: []string{"up/m"}, Params: []MemberParams{{MaxTokens: 5}}}}, `model group "b": params[0] of up/m differ from those model group "a" gives it`},
	} {
		_, err := New(Options{Providers: reg, ModelGroups: c.groups})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid containing %q", name, err, c.want)
		}
	}
}
