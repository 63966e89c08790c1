package telemetry

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// observedSpans are the spans ObserveRequest makes of r.
func observedSpans(t *testing.T, opts TracingOptions, r completions.RequestRecord) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	NewTracing(exp, "test", true, opts).ObserveRequest(context.Background(), r)
	return exp.GetSpans()
}

func chatSpanStub(t *testing.T, spans tracetest.SpanStubs) tracetest.SpanStub {
	t.Helper()
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name, "chat ") {
			return sp
		}
	}
	t.Fatalf("no chat span in %v", spans)
	return tracetest.SpanStub{}
}

// outputOf decodes gen_ai.output.messages of a span's attributes.
type outputMessage struct {
	Role         string           `json:"role"`
	FinishReason string           `json:"finish_reason"`
	Parts        []map[string]any `json:"parts"`
}

func outputOf(t *testing.T, sp tracetest.SpanStub) []outputMessage {
	t.Helper()
	v, ok := attrOf(sp.Attributes, "gen_ai.output.messages")
	if !ok {
		t.Fatalf("no gen_ai.output.messages on %s", sp.Name)
	}
	var out []outputMessage
	if err := json.Unmarshal([]byte(v.AsString()), &out); err != nil {
		t.Fatalf("gen_ai.output.messages is not JSON: %v: %s", err, v.AsString())
	}
	return out
}

// brokenStream is chatRecord's request streamed, broken (or left by its caller when
// cancelled) after the text partial was delivered.
func brokenStream(partial string, cancelled bool) completions.RequestRecord {
	r := chatRecord()
	r.Stream, r.Answer, r.ResponseID = true, nil, ""
	r.Outcome, r.Err = completions.RequestStreamFailed, &completions.StreamError{Model: "up/m1", Kind: "stream_broken"}
	if cancelled {
		r.Outcome, r.Err = completions.RequestCancelled, context.Canceled
	}
	r.Partial = &completions.Response{Provider: "up", Model: "m1",
		Message: completions.AssistantMessage{Role: "assistant", Content: []completions.ContentBlock{{Type: "text", Text: partial}}}}
	return r
}

// TestPartialStreamIsTheOutput: a stream that broke or was left after it started keeps
// what it delivered as the span's output, marked by its finish reason ("error",
// "cancelled") and an error status, within the bound; without content capture only the
// finish reason says so.
func TestPartialStreamIsTheOutput(t *testing.T) {
	for _, tc := range []struct {
		cancelled bool
		reason    string
	}{{false, "error"}, {true, "cancelled"}} {
		sp := chatSpanStub(t, observedSpans(t, TracingOptions{CaptureContent: true}, brokenStream("It is a c", tc.cancelled)))
		if v, _ := attrOf(sp.Attributes, "gen_ai.response.finish_reasons"); v.Emit() != `["`+tc.reason+`"]` {
			t.Errorf("cancelled %v: finish_reasons %s, want [%s]", tc.cancelled, v.Emit(), tc.reason)
		}
		if v, _ := attrOf(sp.Attributes, "gen_ai.response.model"); v.Emit() != "m1" {
			t.Errorf("cancelled %v: response model %q", tc.cancelled, v.Emit())
		}
		out := outputOf(t, sp)
		if len(out) != 1 || out[0].Role != "assistant" || out[0].FinishReason != tc.reason || len(out[0].Parts) != 1 ||
			out[0].Parts[0]["content"] != "It is a c" {
			t.Errorf("cancelled %v: output %+v", tc.cancelled, out)
		}
		if sp.Status.Code != codes.Error {
			t.Errorf("cancelled %v: status %+v, want an error", tc.cancelled, sp.Status)
		}
	}
	// Bounded like any answer.
	const limit = 1024
	sp := chatSpanStub(t, observedSpans(t, TracingOptions{CaptureContent: true, MaxContentBytes: limit}, brokenStream(strings.Repeat("long ", 5000), false)))
	v, _ := attrOf(sp.Attributes, "gen_ai.output.messages")
	if s := v.AsString(); len(s) > limit || !json.Valid([]byte(s)) || !strings.Contains(s, "…[truncated ") || !strings.Contains(s, `"finish_reason":"error"`) {
		t.Errorf("a long partial answer: %d bytes (limit %d): %.300s", len(s), limit, s)
	}
	// Content capture off: no content, the finish reason still says the answer was cut.
	sp = chatSpanStub(t, observedSpans(t, TracingOptions{}, brokenStream("It is a c", false)))
	if v, _ := attrOf(sp.Attributes, "gen_ai.response.finish_reasons"); v.Emit() != `["error"]` {
		t.Errorf("capture off: finish_reasons %s", v.Emit())
	}
	if v, ok := attrOf(sp.Attributes, "gen_ai.output.messages"); ok {
		t.Errorf("capture off, but the output is on the span: %s", v.Emit())
	}
	// A request that failed before anything was delivered has no output and no finish reason.
	r := brokenStream("", false)
	r.Partial = nil
	sp = chatSpanStub(t, observedSpans(t, TracingOptions{CaptureContent: true}, r))
	for _, key := range []string{"gen_ai.output.messages", "gen_ai.response.finish_reasons"} {
		if v, ok := attrOf(sp.Attributes, key); ok {
			t.Errorf("nothing delivered, but %s = %s", key, v.Emit())
		}
	}
}

