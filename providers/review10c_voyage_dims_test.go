package providers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview10cVoyageDimensionsField: Voyage's request field for shorter vectors is
// output_dimension; the preset sends OpenAI's "dimensions", which Voyage does not define,
// so a client's dimensions is either ignored (full-size vectors) or refused upstream.
func TestReview10cVoyageDimensionsField(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","embedding":[0.25,0.5],"index":0}],"model":"voyage-3.5","usage":{"total_tokens":6}}`)
	}))
	defer srv.Close()
	reg := providers.FromEnv(func(k string) string {
		return map[string]string{"VOYAGE_API_KEY": "pa-test", "VOYAGE_BASE_URL": srv.URL + "/v1"}[k]
	}, providers.Options{})
	p, _ := reg.Lookup("voyage")
	if _, err := p.(providers.Embedder).Embed(context.Background(), &providers.EmbeddingRequest{Model: "voyage-3.5", Input: []string{"a"}, Dimensions: 256}); err != nil {
		t.Fatal(err)
	}
	if got["output_dimension"] == nil {
		t.Errorf("body sent to Voyage %v: no output_dimension (Voyage's field) for dimensions 256", got)
	}
}
