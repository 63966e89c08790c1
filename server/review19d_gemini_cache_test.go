package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// An answer of Gemini's code execution tool served again from the response cache has the
// same parts (executableCode, codeExecutionResult) and urlContextMetadata as the first.
func TestReview19dCachedCodeExecutionParts(t *testing.T) {
	up := &fakeGeminiCodeUpstream{}
	us := httptest.NewServer(up)
	t.Cleanup(us.Close)
	reg := providers.NewRegistry(providers.NewGemini(providers.Config{Name: "gm", BaseURL: us.URL, APIKey: "k"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Cache: completions.CacheOptions{Driver: &completions.MemoryCache{}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)

	body := `{"contents":[{"parts":[{"text":"6*7? see https://example.com"}]}],"tools":[{"codeExecution":{}},{"urlContext":{}}]}`
	type answer struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]json.RawMessage `json:"parts"`
			} `json:"content"`
			URLContextMetadata json.RawMessage `json:"urlContextMetadata"`
		} `json:"candidates"`
	}
	read := func() answer {
		t.Helper()
		resp, b := geminiPost(t, hs.URL+"/v1beta/models/gm/gemini-2.5-flash:generateContent", body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		var a answer
		if err := json.Unmarshal(b, &a); err != nil || len(a.Candidates) != 1 {
			t.Fatalf("%s: %v", b, err)
		}
		return a
	}
	first := read()
	var second answer
	for range 50 { // the answer is kept in the background
		second = read()
		if len(up.bodies) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(up.bodies) != 1 {
		t.Fatalf("the upstream got %d requests: the answer was never served from the cache", len(up.bodies))
	}
	f, _ := json.Marshal(first.Candidates[0])
	c, _ := json.Marshal(second.Candidates[0])
	if string(f) != string(c) {
		t.Errorf("cached answer\n%s\ndiffers from the first\n%s", c, f)
	}
}
