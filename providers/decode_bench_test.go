package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// Decoding one streamed OpenAI chunk: a piece of text beside a piece of tool-call
// arguments (the chunks a relay decodes once per fragment).
var (
	benchTextChunk = []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok7 "},"finish_reason":null}]}`)
	benchArgsChunk = []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ation"}}]},"finish_reason":null}]}`)
)

func benchChunkStream(b *testing.B, chunk []byte) {
	var body bytes.Buffer
	const n = 1000
	for range n {
		body.WriteString("data: ")
		body.Write(chunk)
		body.WriteString("\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	raw := body.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancelCause(context.Background())
		c := &call{ctx: ctx, cancel: cancel, timer: time.AfterFunc(time.Hour, func() {}), body: bytes.NewReader(raw),
			resp: &http.Response{Body: io.NopCloser(nil)}}
		s := &openAIStream{streamState: newStreamState(c)}
		for {
			if _, err := s.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
}

func BenchmarkOpenAITextChunk(b *testing.B)      { benchChunkStream(b, benchTextChunk) }
func BenchmarkOpenAIArgumentsChunk(b *testing.B) { benchChunkStream(b, benchArgsChunk) }
