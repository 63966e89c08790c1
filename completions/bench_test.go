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
// runs per stream), without any network: a text answer in n fragments beside a tool call
// whose arguments come in n fragments (after the fragment with its id and name), for n = 20
// and 60 (the difference is the cost per fragment without the per-stream part). The
// fragments/op and ns/fragment metrics divide by the chunks relayed.

// benchWords is a text answer in n fragments.
func benchWords(n int) []string {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("tok%d ", i)
	}
	words[n-1] = strings.TrimSpace(words[n-1])
	return words
}

// benchArgumentPieces are a call's arguments in n fragments of about 5 bytes each, as a
// model streams them a token or two at a time (OpenAI's documented streamed function call
// has pieces like `{"`, `location`, `":"`): the size of the text fragments "tokN ".
func benchArgumentPieces(n int) []string {
	full := `{"location":"Paris, France","unit":"celsius","days":3,"detail":true`
	for i := 0; len(full) < 5*n-1; i++ {
		full += fmt.Sprintf(`,"k%d":"v%d"`, i, i)
	}
	full += "}"
	pieces := make([]string, n)
	for i := range pieces {
		pieces[i] = full[i*len(full)/n : (i+1)*len(full)/n]
	}
	return pieces
}

func benchRelayGateway(b *testing.B, n int) *Gateway {
	args := benchArgumentPieces(n)
	call := &providers.ToolCall{ID: "call_0123456789abcdefghijklmn", Name: "get_weather", Arguments: strings.Join(args, "")}
	usage := providers.Usage{PromptTokens: 40, CompletionTokens: n}
	p := newFake("openai").
		on("text", step{text: strings.Join(benchWords(n), ""), usage: usage}).
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

// relayStreams runs one streamed request after another through g and WriteOpenAIStream.
func relayStreams(b *testing.B, g *Gateway, body string) {
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

func benchRelay(b *testing.B, model string, n int, withTools bool) {
	body := `{"model":"openai/` + model + `","messages":[{"role":"user","content":"What is the weather in Paris?"}],"stream":true`
	if withTools {
		body += "," + benchToolsBody
	}
	relayStreams(b, benchRelayGateway(b, n), body+"}")
}

// The same request (with tools) answered with text or with a tool call: only the relay
// differs. BenchmarkRelayTextNoTools20 is plain text streaming of a request without tools.
func BenchmarkRelayText20(b *testing.B)        { benchRelay(b, "text", 20, true) }
func BenchmarkRelayToolCall20(b *testing.B)    { benchRelay(b, "tool", 20, true) }
func BenchmarkRelayText60(b *testing.B)        { benchRelay(b, "text", 60, true) }
func BenchmarkRelayToolCall60(b *testing.B)    { benchRelay(b, "tool", 60, true) }
func BenchmarkRelayTextNoTools20(b *testing.B) { benchRelay(b, "text", 20, false) }

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
func benchAdapterRelay(b *testing.B, tool bool, n int) {
	body := upstreamStreamBody(tool, n)
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
	relayStreams(b, g, `{"model":"openai/m","messages":[{"role":"user","content":"What is the weather in Paris?"}],"stream":true,`+benchToolsBody+`}`)
}

func BenchmarkRelayAdapterText20(b *testing.B)     { benchAdapterRelay(b, false, 20) }
func BenchmarkRelayAdapterToolCall20(b *testing.B) { benchAdapterRelay(b, true, 20) }
func BenchmarkRelayAdapterText60(b *testing.B)     { benchAdapterRelay(b, false, 60) }
func BenchmarkRelayAdapterToolCall60(b *testing.B) { benchAdapterRelay(b, true, 60) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// upstreamStreamBody is an OpenAI chat.completion.chunk stream of n text fragments, or of a
// tool call whose arguments come in n fragments after the one with its id and name.
func upstreamStreamBody(tool bool, n int) []byte {
	var b bytes.Buffer
	chunk := func(delta, finish string) {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
	}
	finish := `"stop"`
	if tool {
		finish = `"tool_calls"`
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "null")
		for _, p := range benchArgumentPieces(n) {
			a, _ := json.Marshal(p)
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(a)+`}}]}`, "null")
		}
	} else {
		for _, w := range benchWords(n) {
			a, _ := json.Marshal(w)
			chunk(`{"content":`+string(a)+`}`, "null")
		}
	}
	chunk(`{}`, finish)
	fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", n, 60+n)
	return b.Bytes()
}

// BenchmarkDecodeRequest decodes a native request body of four messages (the strict
// message decoding of Message.UnmarshalJSON included).
func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"models":["openai/gpt-4o-mini"],"temperature":0.2,"messages":[` +
		`{"role":"system","content":[{"type":"text","text":"You are brief."}]},` +
		`{"role":"user","content":[{"type":"text","text":"What is a mutex?"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"A lock that lets one thread in at a time."}]},` +
		`{"role":"user","content":"And a semaphore?"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		var r Request
		if err := json.Unmarshal(body, &r); err != nil || len(r.Messages) != 4 {
			b.Fatal(err)
		}
	}
}
