package providers_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/switchyard-ai/switchyard/providers"
)

// eventFrame encodes one AWS event stream message with string headers (in order) and a
// payload: the 12-byte prelude (total length, headers length, CRC32 of both), the headers
// (name length, name, type 7, value length, value), the payload and the CRC32 of all that.
func eventFrame(headers [][2]string, payload string) string {
	var h bytes.Buffer
	for _, kv := range headers {
		h.WriteByte(byte(len(kv[0])))
		h.WriteString(kv[0])
		h.WriteByte(7) // string
		binary.Write(&h, binary.BigEndian, uint16(len(kv[1])))
		h.WriteString(kv[1])
	}
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(12+h.Len()+len(payload)+4))
	binary.Write(&b, binary.BigEndian, uint32(h.Len()))
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(b.Bytes()))
	b.Write(h.Bytes())
	b.WriteString(payload)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(b.Bytes()))
	return b.String()
}

// bedrockEvent is a ConverseStream event message.
func bedrockEvent(eventType, payload string) string {
	return eventFrame([][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}}, payload)
}

// bedrockException is a ConverseStream exception message.
func bedrockException(exceptionType, payload string) string {
	return eventFrame([][2]string{{":exception-type", exceptionType}, {":content-type", "application/json"}, {":message-type", "exception"}}, payload)
}

// The shared stream shapes of faults_test.go for Bedrock: "Hel", then "lo" and the end.
func bedrockPartialStream() string {
	return bedrockEvent("messageStart", `{"role":"assistant"}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`)
}

func bedrockStreamEnd() string {
	return bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"lo"}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":0}`) +
		bedrockEvent("messageStop", `{"stopReason":"end_turn"}`) +
		bedrockEvent("metadata", `{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5},"metrics":{"latencyMs":12}}`)
}

// bedrockCorruptFrame is a well-formed event whose message checksum is wrong.
func bedrockCorruptFrame() string {
	f := []byte(bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"X"}}`))
	f[len(f)-1] ^= 0xff
	return string(f)
}

// TestEventFrameMatchesTheSDKEncoder: the tests' encoder writes what the AWS SDK's
// encoder writes for the same message, so the streams they make are AWS's format.
func TestEventFrameMatchesTheSDKEncoder(t *testing.T) {
	var buf bytes.Buffer
	msg := eventstream.Message{Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"Hi"}}`)}
	msg.Headers.Set(":event-type", eventstream.StringValue("contentBlockDelta"))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("event"))
	if err := eventstream.NewEncoder().Encode(&buf, msg); err != nil {
		t.Fatal(err)
	}
	if got := bedrockEvent("contentBlockDelta", string(msg.Payload)); got != buf.String() {
		t.Errorf("encoder differs from the SDK's:\n%x\n%x", got, buf.Bytes())
	}
}

// bedrockStreamOf serves body as a ConverseStream answer and drains it: text, the chunks'
// reasoning and tool calls, finish, usage and the terminal error.
type bedrockDrained struct {
	text, finish string
	usage        *providers.Usage
	reasoning    []providers.ReasoningDelta
	calls        []providers.ToolCallDelta
	err          error
}

func bedrockStreamOf(t *testing.T, body string) bedrockDrained {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	s, err := newProvider(t, providers.FormatBedrock, srv.URL, nil).Stream(context.Background(), hello("anthropic.claude-sonnet-4-20250514-v1:0"))
	if err != nil {
		return bedrockDrained{err: err}
	}
	defer s.Close()
	var d bedrockDrained
	for {
		c, err := s.Recv()
		if err != nil {
			d.err = err
			return d
		}
		d.text += c.Text
		if c.Reasoning != nil {
			d.reasoning = append(d.reasoning, *c.Reasoning)
		}
		d.calls = append(d.calls, c.ToolCalls...)
		if c.FinishReason != "" {
			d.finish = c.FinishReason
		}
		if c.Usage != nil {
			d.usage = c.Usage
		}
	}
}

