package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestModelGroupsOnTheSurfaces: a model group is listed by /v1/models, answers
// /v1/models/{id}, and answers chat and Messages requests that name it, falling back
// through its models.
func TestModelGroupsOnTheSurfaces(t *testing.T) {
	hs := steadyGroupServer(t)

	req, _ := http.NewRequest("GET", hs.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Data) == 0 || list.Data[0].ID != "steady" || list.Data[0].OwnedBy != "switchyard" {
		t.Errorf("/v1/models starts %+v, want the group first", list.Data[:min(2, len(list.Data))])
	}
	req, _ = http.NewRequest("GET", hs.URL+"/v1/models/steady", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/v1/models/steady: %v %v", resp.StatusCode, err)
	}

	for path, body := range map[string]string{
		"/v1/chat/completions": `{"model":"steady","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`,
		"/v1/messages":         `{"model":"steady","max_retries":0,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		resp, out := post(t, hs.URL+path, testKey, body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "Hello from ok") || !strings.Contains(string(out), `"up/down"`) {
			t.Errorf("%s: %d %s, want up/ok's answer after up/down failed", path, resp.StatusCode, out)
		}
		if !strings.Contains(string(out), `"model_group":"steady"`) {
			t.Errorf("%s: the switchyard extension does not name the group: %s", path, out)
		}
		if got := resp.Header.Get("X-Switchyard-Model-Group"); got != "steady" {
			t.Errorf("%s: X-Switchyard-Model-Group %q, want steady", path, got)
		}
		// The answer names the model that answered, not the group.
		if !strings.Contains(string(out), `"model":"ok"`) && !strings.Contains(string(out), `"model":"up/ok"`) {
			t.Errorf("%s: the answer does not name the answering model: %s", path, out)
		}
	}
}

// steadyGroupServer is a server whose gateway has the model group "steady": up/down (which
// fails) then up/ok, over a scripted OpenAI upstream.
func steadyGroupServer(t *testing.T) *httptest.Server {
	t.Helper()
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff:     completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"steady": {Models: []string{"up/down", "up/ok"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}
