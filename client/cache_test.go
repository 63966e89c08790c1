package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
)

// TestResponseCacheThroughTheClients: the official OpenAI Go SDK sends the cache object as
// an extra body field (as LiteLLM's users do) and reads X-Switchyard-Cache; the Go client
// sees the cache status in the answer. A hit reaches no upstream and costs nothing.
func TestResponseCacheThroughTheClients(t *testing.T) {
	up := newToolUpstream(t)
	mc := &completions.MemoryCache{}
	c, base := realServerURL(t, envGatewayWith(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL},
		func(o *completions.Options) { o.Cache = completions.CacheOptions{Driver: mc} }))
	upstreamCalls := func() int {
		up.mu.Lock()
		defer up.mu.Unlock()
		return len(up.requests)
	}
	kept := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); mc.Len() != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d cached answers, want %d", mc.Len(), n)
			}
		}
	}
	ctx := context.Background()
	sdk := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
	var hr *http.Response
	first, err := sdk.Chat.Completions.New(ctx, params, option.WithJSONSet("cache", map[string]any{"namespace": "eval-1", "ttl": 600}), option.WithResponseInto(&hr))
	if err != nil {
		t.Fatal(err)
	}
	if hr.Header.Get("X-Switchyard-Cache") != "miss" || upstreamCalls() != 1 {
		t.Fatalf("first: cache %q after %d upstream calls", hr.Header.Get("X-Switchyard-Cache"), upstreamCalls())
	}
	kept(1)
	second, err := sdk.Chat.Completions.New(ctx, params, option.WithJSONSet("cache", map[string]any{"namespace": "eval-1"}), option.WithResponseInto(&hr))
	if err != nil {
		t.Fatal(err)
	}
	if hr.Header.Get("X-Switchyard-Cache") != "hit" || hr.Header.Get("Age") == "" || upstreamCalls() != 1 {
		t.Fatalf("second: cache %q age %q after %d upstream calls, want a hit", hr.Header.Get("X-Switchyard-Cache"), hr.Header.Get("Age"), upstreamCalls())
	}
	if second.Choices[0].Message.ToolCalls[0].Function.Arguments != first.Choices[0].Message.ToolCalls[0].Function.Arguments ||
		second.Usage.TotalTokens != first.Usage.TotalTokens {
		t.Fatalf("the hit %+v differs from the first answer %+v", second.Choices[0].Message, first.Choices[0].Message)
	}
	// Without the namespace it is another request.
	if _, err := sdk.Chat.Completions.New(ctx, params, option.WithResponseInto(&hr)); err != nil || hr.Header.Get("X-Switchyard-Cache") != "miss" {
		t.Fatalf("no namespace: %v, cache %q", err, hr.Header.Get("X-Switchyard-Cache"))
	}
	kept(2)

	req := &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini", Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}}
	res, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Switchyard == nil || res.Switchyard.Cache == nil || res.Switchyard.Cache.Result != "hit" || res.Switchyard.Costs.TotalTokensCost != 0 ||
		res.Switchyard.Cache.SavedUSD <= 0 {
		t.Fatalf("the Go client's view of a hit: %+v", res.Switchyard)
	}
	// Purged, the next identical request asks the model again.
	var ce *client.Error
	if err := c.DeleteCached(ctx, res.Switchyard.Cache.Key); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCached(ctx, res.Switchyard.Cache.Key); !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("deleting it again: %v, want a 404", err)
	}
	ns := "eval-1"
	if n, err := c.PurgeCache(ctx, &ns); err != nil || n != 1 {
		t.Fatalf("purging eval-1: %d, %v", n, err)
	}
	kept(0)
	if res, err := c.ChatCompletion(ctx, req); err != nil || res.Switchyard.Cache.Result != "miss" || upstreamCalls() != 3 {
		t.Fatalf("after the purge: %v %+v after %d calls", err, res, upstreamCalls())
	}
	kept(1)
	req.Cache = &client.CacheControl{NoCache: true}
	if res, err := c.ChatCompletion(ctx, req); err != nil || res.Switchyard.Cache.Result != "bypass" || upstreamCalls() != 4 {
		t.Fatalf("no-cache: %v %+v after %d calls", err, res, upstreamCalls())
	}
	kept(1)

	// Embeddings: each input is cached on its own.
	emb := openai.EmbeddingNewParams{Model: "openai/text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"alpha", "beta"}}}
	e1, err := sdk.Embeddings.New(ctx, emb, option.WithResponseInto(&hr))
	if err != nil || hr.Header.Get("X-Switchyard-Cache") != "miss" {
		t.Fatalf("embeddings: %v, cache %q", err, hr.Header.Get("X-Switchyard-Cache"))
	}
	kept(3)
	e2, err := sdk.Embeddings.New(ctx, emb, option.WithResponseInto(&hr))
	if err != nil || hr.Header.Get("X-Switchyard-Cache") != "hit" || len(e2.Data) != 2 || e2.Usage.PromptTokens != e1.Usage.PromptTokens {
		t.Fatalf("embeddings again: %v, cache %q, %+v", err, hr.Header.Get("X-Switchyard-Cache"), e2.Usage)
	}
	for i := range e1.Data {
		if fmt.Sprint(e1.Data[i].Embedding) != fmt.Sprint(e2.Data[i].Embedding) {
			t.Fatalf("vector %d: %v from the cache, %v from the model", i, e2.Data[i].Embedding, e1.Data[i].Embedding)
		}
	}
}