// TestBedrockStreamFailures: mid-stream exceptions end the stream with their classified
// error (never a clean end), and so does every kind of broken stream: cut between or
// inside messages, a message failing its checksums or declaring impossible lengths, an
// error document in place of the stream.
func TestBedrockStreamFailures(t *testing.T) {
	start := bedrockPartialStream()
	whole := start + bedrockStreamEnd()
	cut := whole[:len(whole)-7] // inside the metadata message
	badPrelude := []byte(bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"X"}}`))
	badPrelude[9] ^= 0xff
	huge := make([]byte, 12)
	binary.BigEndian.PutUint32(huge[0:], 64<<20)
	binary.BigEndian.PutUint32(huge[8:], crc32.ChecksumIEEE(huge[:8]))
	for _, c := range []struct {
		name, body string
		kind       providers.ErrorKind
		text, msg  string
	}{
		{"throttling", start + bedrockException("throttlingException", `{"message":"Too many tokens, please wait before trying again."}`), providers.KindRateLimited, "Hel", "Too many tokens"},
		{"model stream error", start + bedrockException("modelStreamErrorException", `{"message":"Model stream error","originalStatusCode":500,"originalMessage":"overloaded"}`), providers.KindOverloaded, "Hel", "Model stream error"},
		{"model stream error without status", start + bedrockException("modelStreamErrorException", `{"message":"stream failed"}`), providers.KindStreamBroken, "Hel", "stream failed"},
		{"validation too long", start + bedrockException("validationException", `{"message":"Input is too long for requested model."}`), providers.KindContextLength, "Hel", "too long"},
		{"validation", start + bedrockException("validationException", `{"message":"Malformed input request"}`), providers.KindBadRequest, "Hel", "Malformed"},
		{"internal", start + bedrockException("internalServerException", `{"message":"Internal error"}`), providers.KindOverloaded, "Hel", "Internal error"},
		{"unavailable", start + bedrockException("serviceUnavailableException", `{"message":"Service unavailable"}`), providers.KindOverloaded, "Hel", "unavailable"},
		{"model timeout", start + bedrockException("modelTimeoutException", `{"message":"timed out"}`), providers.KindTimeout, "Hel", "timed out"},
		{"error message", start + eventFrame([][2]string{{":message-type", "error"}, {":error-code", "InternalFailure"}, {":error-message", "boom"}}, ""), providers.KindOverloaded, "Hel", "boom"},
		{"after messageStop", start + bedrockEvent("messageStop", `{"stopReason":"end_turn"}`) + bedrockException("throttlingException", `{"message":"late"}`), providers.KindRateLimited, "Hel", "late"},
		{"cut between messages", start, providers.KindStreamBroken, "Hel", "messageStop"},
		{"cut inside a message", cut, providers.KindStreamBroken, "Hello", "cut inside a message"},
		{"cut inside a prelude", start + whole[:5], providers.KindStreamBroken, "Hel", "prelude"},
		{"message checksum", start + bedrockCorruptFrame() + bedrockStreamEnd(), providers.KindStreamBroken, "Hel", "checksum"},
		{"prelude checksum", start + string(badPrelude) + bedrockStreamEnd(), providers.KindStreamBroken, "Hel", "prelude checksum"},
		{"oversized message", start + string(huge), providers.KindStreamBroken, "Hel", "malformed"},
		{"not an event stream", "<html>bad gateway</html>", providers.KindStreamBroken, "", "malformed"},
		{"error document", `{"message":"Too many requests, please wait before trying again.","__type":"ThrottlingException"}`, providers.KindRateLimited, "", "Too many requests"},
		{"malformed payload", start + bedrockEvent("contentBlockDelta", `{"delta":{"text":`), providers.KindStreamBroken, "Hel", "malformed stream event"},
		{"blocked", start + bedrockEvent("messageStop", `{"stopReason":"guardrail_intervened"}`) +
			bedrockEvent("metadata", `{"usage":{"inputTokens":3,"outputTokens":1}}`), providers.KindContentFilter, "Hel", "guardrail_intervened"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := bedrockStreamOf(t, c.body)
			var pe *providers.Error
			if !errors.As(d.err, &pe) || pe.Kind != c.kind {
				t.Fatalf("err = %v (kind %s), want %s", d.err, providers.KindOf(d.err), c.kind)
			}
			if d.text != c.text || !strings.Contains(pe.Message, c.msg) {
				t.Errorf("text %q, message %q; want %q, a message with %q", d.text, pe.Message, c.text, c.msg)
			}
			if c.kind == providers.KindContentFilter && (pe.Usage == nil || *pe.Usage != providers.Usage{PromptTokens: 3, CompletionTokens: 1}) {
				t.Errorf("blocked answer's usage = %+v", pe.Usage)
			}
		})
	}
}

// TestBedrockStreamEvents: reasoning (text, then its signature; redacted blocks), tool
// calls (with and without input), unknown events skipped, the finish and usage chunks,
// and a clean end after messageStop without metadata.
func TestBedrockStreamEvents(t *testing.T) {
	body := bedrockEvent("messageStart", `{"role":"assistant"}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Think"}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"ing."}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"sig=="}}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":0}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"cmVkYWN0ZWQ="}}}`) +
		bedrockEvent("someFutureEvent", `{"x":1}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"text":"Calling."}}`) +
		bedrockEvent("contentBlockStart", `{"contentBlockIndex":3,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather"}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":3,"delta":{"toolUse":{"input":"{\"city\":"}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":3,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":3}`) +
		bedrockEvent("contentBlockStart", `{"contentBlockIndex":4,"start":{"toolUse":{"toolUseId":"tooluse_2","name":"now"}}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":4}`) +
		bedrockEvent("messageStop", `{"stopReason":"tool_use"}`)
	d := bedrockStreamOf(t, body)
	if d.err != io.EOF {
		t.Fatalf("err = %v, want io.EOF (messageStop came; metadata is optional)", d.err)
	}
	want := []providers.ReasoningDelta{{Index: 0, Text: "Think"}, {Index: 0, Text: "ing."}, {Index: 0, Signature: "sig=="}, {Index: 1, Redacted: "cmVkYWN0ZWQ="}}
	if len(d.reasoning) != len(want) {
		t.Fatalf("reasoning = %+v", d.reasoning)
	}
	for i := range want {
		if d.reasoning[i] != want[i] {
			t.Errorf("reasoning[%d] = %+v, want %+v", i, d.reasoning[i], want[i])
		}
	}
	wantCalls := []providers.ToolCallDelta{{Index: 0, ID: "tooluse_1", Name: "get_weather"}, {Index: 0, Arguments: `{"city":`}, {Index: 0, Arguments: `"Paris"}`},
		{Index: 1, ID: "tooluse_2", Name: "now"}, {Index: 1, Arguments: "{}"}}
	if len(d.calls) != len(wantCalls) {
		t.Fatalf("calls = %+v", d.calls)
	}
	for i := range wantCalls {
		if d.calls[i] != wantCalls[i] {
			t.Errorf("call delta %d = %+v, want %+v", i, d.calls[i], wantCalls[i])
		}
	}
	if d.text != "Calling." || d.finish != "tool_calls" || d.usage != nil {
		t.Errorf("text %q finish %q usage %v", d.text, d.finish, d.usage)
	}
}

// TestBedrockErrorTable: HTTP errors are classified by x-amzn-errortype (else the body's
// __type) and message, with Retry-After honoured, for Converse and ConverseStream alike.
func TestBedrockErrorTable(t *testing.T) {
	for _, c := range []struct {
		status         int
		errType, body  string
		kind           providers.ErrorKind
		retryAfter     string
		wantRetryAfter time.Duration
	}{
		{429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Too many requests, please wait before trying again."}`, providers.KindRateLimited, "3", 3 * time.Second},
		{429, "ThrottlingException", `{"message":"Too many tokens, please wait before trying again."}`, providers.KindRateLimited, "", 0},
		{429, "ModelNotReadyException", `{"message":"Model is not ready for inference. Wait and try your request again."}`, providers.KindOverloaded, "", 0},
		{400, "ServiceQuotaExceededException", `{"message":"Your request exceeds the service quota for your account."}`, providers.KindRateLimited, "", 0},
		{503, "ServiceUnavailableException", `{"message":"Bedrock is unable to process your request."}`, providers.KindOverloaded, "", 0},
		{500, "InternalServerException", `{"message":"The server encountered an error processing your request."}`, providers.KindOverloaded, "", 0},
		{424, "ModelErrorException", `{"message":"The request failed due to an error while processing the model."}`, providers.KindOverloaded, "", 0},
		{408, "ModelTimeoutException", `{"message":"The request took too long to process."}`, providers.KindTimeout, "", 0},
		{400, "ValidationException", `{"message":"Malformed input request: #: extraneous key [foo] is not permitted"}`, providers.KindBadRequest, "", 0},
		{400, "ValidationException", `{"message":"The model returned the following errors: Input is too long for requested model."}`, providers.KindContextLength, "", 0},
		{400, "ValidationException", `{"message":"prompt is too long: 210000 tokens > 200000 maximum"}`, providers.KindContextLength, "", 0},
		{400, "ValidationException", `{"message":"The provided model identifier is invalid."}`, providers.KindModelNotFound, "", 0},
		{403, "AccessDeniedException", `{"message":"You don't have access to the model with the specified model ID."}`, providers.KindAuth, "", 0},
		{403, "UnrecognizedClientException", `{"message":"The security token included in the request is invalid."}`, providers.KindAuth, "", 0},
		{403, "", `{"message":"The request signature we calculated does not match the signature you provided."}`, providers.KindAuth, "", 0},
		{404, "ResourceNotFoundException", `{"message":"Model not found."}`, providers.KindModelNotFound, "", 0},
		{400, "", `{"__type":"com.amazon.coral.validate#ValidationException","message":"Input is too long for requested model."}`, providers.KindContextLength, "", 0},
		{429, "", `{"__type":"ThrottlingException","message":"Rate exceeded"}`, providers.KindRateLimited, "", 0},
		{502, "", `<html>Bad Gateway</html>`, providers.KindOverloaded, "", 0},
	} {
		for _, stream := range []bool{false, true} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.errType != "" {
					w.Header().Set("X-Amzn-Errortype", c.errType)
				}
				if c.retryAfter != "" {
					w.Header().Set("Retry-After", c.retryAfter)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
			var err error
			if stream {
				_, err = p.Stream(context.Background(), hello("amazon.nova-pro-v1:0"))
			} else {
				_, err = p.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
			}
			srv.Close()
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != c.kind || pe.StatusCode != c.status || pe.RetryAfter != c.wantRetryAfter {
				t.Errorf("%d %s %s (stream %v): %v (kind %s, retry after %v), want %s", c.status, c.errType, c.body, stream, err, providers.KindOf(err), pe.RetryAfter, c.kind)
				continue
			}
			if pe.Message == "" || strings.HasPrefix(pe.Message, "{") && c.status != 502 {
				t.Errorf("%d %s: message %q, want the body's message", c.status, c.errType, pe.Message)
			}
		}
	}
}

// TestBedrockRequestMapping: what the adapter sends for what a Request asks.
func TestBedrockRequestMapping(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		json.NewDecoder(r.Body).Decode(&body)
		io.WriteString(w, converseHello)
	}))
	defer srv.Close()
	p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
	send := func(req *providers.Request) string {
		t.Helper()
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatalf("%v", err)
		}
		return canonicalValue(body)
	}
	temp, topP, topK := 1.7, 0.5, 40
	// An id with characters Converse refuses goes as a hash of itself, the same for the call
	// and its result (as to Anthropic).
	sum := sha256.Sum256([]byte("functions.now:0"))
	safeID := "toolu_" + hex.EncodeToString(sum[:12])
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	for _, c := range []struct {
		name string
		req  *providers.Request
		want string
	}{
		{"sampling: temperature at most 1, stop sequences, max tokens",
			&providers.Request{Model: "meta.llama3-1-70b-instruct-v1:0", Temperature: &temp, TopP: &topP, TopK: &topK, MaxTokens: 100, Stop: []string{"END", "\n"},
				Messages: []providers.Message{{Role: "system", Content: "A"}, {Role: "developer", Content: "B"}, {Role: "user", Content: "q"}}},
			`{"inferenceConfig":{"maxTokens":100,"stopSequences":["END","\n"],"temperature":1,"topP":0.5},"messages":[{"content":[{"text":"q"}],"role":"user"}],"system":[{"text":"A\n\nB"}]}`},
		{"Claude: top_k, whitespace stops dropped, temperature or top_p on 4.1+",
			&providers.Request{Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Temperature: &topP, TopP: &topP, TopK: &topK, Stop: []string{"END", "\n"},
				Messages: []providers.Message{{Role: "user", Content: "q"}}},
			`{"additionalModelRequestFields":{"top_k":40},"inferenceConfig":{"stopSequences":["END"],"temperature":0.5},"messages":[{"content":[{"text":"q"}],"role":"user"}]}`},
		{"Claude thinking from an effort: budget below maxTokens, no temperature",
			&providers.Request{Model: "anthropic.claude-3-7-sonnet-20250219-v1:0", Temperature: &topP, Thinking: &providers.Thinking{Effort: "low"},
				Messages: []providers.Message{{Role: "user", Content: "q"}}},
			`{"additionalModelRequestFields":{"thinking":{"budget_tokens":1024,"type":"enabled"}},"inferenceConfig":{"maxTokens":5120},"messages":[{"content":[{"text":"q"}],"role":"user"}]}`},
		{"thinking is ignored by models without it",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Thinking: &providers.Thinking{Effort: "high"}, Messages: []providers.Message{{Role: "user", Content: "q"}}},
			`{"messages":[{"content":[{"text":"q"}],"role":"user"}]}`},
		{"images and documents from data URLs; consecutive user turns merged",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: []providers.Message{
				{Role: "user", Content: "Look", Parts: []providers.Part{{Text: "Look"}, {Image: &providers.Image{URL: "data:image/jpeg;base64," + png}},
					{File: &providers.File{URL: "data:application/pdf;base64,JVBERi0xLjQK", Filename: "Q3 report (final).pdf"}},
					{File: &providers.File{URL: "data:application/pdf;base64,JVBERi0xLjQK", Filename: "Q3 report (final).pdf"}}, {Text: "  "}}},
				{Role: "user", Content: "and?"}}},
			`{"messages":[{"content":[{"text":"Look"},{"image":{"format":"png","source":{"bytes":"` + png + `"}}},` +
				`{"document":{"format":"pdf","name":"Q3 report (final)","source":{"bytes":"JVBERi0xLjQK"}}},` +
				`{"document":{"format":"pdf","name":"Q3 report (final) (2)","source":{"bytes":"JVBERi0xLjQK"}}},{"text":"and?"}],"role":"user"}]}`},
		{"tool choice function; history calls and results, ids made safe",
			&providers.Request{Model: "mistral.mistral-large-2407-v1:0", Tools: []providers.Tool{weatherTool, {Name: "now"}},
				ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "get_weather"},
				Messages: []providers.Message{{Role: "user", Content: "q"},
					{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "functions.now:0", Name: "now", Arguments: ""}}},
					{Role: "tool", ToolCallID: "functions.now:0", Content: ""}, {Role: "user", Content: "more"}}},
			`{"messages":[{"content":[{"text":"q"}],"role":"user"},{"content":[{"toolUse":{"input":{},"name":"now","toolUseId":"` + safeID + `"}}],"role":"assistant"},` +
				`{"content":[{"toolResult":{"content":[{"text":"(empty)"}],"toolUseId":"` + safeID + `"}},{"text":"more"}],"role":"user"}],` +
				`"toolConfig":{"toolChoice":{"tool":{"name":"get_weather"}},"tools":[{"toolSpec":{"description":"Get the current weather in a given location","inputSchema":{"json":` +
				canonicalValue(mustJSON(weatherSchema)) + `},"name":"get_weather"}},{"toolSpec":{"inputSchema":{"json":{"type":"object"}},"name":"now"}}]}}`},
		{"tool choice none: tools left out without tool history",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Tools: []providers.Tool{{Name: "now"}}, ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceNone},
				Messages: []providers.Message{{Role: "user", Content: "q"}}},
			`{"messages":[{"content":[{"text":"q"}],"role":"user"}]}`},
		{"no tools, tool history: its functions declared",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: []providers.Message{{Role: "user", Content: "q"},
				{Role: "assistant", Content: "  ", ToolCalls: []providers.ToolCall{{ID: "t1", Name: "now", Arguments: "{}"}}}, {Role: "tool", ToolCallID: "t1", Content: "noon"},
				{Role: "assistant", Content: ""}, {Role: "user", Content: "thanks"}}},
			`{"messages":[{"content":[{"text":"q"}],"role":"user"},{"content":[{"toolUse":{"input":{},"name":"now","toolUseId":"t1"}}],"role":"assistant"},` +
				`{"content":[{"toolResult":{"content":[{"text":"noon"}],"toolUseId":"t1"}},{"text":"thanks"}],"role":"user"}],` +
				`"toolConfig":{"tools":[{"toolSpec":{"inputSchema":{"json":{"type":"object"}},"name":"now"}}]}}`},
		// Nova takes cache points in system and messages but not in toolConfig.tools (AWS's
		// prompt-caching table lists "system, messages" for Nova; review 14b): none after
		// the tools, unlike Claude.
		{"prompt cache on Nova: after the system prompt and the conversation, not the tools",
			&providers.Request{Model: "us.amazon.nova-lite-v1:0", PromptCache: true, Tools: []providers.Tool{{Name: "now"}},
				Messages: []providers.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "q"}}},
			`{"messages":[{"content":[{"text":"q"},{"cachePoint":{"type":"default"}}],"role":"user"}],"system":[{"text":"S"},{"cachePoint":{"type":"default"}}],` +
				`"toolConfig":{"tools":[{"toolSpec":{"inputSchema":{"json":{"type":"object"}},"name":"now"}}]}}`},
		{"prompt cache ignored by models without cache points",
			&providers.Request{Model: "meta.llama3-1-70b-instruct-v1:0", PromptCache: true, Messages: []providers.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "q"}}},
			`{"messages":[{"content":[{"text":"q"}],"role":"user"}],"system":[{"text":"S"}]}`},
	} {
		if got := send(c.req); got != canonicalValue(mustJSON(json.RawMessage(c.want))) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, canonicalValue(mustJSON(json.RawMessage(c.want))))
		}
	}
}

