package providers_test

// Review 14b: ConverseStream answers read by the SDK and by the adapter.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/switchyard-ai/switchyard/providers"
)

// sdkEvent encodes one event with the SDK's own event stream encoder.
func sdkEvent(t *testing.T, eventType, payload string) string {
	t.Helper()
	var buf bytes.Buffer
	msg := eventstream.Message{Payload: []byte(payload)}
	msg.Headers.Set(":event-type", eventstream.StringValue(eventType))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("event"))
	if err := eventstream.NewEncoder().Encode(&buf, msg); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func sdkException(t *testing.T, exceptionType, payload string) string {
	t.Helper()
	var buf bytes.Buffer
	msg := eventstream.Message{Payload: []byte(payload)}
	msg.Headers.Set(":exception-type", eventstream.StringValue(exceptionType))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
	if err := eventstream.NewEncoder().Encode(&buf, msg); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// sdkStreamEvents serves body to the SDK's ConverseStream and returns its events and its
// final error.
func sdkStreamEvents(t *testing.T, body string) ([]types.ConverseStreamOutput, error) {
	t.Helper()
	srv := newR14Server(t, 200, "application/vnd.amazon.eventstream", body)
	out, err := sdkClient(srv.URL, &fixedTimeSigner{}).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("m"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "x"}}}}})
	if err != nil {
		return nil, err
	}
	s := out.GetStream()
	defer s.Close()
	var evs []types.ConverseStreamOutput
	for e := range s.Events() {
		evs = append(evs, e)
	}
	return evs, s.Err()
}

// TestReview14bEveryStreamEventTheSDKDefines: a ConverseStream answer with every event the
// SDK defines — reasoning text, signature and redacted deltas, a tool call, a citation
// delta, a server tool's result, messageStop with additional fields, and metadata with
// cache tokens, metrics, trace, performance and service tier — is read whole by the SDK
// and by the adapter, which yields the reasoning, the call, the text, the finish and the
// usage (prompt tokens including the cache reads and writes).
func TestReview14bEveryStreamEventTheSDKDefines(t *testing.T) {
	body := sdkEvent(t, "messageStart", `{"role":"assistant"}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Let me think."}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"c2ln"}}}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":0}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"cmVk"}}}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":1}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"text":"The report says"}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"citation":{"title":"report","source":"doc","sourceContent":[{"text":"Q3 grew"}],"location":{"documentPage":{"documentIndex":0,"start":1,"end":2}}}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"text":" growth."}}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":2}`) +
		sdkEvent(t, "contentBlockStart", `{"contentBlockIndex":3,"start":{"toolUse":{"toolUseId":"tooluse_a","name":"get_weather"}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":3,"delta":{"toolUse":{"input":"{\"city\":\"Paris\"}"}}}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":3}`) +
		sdkEvent(t, "contentBlockStart", `{"contentBlockIndex":4,"start":{"toolResult":{"toolUseId":"srvtool_1","type":"nova_grounding","status":"success"}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":4,"delta":{"toolResult":[{"text":"server result"}]}}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":4}`) +
		sdkEvent(t, "messageStop", `{"stopReason":"tool_use","additionalModelResponseFields":{"stop_sequence":null}}`) +
		sdkEvent(t, "metadata", `{"usage":{"inputTokens":10,"outputTokens":20,"totalTokens":330,"cacheReadInputTokens":100,"cacheWriteInputTokens":200},`+
			`"metrics":{"latencyMs":42},"trace":{},"performanceConfig":{"latency":"standard"},"serviceTier":{"type":"default"}}`)

	evs, err := sdkStreamEvents(t, body)
	if err != nil {
		t.Fatalf("the SDK refused the stream: %v", err)
	}
	for i, e := range evs {
		if _, unknown := e.(*types.UnknownUnionMember); unknown {
			t.Errorf("the SDK did not know event %d", i)
		}
	}
	if len(evs) != 18 {
		t.Fatalf("the SDK read %d events, want 18", len(evs))
	}
	md := evs[17].(*types.ConverseStreamOutputMemberMetadata).Value
	if aws.ToInt32(md.Usage.CacheReadInputTokens) != 100 || aws.ToInt32(md.Usage.CacheWriteInputTokens) != 200 {
		t.Fatalf("SDK usage %+v", md.Usage)
	}

	d := bedrockStreamOf(t, body)
	if d.err != io.EOF {
		t.Fatalf("adapter: err %v, want io.EOF", d.err)
	}
	if d.text != "The report says growth." {
		t.Errorf("text %q", d.text)
	}
	wantR := []providers.ReasoningDelta{{Index: 0, Text: "Let me think."}, {Index: 0, Signature: "c2ln"}, {Index: 1, Redacted: "cmVk"}}
	if len(d.reasoning) != len(wantR) {
		t.Fatalf("reasoning %+v", d.reasoning)
	}
	for i := range wantR {
		if d.reasoning[i] != wantR[i] {
			t.Errorf("reasoning[%d] = %+v, want %+v", i, d.reasoning[i], wantR[i])
		}
	}
	// Only the client tool call: the server tool's result is the provider's own.
	wantC := []providers.ToolCallDelta{{Index: 0, ID: "tooluse_a", Name: "get_weather"}, {Index: 0, Arguments: `{"city":"Paris"}`}}
	if len(d.calls) != len(wantC) || d.calls[0] != wantC[0] || d.calls[1] != wantC[1] {
		t.Errorf("calls %+v, want %+v", d.calls, wantC)
	}
	if d.finish != "tool_calls" {
		t.Errorf("finish %q", d.finish)
	}
	if d.usage == nil || *d.usage != (providers.Usage{PromptTokens: 310, CompletionTokens: 20, CachedTokens: 100, CacheCreationTokens: 200}) {
		t.Errorf("usage %+v, want prompt 310 (10 + 100 read + 200 written), completion 20, cached 100, written 200", d.usage)
	}
}

