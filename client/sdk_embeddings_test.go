package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/switchyard-ai/switchyard/client"
)

// newEmbeddingsUpstream is a scripted OpenAI embeddings API: input i's vector is
// [len(text), i, 0.5]; a usage of one token per word.
func newEmbeddingsUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/embeddings") {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"message":"no such route","type":"invalid_request_error"}}`)
			return
		}
		var req struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if req.EncodingFormat != "" {
			w.WriteHeader(400) // the gateway asks floats of every upstream
			io.WriteString(w, `{"error":{"message":"unexpected encoding_format","type":"invalid_request_error"}}`)
			return
		}
		var data []string
		tokens := 0
		for i, s := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,%d,0.5]}`, i, len(s), i))
			tokens += len(strings.Fields(s))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":%q,"usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), req.Model, tokens, tokens)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestEmbeddingsWithTheGoSDK: the official openai-go embeds through the gateway's
// /v1/embeddings with a bare model name, as RAG code pointed at a LiteLLM proxy does, and
// gets OpenAI's typed errors for an unknown model and an empty input.
func TestEmbeddingsWithTheGoSDK(t *testing.T) {
	up := newEmbeddingsUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL + "/v1"}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	ctx := context.Background()
	res, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"the cat sat", "dogs"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || fmt.Sprint(res.Data[0].Embedding) != "[11 0 0.5]" || fmt.Sprint(res.Data[1].Embedding) != "[4 1 0.5]" ||
		res.Model != "openai/text-embedding-3-small" || res.Usage.PromptTokens != 4 || res.Usage.TotalTokens != 4 {
		t.Fatalf("response %+v", res)
	}
	// The model list names the embedding models too, and one resolves by its bare name.
	m, err := c.Models.Get(ctx, "text-embedding-3-small")
	if err != nil || m.ID != "openai/text-embedding-3-small" {
		t.Errorf("models.get: %+v %v", m, err)
	}
	listed := false
	for page := c.Models.ListAutoPaging(ctx); page.Next(); {
		listed = listed || page.Current().ID == "openai/text-embedding-3-large"
	}
	if !listed {
		t.Error("models.list does not name openai/text-embedding-3-large")
	}
	var apiErr *openai.Error
	_, err = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "acme-embed", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("unknown model: %v", err)
	}
	_, err = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "openai/text-embedding-3-small", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", ""}}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "input[1]" {
		t.Errorf("empty input: %v", err)
	}
	// An input that is neither a string nor an array is a 400 naming it.
	for _, input := range []string{"null", "5", `{"a":1}`, `[true]`} {
		req, _ := http.NewRequest("POST", base+"/v1/embeddings", strings.NewReader(`{"model":"text-embedding-3-small","input":`+input+`}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Param *string `json:"param"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 400 || body.Error.Param == nil || *body.Error.Param != "input" {
			t.Errorf("input %s: %d, param %v", input, resp.StatusCode, body.Error.Param)
		}
	}
}

// TestEmbeddingsWithTheClient: the Go client's Embeddings against the server.
func TestEmbeddingsWithTheClient(t *testing.T) {
	up := newEmbeddingsUpstream(t)
	c, _ := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL + "/v1"}))
	res, err := c.Embeddings(context.Background(), &client.EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: []string{"a b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Vectors(); fmt.Sprint(v) != "[[3 0 0.5] [1 1 0.5]]" || res.Usage.PromptTokens != 3 || res.Usage.Costs == nil || !res.Usage.Costs.PriceKnown {
		t.Errorf("response %+v", res)
	}
	_, err = c.Embeddings(context.Background(), &client.EmbeddingsRequest{Model: "anthropic/claude-sonnet-4-5", Input: []string{"a"}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Param != "model" || !strings.Contains(apiErr.Message, "no embeddings API") {
		t.Errorf("a model without embeddings: %v", err)
	}
}

// TestUpstreamParamReachesTheSDK: an upstream's 400 naming a field (OpenAI's error.param)
// reaches the SDK with that param.
func TestUpstreamParamReachesTheSDK(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"message":"This model does not support specifying dimensions.","type":"invalid_request_error","param":"dimensions","code":null}}`)
	}))
	t.Cleanup(up.Close)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL + "/v1"}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	_, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "openai/text-embedding-ada-002", Dimensions: openai.Int(8),
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "dimensions" || !strings.Contains(apiErr.Message, "does not support specifying dimensions") {
		t.Errorf("%v", err)
	}
}