func mustJSON(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		panic(err)
	}
	return v
}

// TestBedrockRefusesBeforeSending: what Converse cannot be sent fails before the call, and
// Check names it: images and documents by URL, a JSON schema that is no object, search, prefill; a
// provider without credentials or a region fails naming what to set.
func TestBedrockRefusesBeforeSending(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	defer srv.Close()
	p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
	user := func(parts ...providers.Part) []providers.Message {
		return []providers.Message{{Role: "user", Content: "x", Parts: parts}}
	}
	for _, c := range []struct {
		req   *providers.Request
		field string
	}{
		{&providers.Request{Model: "m", Messages: user(providers.Part{Text: "x"}, providers.Part{Image: &providers.Image{URL: "https://example.com/a.png"}})}, "messages[0].content[1].image_url"},
		{&providers.Request{Model: "m", Messages: user(providers.Part{Image: &providers.Image{URL: "data:image/bmp;base64,Qk0="}})}, "messages[0].content[0].image_url"},
		{&providers.Request{Model: "m", Messages: user(providers.Part{File: &providers.File{URL: "https://example.com/a.pdf"}})}, "messages[0].content[0].file.file_data"},
		{&providers.Request{Model: "m", Messages: user(providers.Part{Text: "x"}), ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Schema: json.RawMessage(`{"type":"string"}`)}}, "response_format.json_schema.schema"},
	} {
		var ue *providers.UnsupportedError
		if err := providers.Check(p, c.req.Model, c.req); !errors.As(err, &ue) || ue.Field != c.field {
			t.Errorf("Check = %v, want an UnsupportedError naming %s", err, c.field)
		}
		if _, err := p.Complete(context.Background(), c.req); providers.KindOf(err) != providers.KindBadRequest {
			t.Errorf("Complete = %v, want bad request", err)
		}
	}
	search := hello("m")
	search.Search = true
	prefill := hello("m")
	prefill.AssistantPrefix = "Sure"
	for _, r := range []*providers.Request{search, prefill} {
		if _, err := p.Complete(context.Background(), r); providers.KindOf(err) != providers.KindBadRequest {
			t.Errorf("search/prefill: %v, want bad request", err)
		}
	}
	// No region and no base URL: the SigV4 provider names the region variables.
	cfg := sigV4TestAWS
	cfg.Region = ""
	np := providers.NewBedrock(providers.Config{AWS: cfg})
	_, err := np.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if !errors.Is(err, providers.ErrNotConfigured) || !strings.Contains(err.Error(), "AWS_REGION") || np.Configured() {
		t.Errorf("no region: %v (configured %v)", err, np.Configured())
	}
	// No credentials: names the key and the SigV4 variables.
	_, err = providers.NewBedrock(providers.Config{AWS: providers.AWSConfig{Region: "us-east-1"}}).Complete(context.Background(), hello("m"))
	if !errors.Is(err, providers.ErrNotConfigured) || !strings.Contains(err.Error(), "AWS_BEARER_TOKEN_BEDROCK") || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("no credentials: %v", err)
	}
	if calls != 0 {
		t.Errorf("%d requests reached upstream", calls)
	}
}

