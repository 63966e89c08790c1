package providers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/switchyard-ai/switchyard/providers"
)

// A registry built from the environment (here a fake one pointing at a local stand-in for
// the OpenAI API), a streamed call, and its cost from the embedded catalogue.
func Example() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"prompt_tokens_details":{"cached_tokens":400}}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer upstream.Close()

	env := map[string]string{"OPENAI_API_KEY": "sk-example", "OPENAI_BASE_URL": upstream.URL + "/v1"}
	reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})

	p, model, err := reg.Resolve("openai/gpt-4o")
	if err != nil {
		panic(err)
	}
	s, err := p.Stream(context.Background(), &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "Hello"}}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var usage providers.Usage
	var text string
	for {
		c, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("failed:", providers.KindOf(err), err)
			return
		}
		text += c.Text
		if c.Usage != nil {
			usage = *c.Usage
		}
	}
	cost := providers.DefaultCatalog().Cost("openai/gpt-4o", usage)
	fmt.Printf("%q\nprompt %d (cached %d), completion %d, cost $%.5f known=%v\n",
		text, usage.PromptTokens, usage.CachedTokens, usage.CompletionTokens, cost.TotalUSD, cost.Known)
	// Output:
	// "Hi there"
	// prompt 1000 (cached 400), completion 500, cost $0.00700 known=true
}
