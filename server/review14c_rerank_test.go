package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// r14Cohere answers every rerank in Cohere's v2 shape (Jina's paths too): the documents in
// reverse order, meta with the api_version Cohere sends and one search unit.
func r14Cohere(w http.ResponseWriter, path string, req map[string]any) {
	docs, _ := req["documents"].([]any)
	var rs []string
	for i := len(docs) - 1; i >= 0; i-- {
		rs = append(rs, fmt.Sprintf(`{"index":%d,"relevance_score":%g}`, i, float64(i+1)/10))
	}
	if tn, ok := req["top_n"].(float64); ok {
		rs = rs[:int(tn)]
	}
	fmt.Fprintf(w, `{"id":"co-9","results":[%s],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}},"usage":{"total_tokens":12}}`, strings.Join(rs, ","))
}

// max_tokens_per_doc sent to a model whose provider takes none (Jina, Voyage) is a 400, but
// in the envelope of an upstream failure: param null, "all models failed: …" — not a
// validation error naming the field, as the README and the brief of the route promise.
func TestReview14cMaxTokensPerDocRefusalNamesNoField(t *testing.T) {
	hs, _, _, _ := r14Server(t, r14Cohere)
	resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, `{"model":"jina/jina-reranker-v2-base-multilingual","query":"q","documents":["a"],"max_tokens_per_doc":100}`, nil)
	e := wantOpenAIError(t, "max_tokens_per_doc to jina", resp, b, 400, "invalid_request_error", "")
	if e.Param == nil || *e.Param != "max_tokens_per_doc" {
		t.Errorf("param %v, want max_tokens_per_doc: %s", e.Param, b)
	}
}

// Cohere's v1 rerank (POST /v1/rerank, where its v1 SDKs and LiteLLM's cohere route post)
// takes documents as objects with rank_fields naming the fields to rank on. The gateway
// refuses an object without "text" (400) whatever rank_fields says.
func TestReview14cCohereV1RankFieldsObjectsRefused(t *testing.T) {
	hs, _, up, _ := r14Server(t, r14Cohere)
	body := `{"model":"rerank-v3.5","query":"most moons","rank_fields":["title","body"],"documents":[{"title":"Mars","body":"two moons"},{"title":"Saturn","body":"the most known moons"}]}`
	resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("Cohere v1 documents ranked by rank_fields: %d %s", resp.StatusCode, b)
	}
	if sent := fmt.Sprint(up.bodies[len(up.bodies)-1]["documents"]); !strings.Contains(sent, "Saturn") || !strings.Contains(sent, "the most known moons") {
		t.Errorf("sent documents %s without the rank_fields' values", sent)
	}
}

// With rank_fields naming other fields than text, the gateway ranks the text and says
// nothing (rank_fields is ignored silently).
func TestReview14cCohereV1RankFieldsIgnoredSilently(t *testing.T) {
	hs, _, up, _ := r14Server(t, r14Cohere)
	body := `{"model":"rerank-v3.5","query":"most moons","rank_fields":["title"],"documents":[{"text":"x","title":"Mars"},{"text":"y","title":"Saturn"}]}`
	resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, body, nil)
	if resp.StatusCode == 200 {
		if sent := fmt.Sprint(up.bodies[len(up.bodies)-1]["documents"]); !strings.Contains(sent, "Saturn") {
			t.Errorf("rank_fields [title] answered 200 but ranked %s (the titles never sent)", sent)
		}
	} else if resp.StatusCode != 400 || !strings.Contains(string(b), "rank_fields") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

// Cohere v1: "If a document is provided the text fields is required and all other fields
// will be preserved in the response." The gateway's echoed document keeps text only.
func TestReview14cCohereV1DocumentFieldsNotPreserved(t *testing.T) {
	hs, _, _, _ := r14Server(t, r14Cohere)
	body := `{"model":"rerank-v3.5","query":"most moons","return_documents":true,"documents":[{"text":"Mars has two moons.","id":"doc-7","source":"nasa"}]}`
	resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var got struct {
		Results []struct {
			Document map[string]any `json:"document"`
		} `json:"results"`
	}
	json.Unmarshal(b, &got)
	if len(got.Results) != 1 || got.Results[0].Document["id"] != "doc-7" || got.Results[0].Document["source"] != "nasa" {
		t.Errorf("document echoed as %v, want its id and source kept: %s", got.Results, b)
	}
}

// LiteLLM's /rerank answers Cohere's meta as Cohere sent it (its rerank tests assert
// meta.api_version.version for cohere); the gateway drops the upstream's api_version.
func TestReview14cLiteLLMShapeMetaAPIVersionDropped(t *testing.T) {
	hs, _, _, _ := r14Server(t, r14Cohere)
	resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, `{"model":"cohere/rerank-v3.5","query":"q","documents":["a","b"]}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var got struct {
		Meta struct {
			APIVersion *struct {
				Version string `json:"version"`
			} `json:"api_version"`
		} `json:"meta"`
	}
	json.Unmarshal(b, &got)
	if got.Meta.APIVersion == nil || got.Meta.APIVersion.Version != "2" {
		t.Errorf("meta.api_version missing (Cohere sent {\"version\":\"2\"}): %s", b)
	}
}

// Cohere's current models (rerank-v4.0-pro, -fast: the model of its SDKs' examples) are not
// in the catalogue (LiteLLM's prices, which have none for them): POST /v1/rerank serves them
// (their family is cohere's, as the README says), but, as a catalogued provider's unlisted
// chat model, they are not offered for a virtual key's models (422) nor at GET /v1/models/{id}
// (404): with no price a key's budget could not be held to them. The README says so.
func TestReview14cServedRerankModelCannotBeKeyed(t *testing.T) {
	hs, s, _, _ := r14Server(t, r14Cohere)
	for _, m := range []string{"rerank-v4.0-pro", "cohere/rerank-v4.0-fast"} {
		resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, `{"model":"`+m+`","query":"q","documents":["a","b"]}`, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"price_known":false`) {
			t.Fatalf("%s: %d %s, want served, unpriced", m, resp.StatusCode, b)
		}
		if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"k","models":["`+m+`"]}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.raw), "GET /v1/models lists them") {
			t.Errorf("%s: a key for it: %d %s, want 422 (no price to hold a budget to)", m, r.status, r.raw)
		}
		if resp, b := do2(t, "GET", hs.URL+"/v1/models/"+m, testKey, "", nil); resp.StatusCode != 404 {
			t.Errorf("GET /v1/models/%s: %d %s, want 404 (not catalogued)", m, resp.StatusCode, b)
		}
	}
}