// TestBedrockResponses: a non-streamed answer's reasoning (signed, redacted), a blocked
// answer's usage, a body without a stop reason.
func TestBedrockResponses(t *testing.T) {
	for _, c := range []struct {
		body string
		kind providers.ErrorKind
	}{
		{`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"hmm","signature":"s1"}}},` +
			`{"reasoningContent":{"redactedContent":"cmVk"}},{"text":"Hi"}]}},"stopReason":"stop_sequence","usage":{"inputTokens":3,"outputTokens":1}}`, 0},
		{`{"output":{"message":{"role":"assistant","content":[{"text":"Sorry, the model cannot answer this question."}]}},"stopReason":"content_filtered","usage":{"inputTokens":11,"outputTokens":5}}`, providers.KindContentFilter},
		{`{"output":{"message":{"role":"assistant","content":[]}}}`, providers.KindStreamBroken},
	} {
		srv, _ := captureOnce(t, 200, c.body)
		resp, err := newProvider(t, providers.FormatBedrock, srv.URL, nil).Complete(context.Background(), hello("m"))
		if c.kind != 0 {
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != c.kind {
				t.Errorf("%s: err = %v, want %s", c.body, err, c.kind)
			} else if c.kind == providers.KindContentFilter && (pe.Usage == nil || *pe.Usage != providers.Usage{PromptTokens: 11, CompletionTokens: 5}) {
				t.Errorf("blocked answer's usage = %+v", pe.Usage)
			}
			continue
		}
		want := []providers.ReasoningBlock{{Text: "hmm", Signature: "s1"}, {Redacted: "cmVk"}}
		if err != nil || resp.Text != "Hi" || resp.FinishReason != "stop" || len(resp.Reasoning) != 2 || resp.Reasoning[0] != want[0] || resp.Reasoning[1] != want[1] {
			t.Errorf("response = %+v, %v", resp, err)
		}
	}
}

