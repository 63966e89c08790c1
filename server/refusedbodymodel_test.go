package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestRefusalAfterBodyRecordsModelAsked: a gateway request the server refuses once its body
// is read — a field of the wrong type (before or after the model in the body), a value out
// of range, a model the key may not call — is recorded with the model its body asked for as
// model_group, in the usage history and in /spend/logs, as LiteLLM's spend logs hold a
// failed request's model_group; on chat, /v1/responses, /v1/messages, embeddings, the
// native /api/v1/completions and a Gemini route (its model in the path). A body that is not
// JSON names none.
func TestRefusalAfterBodyRecordsModelAsked(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}})
	a := litellmGenerate(t, s, `{"models":["openai/ok"],"user_id":"u-body"}`)
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		rid, path, body string
		status          int
		op, model       string
	}{
		{"chat-type-after", "/v1/chat/completions", `{"model":"openai/ok",` + msgs + `,"temperature":"hot"}`, 400, "", "openai/ok"},
		{"chat-type-before", "/v1/chat/completions", `{"temperature":"hot","model":"openai/ok",` + msgs + `}`, 400, "", "openai/ok"},
		{"chat-range", "/v1/chat/completions", `{"model":"openai/ok",` + msgs + `,"temperature":7}`, 400, "", "openai/ok"},
		{"chat-not-allowed", "/v1/chat/completions", `{"model":"openai/ok2",` + msgs + `}`, 401, "", "openai/ok2"},
		{"chat-malformed", "/v1/chat/completions", `{"model":"openai/ok",`, 400, "", ""},
		{"responses-type", "/v1/responses", `{"temperature":"hot","model":"openai/ok","input":"hi"}`, 400, "", "openai/ok"},
		{"responses-not-allowed", "/v1/responses", `{"model":"openai/ok2","input":"hi"}`, 401, "", "openai/ok2"},
		{"messages-type", "/v1/messages", `{"temperature":"hot","model":"openai/ok","max_tokens":10,` + msgs + `}`, 400, "", "openai/ok"},
		{"messages-not-allowed", "/v1/messages", `{"model":"openai/ok2","max_tokens":10,` + msgs + `}`, 401, "", "openai/ok2"},
		{"embeddings-type", "/v1/embeddings", `{"dimensions":"x","model":"openai/ok","input":"hi"}`, 400, completions.OperationEmbeddings, "openai/ok"},
		{"embeddings-not-allowed", "/v1/embeddings", `{"model":"openai/ok2","input":"hi"}`, 401, completions.OperationEmbeddings, "openai/ok2"},
		{"native-type", "/api/v1/completions", `{"temperature":"hot","models":["openai/ok"],` + msgs + `}`, 422, "", "openai/ok"},
		{"native-not-allowed", "/api/v1/completions", `{"models":["openai/ok2"],` + msgs + `}`, 403, "", "openai/ok2"},
		{"gemini-type", "/v1beta/models/openai/ok:generateContent", `{"contents":"hi"}`, 400, "", "openai/ok"},
	}
	for _, c := range cases {
		if st, _, body := postWithID(t, hs.URL+c.path, a.Key, c.rid, c.body); st != c.status {
			t.Errorf("%s: %d %s, want %d", c.rid, st, body, c.status)
		}
	}
	hist := usageRequestsByID(t, s, testKey)
	spend := map[string]spendLogRowT{}
	for _, row := range spendLogs(t, s, testKey, "") {
		spend[row.RequestID] = row
	}
	for _, c := range cases {
		h := hist[c.rid]
		if h == nil {
			t.Errorf("%s: not in the usage history", c.rid)
			continue
		}
		if h["outcome"] != "error" {
			t.Errorf("%s: outcome %v, want error", c.rid, h["outcome"])
		}
		if got, _ := h["operation"].(string); got != c.op {
			t.Errorf("%s: operation %q, want %q", c.rid, got, c.op)
		}
		if got, _ := h["model_group"].(string); got != c.model {
			t.Errorf("%s: model_group %q in the usage history, want %q", c.rid, got, c.model)
		}
		row, ok := spend[c.rid]
		if !ok {
			t.Errorf("%s: not in /spend/logs", c.rid)
			continue
		}
		if got := row.ModelGroup; c.model != "" && (got == nil || *got != c.model) {
			t.Errorf("%s: /spend/logs model_group %v, want %q", c.rid, got, c.model)
		}
	}
}

// TestGatewayClosedRefusalRecordsModelAsked: a background response the closed gateway
// refuses (503 at shutdown, completions.ErrGatewayClosed) is recorded cut with the model
// it asked for as model_group.
func TestGatewayClosedRefusalRecordsModelAsked(t *testing.T) {
	up := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ rid, path, body, model string }{
		{"closed-responses", "/v1/responses", `{"model":"up/gpt-4o","input":"hi","background":true}`, "up/gpt-4o"},
	}
	for _, c := range cases {
		if st, _, body := postWithID(t, hs.URL+c.path, testKey, c.rid, c.body); st != http.StatusServiceUnavailable {
			t.Errorf("%s: %d %s, want 503", c.rid, st, body)
		}
	}
	hist := usageRequestsByID(t, s, testKey)
	for _, c := range cases {
		h := hist[c.rid]
		if h == nil {
			t.Errorf("%s: not in the usage history", c.rid)
			continue
		}
		if h["outcome"] != usagelog.OutcomeCut {
			t.Errorf("%s: outcome %v, want %s", c.rid, h["outcome"], usagelog.OutcomeCut)
		}
		if got, _ := h["model_group"].(string); got != c.model {
			t.Errorf("%s: model_group %q, want %q", c.rid, got, c.model)
		}
	}
}
