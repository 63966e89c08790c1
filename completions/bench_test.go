package completions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// The gateway's own cost per request, without any network: an in-memory provider that
// answers at once, the real catalogue and an in-memory store.
func benchGateway(b *testing.B) *Gateway {
	p := newFake("openai").on("gpt-4o-mini", step{text: "Paris is the capital of France and its largest city.", usage: providers.Usage{PromptTokens: 12, CompletionTokens: 10}})
	g, err := New(Options{Providers: fakeRegistry{"openai": p}, Prices: providers.DefaultCatalog(), Store: memstore.New()})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkComplete(b *testing.B) {
	g := benchGateway(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Complete(ctx, Scope{Owner: "k"}, userReq("What is the capital of France?", "openai/gpt-4o-mini")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	g := benchGateway(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		st, err := g.Stream(ctx, Scope{Owner: "k"}, userReq("What is the capital of France?", "openai/gpt-4o-mini"))
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		st.Close()
	}
}

// The relay of a streamed answer through WriteOpenAIStream (what POST /v1/chat/completions
// runs per stream), without any network: a text answer in 20 fragments beside a tool call
// whose arguments come in 20 fragments (after the fragment with its id and name). The
// fragments/op and ns/fragment metrics divide by the chunks relayed.
const benchFragments = 20

func benchRelayGateway(b *testing.B) *Gateway {
	var words []string
	var args []string
	for i := range benchFragments {
		words = append(words, fmt.Sprintf("tok%d ", i))
		args = append(args, fmt.Sprintf(`"k%d":"v%d",`, i, i))
	}
	args[0] = "{" + args[0]
	args[benchFragments-1] = strings.TrimSuffix(args[benchFragments-1], ",") + "}"
	call := &providers.ToolCall{ID: "call_0123456789abcdefghijklmn", Name: "get_weather", Arguments: strings.Join(args, "")}
	usage := providers.Usage{PromptTokens: 40, CompletionTokens: benchFragments}
	p := newFake("openai").
		on("text", step{text: strings.TrimSpace(strings.Join(words, "")), usage: usage}).
		on("tool", step{call: call, argPieces: args, usage: usage})
	g, err := New(Options{Providers: fakeRegistry{"openai": p}, Prices: providers.DefaultCatalog()})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// benchToolsBody is the tools of the tool-call benchmark's requests (an SDK sends them with
// every request of an agent loop).
const benchToolsBody = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather",
	"parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}}}]`

func benchRelay(b *testing.B, model string, withTools bool) {
	g := benchRelayGateway(b)
	body := `{"model":"openai/` + model + `","messages":[{"role":"user","content":"What is the weather in Paris?"}],"stream":true`
	if withTools {
		body += "," + benchToolsBody
	}
	body += "}"
	ctx := context.Background()
	w := &discardResponse{header: http.Header{}}
	fragments := 0
	b.ReportAllocs()
	for b.Loop() {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			b.Fatal(err)
		}
		req, err := o.ToRequest()
		if err != nil {
			b.Fatal(err)
		}
		st, err := g.Stream(ctx, Scope{}, req)
		if err != nil {
			b.Fatal(err)
		}
		w.events = 0
		if err := WriteOpenAIStream(w, st, true); err != nil {
			b.Fatal(err)
		}
		fragments = w.events - 3 // the finish chunk, the usage chunk and [DONE]
	}
	b.ReportMetric(float64(fragments), "fragments/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*fragments), "ns/fragment")
}

// The same request (with tools) answered with text or with a tool call: only the relay
// differs. BenchmarkRelayTextNoTools is plain text streaming of a request without tools.
func BenchmarkRelayText20(b *testing.B)        { benchRelay(b, "text", true) }
func BenchmarkRelayToolCall20(b *testing.B)    { benchRelay(b, "tool", true) }
func BenchmarkRelayTextNoTools20(b *testing.B) { benchRelay(b, "text", false) }

// discardResponse is an http.ResponseWriter and Flusher that counts SSE events and keeps
// nothing.
type discardResponse struct {
	header http.Header
	events int
}

func (d *discardResponse) Header() http.Header { return d.header }
func (d *discardResponse) WriteHeader(int)     {}
func (d *discardResponse) Flush()              {}
func (d *discardResponse) Write(p []byte) (int, error) {
	d.events += bytes.Count(p, []byte("\n\n"))
	return len(p), nil
}

// The same relay with the real OpenAI adapter decoding upstream chunks, from an in-memory
// transport that answers with the bytes an OpenAI upstream sends (no network, no HTTP
// server in front): the gateway's whole per-stream work but the sockets.
func benchAdapterRelay(b *testing.B, tool bool) {
	body := upstreamStreamBody(tool)
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})
	adapter := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://upstream.invalid/v1", APIKey: "sk", HTTPClient: &http.Client{Transport: rt}})
	g, err := New(Options{Providers: fakeRegistry{"openai": adapter}, Prices: providers.DefaultCatalog()})
	if err != nil {
		b.Fatal(err)
	}
	reqBody := `{"model":"openai/m","messages":[{"role":"user","content":"What is the weather in Paris?"}],"stream":true,` + benchToolsBody + `}`
	w := &discardResponse{header: http.Header{}}
	fragments := 0
	b.ReportAllocs()
	for b.Loop() {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(reqBody), &o); err != nil {
			b.Fatal(err)
		}
		req, err := o.ToRequest()
		if err != nil {
			b.Fatal(err)
		}
		st, err := g.Stream(context.Background(), Scope{}, req)
		if err != nil {
			b.Fatal(err)
		}
		w.events = 0
		if err := WriteOpenAIStream(w, st, true); err != nil {
			b.Fatal(err)
		}
		fragments = w.events - 3
	}
	b.ReportMetric(float64(fragments), "fragments/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*fragments), "ns/fragment")
}

func BenchmarkRelayAdapterText20(b *testing.B)     { benchAdapterRelay(b, false) }
func BenchmarkRelayAdapterToolCall20(b *testing.B) { benchAdapterRelay(b, true) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// upstreamStreamBody is an OpenAI chat.completion.chunk stream of 20 text fragments, or of
// a tool call whose arguments come in 20 fragments after the one with its id and name.
func upstreamStreamBody(tool bool) []byte {
	var b bytes.Buffer
	chunk := func(delta, finish string) {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
	}
	if tool {
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "null")
	}
	for i := range benchFragments {
		if tool {
			a, _ := json.Marshal(fmt.Sprintf(`"k%02d":"v%02d",`, i, i))
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(a)+`}}]}`, "null")
		} else {
			chunk(fmt.Sprintf(`{"content":"tok%d "}`, i), "null")
		}
	}
	finish := `"stop"`
	if tool {
		finish = `"tool_calls"`
	}
	chunk(`{}`, finish)
	b.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":20,\"total_tokens\":80}}\n\ndata: [DONE]\n\n")
	return b.Bytes()
}