// TestBedrockConfig: the preset reads the AWS variables; a config file sets a region and
// the credential variables of a bedrock provider, with errors naming the field.
func TestBedrockConfig(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	env := envOf(map[string]string{
		"AWS_ACCESS_KEY_ID": suiteAccessKey, "AWS_SECRET_ACCESS_KEY": suiteSecretKey, "AWS_DEFAULT_REGION": "eu-central-1",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": srv.URL, "EU_KEY_ID": "AKIDEU", "EU_SECRET": "eu-secret",
	})
	reg := providers.FromEnv(env, providers.Options{})
	p, model, err := reg.Resolve("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")
	if err != nil || !providers.IsConfigured(p) {
		t.Fatalf("bedrock preset: %v, configured %v", err, err == nil && providers.IsConfigured(p))
	}
	if _, err := p.Complete(context.Background(), hello(model)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.header.Get("Authorization"), "Credential=AKIDEXAMPLE/") || !strings.Contains(got.header.Get("Authorization"), "/eu-central-1/bedrock/aws4_request") {
		t.Errorf("Authorization = %q, want the env credentials for eu-central-1", got.header.Get("Authorization"))
	}
	if p, _ := providers.FromEnv(envOf(nil), providers.Options{}).Lookup("bedrock"); providers.IsConfigured(p) {
		t.Error("bedrock preset without credentials reports configured")
	}

	fc, err := providers.ParseConfig([]byte(`{"providers":[
		{"name":"bedrock","region":"us-west-2"},
		{"name":"bedrock-eu","format":"bedrock","region":"eu-west-1","base_url":"` + srv.URL + `","aws_access_key_id_env":"EU_KEY_ID","aws_secret_access_key_env":"EU_SECRET"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	eu, _ := reg.Lookup("bedrock-eu")
	if _, err := eu.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDEU/") || !strings.Contains(a, "/eu-west-1/bedrock/") {
		t.Errorf("bedrock-eu Authorization = %q", a)
	}
	us, _ := reg.Lookup("bedrock")
	if _, err := us.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil || !strings.Contains(got.header.Get("Authorization"), "/us-west-2/bedrock/") {
		t.Errorf("bedrock with a region from the file: %v, %q", err, got.header.Get("Authorization"))
	}

	for _, b := range []struct{ doc, field string }{
		{`{"providers":[{"name":"bedrock","region":"mars-1"}]}`, "providers[0].region"},
		{`{"providers":[{"name":"openai","region":"us-east-1"}]}`, "providers[0].region"},
		{`{"providers":[{"name":"x","format":"anthropic","base_url":"http://h","aws_access_key_id_env":"K"}]}`, "providers[0].aws_access_key_id_env"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_access_key_id_env":"K"}]}`, "providers[0].aws_secret_access_key_env"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_secret_access_key_env":"S"}]}`, "providers[0].aws_access_key_id_env"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_session_token_env":"T"}]}`, "providers[0].aws_session_token_env"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_access_key_id_env":"MY KEY","aws_secret_access_key_env":"S"}]}`, "providers[0].aws_access_key_id_env"},
		{`{"providers":[{"name":"bedrock","format":"openai"}]}`, "providers[0].format"},
	} {
		_, err := providers.ParseConfig([]byte(b.doc))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != b.field {
			t.Errorf("ParseConfig(%s) = %v, want a ConfigError on %s", b.doc, err, b.field)
		}
	}
	if _, err := providers.ParseConfig([]byte(`{"providers":[{"name":"b","format":"bedrock"}]}`)); err != nil {
		t.Errorf("a bedrock provider needs no base_url: %v", err)
	}
}

