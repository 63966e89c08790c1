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
