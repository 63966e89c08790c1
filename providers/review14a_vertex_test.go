package providers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview14aVertexMalformedKeyToldAtStart: parseGoogleCredentials builds the token
// source once "so that a malformed file (a key that does not parse) is told at start"
// (googleauth.go), but x/oauth2's service-account source parses the private key only when
// it fetches: a key file whose private_key is not a key passes NewVertex, and every call
// then fails with KindConnection — retryable, so the gateway retries and its breaker
// counts it as an outage — instead of a ConfigError at start (or at least KindAuth).
func TestReview14aVertexMalformedKeyToldAtStart(t *testing.T) {
	ts := newTokenServer(t)
	creds := `{"type":"service_account","project_id":"p","private_key_id":"key-1","private_key":"not a key",` +
		`"client_email":"a@p.iam.gserviceaccount.com","token_uri":"` + ts.srv.URL + `/token"}`
	v, err := providers.NewVertex(providers.VertexConfig{Project: "p", CredentialsJSON: []byte(creds)})
	if err != nil {
		return // told at start
	}
	_, err = v.Complete(context.Background(), vertexHello("gemini-2.0-flash"))
	t.Errorf("a key file whose private_key does not parse is accepted at start; each call then fails with kind %v (retryable %v): %v",
		providers.KindOf(err), providers.KindOf(err).Retryable(), err)
}

// TestReview14aVertexBadCredentialsFileNamesVariable: a GOOGLE_APPLICATION_CREDENTIALS file
// that is not JSON leaves vertex_ai unconfigured, but the reason given ("set valid
// credentials (providers: config credentials: not a credentials JSON file: …)") names
// neither the variable nor the file, unlike a file that cannot be read (vertex.go
// readCredentials names it) — registry.go vertexFromEnv drops which source it came from.
func TestReview14aVertexBadCredentialsFileNamesVariable(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(f, []byte(`{"type": "service_account", oops}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := providers.FromEnv(envOf(map[string]string{"VERTEXAI_PROJECT": "p", "GOOGLE_APPLICATION_CREDENTIALS": f, "HOME": dir}), providers.Options{}).Lookup("vertex_ai")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), vertexHello("gemini-2.0-flash"))
	if err == nil || !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") && !strings.Contains(err.Error(), f) {
		t.Errorf("malformed GOOGLE_APPLICATION_CREDENTIALS file: %v; want the variable or the file named", err)
	}
}

// TestReview14aVertexMultiRegionHost: Vertex AI's multi-region locations "us" and "eu"
// (data boundary endpoints) are served at https://aiplatform.{us,eu}.rep.googleapis.com —
// google.golang.org/genai v1.77.0 client.go builds exactly that for them
// (multiRegionalLocations) — but NewVertex builds https://us-aiplatform.googleapis.com, a
// host that does not exist; ParseConfig accepts the location.
func TestReview14aVertexMultiRegionHost(t *testing.T) {
	if _, err := providers.ParseConfig([]byte(`{"providers":[{"name":"vertex_ai","location":"eu"}]}`)); err != nil {
		return // refused: fine
	}
	for _, loc := range []string{"us", "eu"} {
		v, err := providers.NewVertex(providers.VertexConfig{Project: "p", Location: loc, AccessToken: "ya29.x"})
		if err != nil {
			t.Fatal(err)
		}
		if want := "https://aiplatform." + loc + ".rep.googleapis.com/v1/projects/p/locations/" + loc + "/publishers/google"; v.BaseURL() != want {
			t.Errorf("location %s: %s, want %s", loc, v.BaseURL(), want)
		}
	}
}

// TestReview14aVertexTokenEndpoint429IsRetryable: a token endpoint that answers 429 (or
// any 4xx other than a refused grant) is classified KindAuth by tokenFailure
// (vertex.go: every *oauth2.RetrieveError under 500 is KindAuth), which the gateway does
// not retry; a rate-limited token endpoint is a passing condition, like a 429 from Vertex.
func TestReview14aVertexTokenEndpoint429IsRetryable(t *testing.T) {
	keys := newTokenServer(t) // for a real RSA key only
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":"rate_limit_exceeded","error_description":"Rate Limit Exceeded"}`)
	}))
	defer limited.Close()
	creds := strings.Replace(string(keys.credentials()), keys.srv.URL, limited.URL, 1)
	up := newVertexUpstream(t)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", CredentialsJSON: []byte(creds)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Complete(context.Background(), vertexHello("gemini-2.0-flash"))
	if k := providers.KindOf(err); k != providers.KindRateLimited && !k.Retryable() {
		t.Errorf("token endpoint 429: kind %v (retryable %v): %v", k, k.Retryable(), err)
	}
}

// TestReview14aVertexGeminiEmbedding2UsesEmbedContent: on Vertex AI the google-genai SDK
// (google.golang.org/genai v1.77.0, models.go EmbedContent and transformer.go
// tIsVertexEmbedContentModel) sends gemini-embedding-001 and the text-embedding models to
// {model}:predict but every other Gemini embedding model (gemini-embedding-2-preview, …)
// to {model}:embedContent with {"content": {"parts": [...]}}; the adapter sends them all
// to :predict (vertex.go vertexPredict).
func TestReview14aVertexGeminiEmbedding2UsesEmbedContent(t *testing.T) {
	up := newVertexUpstream(t)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", AccessToken: "ya29.fixed"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = v.Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-2-preview", Input: []string{"a"}})
	calls := up.calls()
	if len(calls) == 0 || !strings.Contains(calls[0], "/models/gemini-embedding-2-preview:embedContent ") {
		t.Errorf("gemini-embedding-2-preview on Vertex: calls %q, want {model}:embedContent as google-genai sends", calls)
	}
}