// TestFinishReasonIsAlwaysThere: gen_ai.response.finish_reasons (a string array) and the
// output message's finish_reason (required by the conventions) are on every answered
// request, streamed or not, also when the upstream gave no reason: "stop", or "tool_calls"
// for an answer of tool calls, as the OpenAI surface reports it.
func TestFinishReasonIsAlwaysThere(t *testing.T) {
	for _, tc := range []struct {
		upstream string
		calls    bool
		want     string
	}{{"", false, "stop"}, {"", true, "tool_calls"}, {"length", false, "length"}, {"tool_calls", true, "tool_calls"}} {
		for _, stream := range []bool{false, true} {
			r := chatRecord()
			r.Stream = stream
			r.Answer.FinishReason = tc.upstream
			if !tc.calls {
				r.Answer.ToolCalls = nil
			}
			sp := chatSpanStub(t, observedSpans(t, TracingOptions{CaptureContent: true}, r))
			if v, ok := attrOf(sp.Attributes, "gen_ai.response.finish_reasons"); !ok || v.Type().String() != "STRINGSLICE" || v.Emit() != `["`+tc.want+`"]` {
				t.Errorf("upstream %q calls %v stream %v: finish_reasons %s (%s), want [%s]", tc.upstream, tc.calls, stream, v.Emit(), v.Type(), tc.want)
			}
			if out := outputOf(t, sp); len(out) != 1 || out[0].FinishReason != tc.want {
				t.Errorf("upstream %q calls %v stream %v: output %+v, want finish_reason %s", tc.upstream, tc.calls, stream, out, tc.want)
			}
		}
	}
}

// TestAttemptSpansSayWhatWasAsked: each attempt's span (a retry, a fallback) carries the
// gen_ai.request.* parameters, and its own provider and model: a fallback's span says
// which model was really asked, and the max_tokens it was sent (Attempt.MaxTokens: here
// lowered to its output limit), not the request's; an attempt sent none has none.
func TestAttemptSpansSayWhatWasAsked(t *testing.T) {
	r := chatRecord()
	seed := int64(7)
	r.Prompt.Seed, r.Prompt.Stop = &seed, []string{"END"}
	start := r.Start
	r.Attempts = []completions.Attempt{
		{Model: "first/big", Outcome: completions.OutcomeError, Kind: "rate_limited", LatencyMS: 10, Started: start, MaxTokens: 200},
		{Model: "first/big", Outcome: completions.OutcomeError, Kind: "rate_limited", LatencyMS: 10, Started: start.Add(20 * time.Millisecond), MaxTokens: 200},
		{Model: "up/m1", Outcome: completions.OutcomeOK, LatencyMS: 100, Started: start.Add(40 * time.Millisecond), MaxTokens: 120},
		{Model: "up/m2", Outcome: completions.OutcomeError, Kind: "timeout", LatencyMS: 100, Started: start.Add(40 * time.Millisecond)},
	}
	var attempts []tracetest.SpanStub
	for _, sp := range observedSpans(t, TracingOptions{}, r) {
		if strings.HasPrefix(sp.Name, "attempt ") {
			attempts = append(attempts, sp)
		}
	}
	if len(attempts) != 4 {
		t.Fatalf("%d attempt spans, want 4", len(attempts))
	}
	for i, want := range []struct{ provider, model, maxTokens string }{{"first", "big", "200"}, {"first", "big", "200"}, {"up", "m1", "120"}, {"up", "m2", ""}} {
		attrs := attempts[i].Attributes
		for key, v := range map[string]string{
			"gen_ai.provider.name":          want.provider,
			"gen_ai.request.model":          want.model,
			"gen_ai.request.temperature":    "0.3",
			"gen_ai.request.top_p":          "0.9",
			"gen_ai.request.max_tokens":     want.maxTokens,
			"gen_ai.request.seed":           "7",
			"gen_ai.request.stop_sequences": `["END"]`,
			"gen_ai.operation.name":         "chat",
		} {
			got, ok := attrOf(attrs, key)
			if v == "" {
				if ok {
					t.Errorf("attempt %d: %s = %q; want none (none was sent)", i+1, key, got.Emit())
				}
				continue
			}
			if !ok || got.Emit() != v {
				t.Errorf("attempt %d: %s = %q (present %v), want %q", i+1, key, got.Emit(), ok, v)
			}
		}
	}
	if v, ok := attrOf(chatSpanStub(t, observedSpans(t, TracingOptions{}, r)).Attributes, "gen_ai.request.max_tokens"); !ok || v.Emit() != "200" {
		t.Errorf("the chat span's max_tokens = %q (present %v), want the request's 200", v.Emit(), ok)
	}
}

