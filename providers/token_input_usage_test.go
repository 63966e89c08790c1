package providers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview10TokenInputsCountedWithoutUsage: an OpenAI-compatible server that reports no
// usage gets its text inputs counted locally (UsageEstimated), but token-id inputs are left
// at 0 prompt tokens — billed nothing to the budget, the ledger or the cost — although
// their count is exact (the number of ids).
func TestReview10TokenInputsCountedWithoutUsage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[3,4]}],"model":"m"}`)
	}))
	defer srv.Close()
	o := providers.NewOpenAI(providers.Config{Name: "vllm", BaseURL: srv.URL, APIKey: "k"})
	res, err := o.Embed(context.Background(), &providers.EmbeddingRequest{Model: "m", Tokens: [][]int{{1, 2, 3}, {4, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.PromptTokens != 5 {
		t.Errorf("token-id inputs without upstream usage: %d prompt tokens (estimated %v), want 5", res.Usage.PromptTokens, res.UsageEstimated)
	}
}
