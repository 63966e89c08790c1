package server

// Review 10b: chat n>1 skips what answerOpenAI does for every other chat answer (package server).

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func TestReview10bChoicesNameTheModelGroup(t *testing.T) {
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	st := memstore.New()
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
	for _, n := range []string{"1", "2"} {
		resp, out := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"steady","n":`+n+`,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "Hello from ok") {
			t.Fatalf("n %s: %d %s", n, resp.StatusCode, out)
		}
		if got := resp.Header.Get("X-Switchyard-Model-Group"); got != "steady" {
			t.Errorf("n %s: X-Switchyard-Model-Group %q, want steady", n, got)
		}
	}
}