// TestInputBudgetIsSpentNewestFirst: a conversation over the bound keeps its newest turn
// (the one the model answered) whole and cuts the earliest turns' texts first, in valid
// JSON saying what was cut; the system prompt, in its own attribute, takes nothing from it.
func TestInputBudgetIsSpentNewestFirst(t *testing.T) {
	const limit = 2048
	r := chatRecord()
	r.Prompt.Messages = []providers.Message{
		{Role: "system", Content: strings.Repeat("rules ", 1000)},
		{Role: "user", Content: "old question " + strings.Repeat("o", 3000)},
		{Role: "assistant", Content: "old answer " + strings.Repeat("a", 3000)},
		{Role: "user", Content: "middle " + strings.Repeat("m", 600)},
		{Role: "user", Content: "What is the capital of France?"},
	}
	attrs := chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: limit}, r)
	v, _ := attrOf(attrs, "gen_ai.input.messages")
	s := v.AsString()
	var in []struct {
		Role  string `json:"role"`
		Parts []struct {
			Content string `json:"content"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(s), &in); err != nil || len(s) > limit {
		t.Fatalf("input messages: %d bytes (limit %d), %v: %s", len(s), limit, err, s)
	}
	if len(in) != 4 {
		t.Fatalf("%d input messages, want 4: %s", len(in), s)
	}
	text := func(i int) string { return in[i].Parts[0].Content }
	if text(3) != "What is the capital of France?" || text(2) != "middle "+strings.Repeat("m", 600) {
		t.Errorf("the newest turns were cut: %q, %q", text(3), text(2))
	}
	if !strings.Contains(text(0), "…[truncated ") || strings.Contains(text(0), strings.Repeat("o", 1000)) {
		t.Errorf("the oldest turn was not the one cut: %.200s", text(0))
	}
	if v, _ := attrOf(attrs, "gen_ai.system_instructions"); !strings.Contains(v.AsString(), "rules") {
		t.Errorf("system instructions %.100s", v.AsString())
	}
	// So many turns that their structure alone is over the bound: the earliest are left
	// out, and the newest keeps its text rather than giving it up for theirs.
	for i := range 3000 {
		r.Prompt.Messages = slices.Insert(r.Prompt.Messages, 1, providers.Message{Role: "user", Content: "turn " + strconv.Itoa(i) + " " + strings.Repeat("t", 100)})
	}
	v, _ = attrOf(chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: limit}, r), "gen_ai.input.messages")
	s = v.AsString()
	in = nil
	if err := json.Unmarshal([]byte(s), &in); err != nil || len(s) > limit || len(in) < 2 {
		t.Fatalf("3000 turns: %d bytes (limit %d), %v: %.300s", len(s), limit, err, s)
	}
	if got := text(len(in) - 1); got != "What is the capital of France?" {
		t.Errorf("3000 turns: the newest turn is %q", got)
	}
	if !strings.Contains(text(0), " earlier messages omitted: ") {
		t.Errorf("3000 turns: the first element %q does not say what was left out", text(0))
	}
}
