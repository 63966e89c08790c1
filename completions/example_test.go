package completions_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeUpstream stands in for an OpenAI-compatible server (api.openai.com, vLLM, Ollama):
// model "overloaded" always answers 503, any other model answers "Paris." (streamed when
// asked).
func fakeUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"model":"overloaded"`) {
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, frag := range []string{"Par", "is."} {
				fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"steady\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", frag)
			}
			fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"steady\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"steady","choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}`)
	}))
}

// A Gateway as a library: one OpenAI-format provider called "local", a primary model that
// fails and a fallback that answers. Every attempt is reported on the response.
func Example() {
	upstream := fakeUpstream()
	defer upstream.Close()

	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{
		Name: "local", BaseURL: upstream.URL, KeyOptional: true,
	}))
	gw, err := completions.New(completions.Options{Providers: reg, DefaultMaxRetries: -1})
	if err != nil {
		panic(err)
	}
	resp, err := gw.Complete(context.Background(), completions.Scope{Owner: "me"}, &completions.Request{
		Messages:       []completions.Message{completions.TextMessage("user", "Capital of France?")},
		Models:         []string{"local/overloaded"},
		FallbackModels: []string{"local/steady"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Model, "answered:", resp.Text())
	for _, a := range resp.Attempts {
		fmt.Println(strings.TrimSpace("  " + a.Model + " " + a.Outcome + " " + a.Kind))
	}
	fmt.Println("tokens:", resp.Usage.PromptTokens, "in,", resp.Usage.CompletionTokens, "out")
	// Output:
	// steady answered: Paris.
	// local/overloaded error overloaded
	// local/steady ok
	// tokens: 12 in, 2 out
}

// Streaming: Recv returns the fragments, io.EOF at the end, and Response the whole answer.
func ExampleGateway_Stream() {
	upstream := fakeUpstream()
	defer upstream.Close()

	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{
		Name: "local", BaseURL: upstream.URL, KeyOptional: true,
	}))
	gw, err := completions.New(completions.Options{Providers: reg})
	if err != nil {
		panic(err)
	}
	stream, err := gw.Stream(context.Background(), completions.Scope{}, &completions.Request{
		Messages: []completions.Message{completions.TextMessage("user", "Capital of France?")},
		Models:   []string{"local/steady"},
	})
	if err != nil {
		panic(err)
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err) // a *completions.StreamError: the text so far is not an answer
		}
		fmt.Printf("%q\n", chunk.Text)
	}
	fmt.Println("whole:", stream.Response().Text())
	// Output:
	// "Par"
	// "is."
	// whole: Paris.
}
