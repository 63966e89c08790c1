package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeClientsUpstream is the scripted upstream of the client suites: fakeOpenAIChat's chat
// completions, and scripted answers computed from each request for the gateway's other
// OpenAI-format routes, so that a client test can tell its request reached it whole:
//   - /v1/embeddings: input i's vector is [i, its length in bytes, 1];
//   - /v1/moderations: an input is flagged (category violence, score 0.9) when it contains
//     "kill", else not (score 0.01);
//   - /v1/images/generations: n (default 1) images, image i's url https://images.example/i.png
//     and its revised_prompt "drawn: PROMPT";
//   - /v1/images/edits: one image whose revised_prompt is "edited: PROMPT (I images, mask
//     M, bytes B)": the image parts (image or image[]), whether a mask came, and the bytes
//     of the images and mask;
//   - /v2/rerank (Cohere's, for COHERE_BASE_URL set to its URL): each document scored by
//     how many of the query's words it contains, most relevant first (ties in the
//     documents' order), cut to top_n.
func fakeClientsUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := func(v any) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(v)
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			model, texts := modelAndInputs(r)
			data := []any{}
			for i, s := range texts {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float64{float64(i), float64(len(s)), 1}})
			}
			answer(map[string]any{"object": "list", "data": data, "model": model,
				"usage": map[string]int{"prompt_tokens": 3 * len(texts), "total_tokens": 3 * len(texts)}})
		case strings.HasSuffix(r.URL.Path, "/moderations"):
			model, texts := modelAndInputs(r)
			results := []any{}
			for _, s := range texts {
				flagged := strings.Contains(s, "kill")
				score := 0.01
				if flagged {
					score = 0.9
				}
				results = append(results, map[string]any{"flagged": flagged,
					"categories": map[string]bool{"violence": flagged}, "category_scores": map[string]float64{"violence": score}})
			}
			answer(map[string]any{"id": "modr-fake", "model": model, "results": results})
		case strings.HasSuffix(r.URL.Path, "/images/generations"):
			var req struct {
				Prompt string `json:"prompt"`
				N      int    `json:"n"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			data := []any{}
			for i := range max(req.N, 1) {
				data = append(data, map[string]any{"url": fmt.Sprintf("https://images.example/%d.png", i), "revised_prompt": "drawn: " + req.Prompt})
			}
			answer(map[string]any{"created": 1700000000, "data": data})
		case strings.HasSuffix(r.URL.Path, "/images/edits"):
			if err := r.ParseMultipartForm(32 << 20); err != nil {
				http.Error(w, `{"error":{"message":"not a form"}}`, 400)
				return
			}
			images, size := 0, int64(0)
			for _, field := range []string{"image", "image[]", "mask"} {
				for _, fh := range r.MultipartForm.File[field] {
					size += fh.Size
					if field != "mask" {
						images++
					}
				}
			}
			_, mask := r.MultipartForm.File["mask"]
			answer(map[string]any{"created": 1700000000, "data": []any{map[string]any{"b64_json": "aW1n",
				"revised_prompt": fmt.Sprintf("edited: %s (%d images, mask %v, bytes %d)", r.FormValue("prompt"), images, mask, size)}}})
		case strings.HasSuffix(r.URL.Path, "/rerank"):
			var req struct {
				Query     string   `json:"query"`
				Documents []string `json:"documents"`
				TopN      int      `json:"top_n"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			type result struct {
				Index int     `json:"index"`
				Score float64 `json:"relevance_score"`
			}
			var results []result
			for i, d := range req.Documents {
				n := 0
				for _, word := range strings.Fields(strings.ToLower(req.Query)) {
					if strings.Contains(strings.ToLower(d), word) {
						n++
					}
				}
				results = append(results, result{i, float64(n) / 10})
			}
			for i := 1; i < len(results); i++ { // stable: ties keep the documents' order
				for j := i; j > 0 && results[j].Score > results[j-1].Score; j-- {
					results[j], results[j-1] = results[j-1], results[j]
				}
			}
			if req.TopN > 0 && req.TopN < len(results) {
				results = results[:req.TopN]
			}
			answer(map[string]any{"id": "rr-fake", "results": results, "meta": map[string]any{"billed_units": map[string]int{"search_units": 1}}})
		default:
			fakeOpenAIChat(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// modelAndInputs reads the model and the input of an embeddings or moderations request:
// its texts, whether input is one string or a list of them.
func modelAndInputs(r *http.Request) (string, []string) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	var texts []string
	if json.Unmarshal(req.Input, &texts) != nil {
		var one string
		json.Unmarshal(req.Input, &one)
		texts = []string{one}
	}
	return req.Model, texts
}
