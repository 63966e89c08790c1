package completions

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeOversizedAPI is a fake OpenAI-format upstream whose every answer announces a body
// of announced bytes (over the adapters' caps) and sends a few: the adapter refuses it
// unread, as it would one read up to the cap.
func fakeOversizedAPI(t *testing.T, announced int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.FormatInt(announced, 10))
		w.Write([]byte(`{"id":"x",`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func oversizedGateway(t *testing.T, url string) (*Gateway, *recordingLedger, *recordingObserver) {
	t.Helper()
	ledger, obs := &recordingLedger{}, &recordingObserver{}
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": url + "/v1"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Ledger: ledger, Observer: obs, DefaultMaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g, ledger, obs
}

// TestOversizedAnswerIsCharged: an upstream answer over the size cap fails the request
// (no answer is delivered), but the upstream made and billed it: the budget and the
// ledger are charged the prompt's estimate (> 0 tokens and USD, marked estimated, not the
// answer), and the request record carries that usage, with the attempt's Usage and the
// answer's announced size (AnswerBytes). Chat completions and embeddings alike.
func TestOversizedAnswerIsCharged(t *testing.T) {
	const announced = 200 << 20 // past the chat (32 MiB) and embeddings (160 MiB) caps
	g, ledger, obs := oversizedGateway(t, fakeOversizedAPI(t, announced).URL)
	ctx := context.Background()
	check := func(what string, err error, budget *Budget) {
		t.Helper()
		if !errors.Is(err, providers.ErrResponseTooLarge) {
			t.Fatalf("%s: err %v, want the answer refused as too large", what, err)
		}
		used := budget.Used(ctx)
		if used.Tokens <= 0 || used.CostUSD <= 0 {
			t.Errorf("%s: budget charged %+v, want tokens and USD > 0", what, used)
		}
		e := ledger.all()
		if len(e) != 1 || e[0].Complete || !e[0].Estimated || e[0].Usage.PromptTokens <= 0 || int64(e[0].Usage.PromptTokens) != used.Tokens {
			t.Errorf("%s: ledger %+v", what, e)
		}
		ledger.mu.Lock()
		ledger.entries = nil
		ledger.mu.Unlock()
		r := obs.take(t)
		if r.Outcome != RequestFailed || r.Usage.PromptTokens != int(used.Tokens) || !r.UsageEstimated || r.Usage.Costs.TotalTokensCost <= 0 {
			t.Errorf("%s: record usage %+v estimated %v outcome %s", what, r.Usage, r.UsageEstimated, r.Outcome)
		}
		if len(r.Attempts) != 1 || r.Attempts[0].AnswerBytes != announced || r.Attempts[0].Usage == nil || !r.Attempts[0].Estimated ||
			r.Attempts[0].Usage.PromptTokens != r.Usage.PromptTokens {
			t.Errorf("%s: attempts %+v", what, r.Attempts)
		}
	}
	b := NewBudget(BudgetLimits{})
	_, err := g.Complete(ctx, Scope{Owner: "k1", Budget: b}, userReq(strings.Repeat("Tell me a long story about ships. ", 20), "openai/gpt-4o-mini"))
	check("chat", err, b)

	b = NewBudget(BudgetLimits{})
	_, err = g.Embed(ctx, Scope{Owner: "k1", Budget: b}, &EmbeddingsRequest{Model: "openai/text-embedding-3-small",
		Input: EmbeddingInput{Texts: []string{"a few words to embed", "and a few more of them"}}})
	check("embeddings", err, b)
}
