package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview14aAzureStreamCutByOutputFilter: Azure's output filter cutting a streamed
// answer sends, after the text so far, a chunk with finish_reason "content_filter" and then
// the usage chunk and [DONE] — a normal end that the openai SDKs hand to the application
// (providers/testdata/azure/stream-content-filter.sse). Through the gateway the client
// gets the text and then an error event (code stream_failed, "failed after it started"),
// which the openai SDKs raise as an APIError: the finish reason, the usage and the clean
// end are lost. README: Azure's content filter "is a content-filter answer, billed with the
// usage Azure reports" — so it is for a whole answer (200, finish_reason content_filter),
// but not for a stream, which is how Azure's filter is usually met (it is on by default).
func TestReview14aAzureStreamCutByOutputFilter(t *testing.T) {
	sse, err := os.ReadFile("../providers/testdata/azure/stream-content-filter.sse")
	if err != nil {
		t.Fatal(err)
	}
	ups := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	defer ups.Close()
	env := map[string]string{"AZURE_API_KEY": "az-test-key-0123456789", "AZURE_API_BASE": ups.URL}
	reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	r := do(t, s, "POST", "/v1/chat/completions", testKey,
		`{"model":"azure/prod-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, "The duel began") {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if !strings.Contains(r.raw, `"finish_reason":"content_filter"`) || strings.Contains(r.raw, `data: {"error"`) || !strings.Contains(r.raw, "data: [DONE]") {
		t.Errorf("an Azure stream cut by its output filter reaches the client as:\n%s\nwant the text, a chunk with finish_reason content_filter, the usage and [DONE], as Azure sends it", r.raw)
	}
}