// TestReview14bInterleavedToolBlocks: two toolUse blocks whose deltas interleave (their
// contentBlockIndex says which call each fragment belongs to) give two whole calls; no
// fragment is dropped or given to the other call.
func TestReview14bInterleavedToolBlocks(t *testing.T) {
	body := sdkEvent(t, "messageStart", `{"role":"assistant"}`) +
		sdkEvent(t, "contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_a","name":"get_weather"}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"city\":"}}}`) +
		sdkEvent(t, "contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_b","name":"get_time"}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"tz\":\"CET\"}"}}}`) +
		sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":1}`) +
		sdkEvent(t, "contentBlockStop", `{"contentBlockIndex":0}`) +
		sdkEvent(t, "messageStop", `{"stopReason":"tool_use"}`)
	if _, err := sdkStreamEvents(t, body); err != nil {
		t.Fatalf("the SDK refused the stream: %v", err)
	}
	d := bedrockStreamOf(t, body)
	if d.err != io.EOF {
		t.Fatalf("err %v", d.err)
	}
	args := map[int]string{}
	ids := map[int]string{}
	for _, c := range d.calls {
		args[c.Index] += c.Arguments
		if c.ID != "" {
			ids[c.Index] = c.ID
		}
	}
	if ids[0] != "tooluse_a" || args[0] != `{"city":"Paris"}` || ids[1] != "tooluse_b" || args[1] != `{"tz":"CET"}` {
		t.Errorf("calls: ids %v, arguments %v; want tooluse_a {\"city\":\"Paris\"} and tooluse_b {\"tz\":\"CET\"}", ids, args)
	}
}

// TestReview14bStreamExceptionsAsTheSDKReadsThem: each exception the SDK defines for
// ConverseStream, after some text, is an SDK error of that type and an adapter error of
// the kind its docs give.
func TestReview14bStreamExceptionsAsTheSDKReadsThem(t *testing.T) {
	start := sdkEvent(t, "messageStart", `{"role":"assistant"}`) + sdkEvent(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`)
	for _, c := range []struct {
		typ, payload, sdkName string
		kind                  providers.ErrorKind
	}{
		{"throttlingException", `{"message":"Too many tokens, please wait before trying again."}`, "ThrottlingException", providers.KindRateLimited},
		{"serviceUnavailableException", `{"message":"Bedrock is unable to process your request."}`, "ServiceUnavailableException", providers.KindOverloaded},
		{"internalServerException", `{"message":"The system encountered an unexpected error during processing."}`, "InternalServerException", providers.KindOverloaded},
		{"validationException", `{"message":"Input is too long for requested model."}`, "ValidationException", providers.KindContextLength},
		{"validationException", `{"message":"The model returned the following errors: prompt is too long: 220000 tokens > 200000 maximum"}`, "ValidationException", providers.KindContextLength},
		{"modelStreamErrorException", `{"message":"Model stream error","originalStatusCode":429,"originalMessage":"Too many requests"}`, "ModelStreamErrorException", providers.KindRateLimited},
		{"modelStreamErrorException", `{"message":"Model stream error","originalStatusCode":529,"originalMessage":"Overloaded"}`, "ModelStreamErrorException", providers.KindOverloaded},
	} {
		body := start + sdkException(t, c.typ, c.payload)
		_, err := sdkStreamEvents(t, body)
		if err == nil || !strings.Contains(err.Error(), c.sdkName) {
			t.Errorf("%s: the SDK read %v", c.typ, err)
		}
		d := bedrockStreamOf(t, body)
		var pe *providers.Error
		if !errors.As(d.err, &pe) || pe.Kind != c.kind || d.text != "Hel" {
			t.Errorf("%s %s: adapter %v (kind %s), want %s", c.typ, c.payload, d.err, providers.KindOf(d.err), c.kind)
		}
	}
}

// TestReview14bErrorDocumentAtStatus200: a ConverseStream whose 200 body is the error
// document Bedrock sends (x-amzn-errortype in a header, {"message":…} body) is classified by
// the header, as an HTTP error would be.
func TestReview14bErrorDocumentAtStatus200(t *testing.T) {
	srv := newR14Server(t, 200, "application/json", "")
	srv.answer = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
	}
	s, err := ourBedrock(srv.URL).Stream(context.Background(), hello("m"))
	if err == nil {
		_, err = s.Recv()
		s.Close()
	}
	if providers.KindOf(err) != providers.KindRateLimited {
		t.Errorf("err %v, want rate limited", err)
	}
}