// TestBedrockPrices: bedrock/<modelId> is priced from the catalogue's Bedrock entries
// (model ids, inference profiles, region entries, a system profile's ARN), never from
// another provider's; an unknown model has no price.
func TestBedrockPrices(t *testing.T) {
	c := providers.DefaultCatalog()
	u := providers.Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}
	for _, m := range []struct {
		model, key string
	}{
		{"bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
		{"bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0"},
		{"bedrock/meta.llama3-1-70b-instruct-v1:0", "meta.llama3-1-70b-instruct-v1:0"},
		{"bedrock/amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"},
		{"bedrock/converse/amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"},
		{"bedrock/eu.amazon.nova-pro-v1:0", "eu.amazon.nova-pro-v1:0"},
		{"bedrock/us-gov-west-1/amazon.nova-pro-v1:0", "bedrock/us-gov-west-1/amazon.nova-pro-v1:0"},
		{"bedrock/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0"},
	} {
		p, ok := c.Lookup(m.model)
		if !ok || p.Key != m.key || !strings.HasPrefix(p.Provider, "bedrock") || !c.Cost(m.model, u).Known {
			t.Errorf("%s: %v %q (%s), want %q", m.model, ok, p.Key, p.Provider, m.key)
		}
	}
	if a, b := c.Cost("bedrock/eu.amazon.nova-pro-v1:0", u), c.Cost("bedrock/amazon.nova-pro-v1:0", u); a.TotalUSD <= b.TotalUSD {
		t.Errorf("the EU profile costs %v, the base model %v: want the catalogue's own rates", a.TotalUSD, b.TotalUSD)
	}
	for _, m := range []string{"bedrock/arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/mi1dadi0g15f", "bedrock/acme.unknown-model-v1:0"} {
		if cost := c.Cost(m, u); cost.Known || cost.TotalUSD != 0 {
			t.Errorf("%s: cost %+v, want unknown", m, cost)
		}
	}
	models := c.ChatModels("bedrock")
	if len(models) < 50 || !strings.HasPrefix(models[0], "bedrock/") {
		t.Errorf("ChatModels(bedrock) = %d models, first %v", len(models), models[:min(len(models), 1)])
	}
}
