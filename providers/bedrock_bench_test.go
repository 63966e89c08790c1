package providers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// What one request costs the Bedrock adapter (translation, SigV4 signing, the call to a
// loopback upstream, decoding the answer) beside the Anthropic adapter, for the same
// conversation (a system prompt, three turns, one tool) and the same answer, whole or
// streamed in 50 text deltas. BENCHMARKS.md, "Amazon Bedrock adapter", has the figures.

func benchRequest(model string) *providers.Request {
	return &providers.Request{Model: model, MaxTokens: 512, Tools: []providers.Tool{weatherTool}, Messages: []providers.Message{
		{Role: "system", Content: "You are a concise assistant. Answer in one paragraph."},
		{Role: "user", Content: "What is the weather like in Paris in spring?"},
		{Role: "assistant", Content: "Mild: 10 to 20 degrees, with showers."},
		{Role: "user", Content: "And in Lisbon? Compare the two in a few sentences."},
	}}
}

const benchDeltas = 50

func benchAnthropicBody(stream bool) string {
	if !stream {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"` +
			strings.Repeat("tok ", benchDeltas) + `"}],"stop_reason":"end_turn","usage":{"input_tokens":120,"output_tokens":50}}`
	}
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":120,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range benchDeltas {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok \"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":50}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}

func benchBedrockBody(stream bool) string {
	if !stream {
		return `{"output":{"message":{"role":"assistant","content":[{"text":"` + strings.Repeat("tok ", benchDeltas) +
			`"}]}},"stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":50,"totalTokens":170},"metrics":{"latencyMs":300}}`
	}
	var b strings.Builder
	b.WriteString(bedrockEvent("messageStart", `{"p":"abcdefghijklmnopqrs","role":"assistant"}`))
	for range benchDeltas {
		b.WriteString(bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"tok "},"p":"abcdefghijklmnopqrstuvwx"}`))
	}
	b.WriteString(bedrockEvent("contentBlockStop", `{"contentBlockIndex":0,"p":"abcdefgh"}`))
	b.WriteString(bedrockEvent("messageStop", `{"p":"abcdefghijklm","stopReason":"end_turn"}`))
	b.WriteString(bedrockEvent("metadata", `{"metrics":{"latencyMs":300},"p":"abcdefghijklm","usage":{"inputTokens":120,"outputTokens":50,"totalTokens":170}}`))
	return b.String()
}

func benchAdapter(b *testing.B, format providers.Format, sigV4, stream bool) {
	var body, contentType, model string
	if format == providers.FormatBedrock {
		body, contentType, model = benchBedrockBody(stream), "application/vnd.amazon.eventstream", "anthropic.claude-3-5-sonnet-20240620-v1:0"
	} else {
		body, contentType, model = benchAnthropicBody(stream), "text/event-stream", "claude-sonnet-4-5"
	}
	if !stream {
		contentType = "application/json"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	cfg := providers.Config{Name: string(format), BaseURL: srv.URL, APIKey: testKey, HTTPClient: srv.Client()}
	if sigV4 {
		cfg.APIKey, cfg.AWS = "", sigV4TestAWS
	}
	p, err := providers.New(format, cfg)
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(model)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if !stream {
			resp, err := p.Complete(ctx, req)
			if err != nil || len(resp.Text) != 4*benchDeltas {
				b.Fatalf("%v %v", err, resp)
			}
			continue
		}
		s, err := p.Stream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			c, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(c.Text)
		}
		if n != 4*benchDeltas {
			b.Fatalf("streamed %d bytes of text", n)
		}
	}
}

func BenchmarkAdapterRequest(b *testing.B) {
	for _, c := range []struct {
		name   string
		format providers.Format
		sigV4  bool
	}{
		{"anthropic", providers.FormatAnthropic, false},
		{"bedrock-sigv4", providers.FormatBedrock, true},
		{"bedrock-apikey", providers.FormatBedrock, false},
	} {
		for _, stream := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(b *testing.B) { benchAdapter(b, c.format, c.sigV4, stream) })
		}
	}
}
