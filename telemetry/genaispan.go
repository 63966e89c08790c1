package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// setChatAttributes puts on a chat request's span what the GenAI semantic conventions
// define beyond model and usage: the sampling parameters sent upstream, the answer's id,
// model and finish reason, the conversation, who asked (user.id, the virtual key and its
// team; never a key's secret) and, with TracingOptions.CaptureContent, the prompt and the
// answer (or, of a stream that ended early, what it delivered). Without content capture
// its cost does not depend on the size of either.
func (t *Tracing) setChatAttributes(span trace.Span, r *completions.RequestRecord) {
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = appendRequestAttributes(attrs, r.Prompt)
	a, reason := answerOf(r)
	if a != nil {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{reason}))
	}
	// The model that answered, as the answer names it, else as the record does; without its
	// provider prefix either way (gen_ai.provider.name says that).
	switch _, called, _ := cutModel(r.Model); {
	case a != nil && a.Model != "":
		attrs = append(attrs, attribute.String("gen_ai.response.model", a.Model))
	case called != "":
		attrs = append(attrs, attribute.String("gen_ai.response.model", called))
	}
	if r.ResponseID != "" {
		attrs = append(attrs, attribute.String("gen_ai.response.id", r.ResponseID))
	}
	if r.ConversationID != "" {
		attrs = append(attrs, attribute.String("gen_ai.conversation.id", r.ConversationID),
			attribute.String("session.id", r.ConversationID))
	}
	if u := firstNonEmpty(r.EndUser, r.UserID); u != "" {
		attrs = append(attrs, attribute.String("user.id", u))
	}
	if r.UserID != "" {
		attrs = append(attrs, attribute.String("switchyard.user_id", r.UserID))
	}
	if r.KeyID != "" {
		attrs = append(attrs, attribute.String("switchyard.key_id", r.KeyID))
	}
	if r.TeamID != "" {
		attrs = append(attrs, attribute.String("switchyard.team_id", r.TeamID))
	}
	if len(r.Tags) > 0 {
		attrs = append(attrs, attribute.StringSlice("langfuse.trace.tags", r.Tags))
	}
	if t.opts.CaptureContent {
		attrs = t.appendContent(attrs, r)
	}
	if len(attrs) > 0 {
		span.SetAttributes(attrs...)
	}
	if t.opts.CaptureContent && t.opts.LegacyContent {
		t.addLegacyContent(span, r)
	}
}

// appendRequestAttributes adds the gen_ai.request.* sampling parameters of p (nil: none),
// as sent upstream: on the chat span and on each attempt's span.
func appendRequestAttributes(attrs []attribute.KeyValue, p *providers.Request) []attribute.KeyValue {
	if p == nil {
		return attrs
	}
	if p.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *p.Temperature))
	}
	if p.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", p.MaxTokens))
	}
	if p.TopP != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.top_p", *p.TopP))
	}
	if p.TopK != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.top_k", float64(*p.TopK)))
	}
	if len(p.Stop) > 0 {
		attrs = append(attrs, attribute.StringSlice("gen_ai.request.stop_sequences", p.Stop))
	}
	if p.Seed != nil {
		attrs = append(attrs, attribute.Int64("gen_ai.request.seed", *p.Seed))
	}
	if p.FrequencyPenalty != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.frequency_penalty", *p.FrequencyPenalty))
	}
	if p.PresencePenalty != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.presence_penalty", *p.PresencePenalty))
	}
	return attrs
}

// Finish reasons of an answer that did not come to its end: a stream that broke after it
// started, or that its caller left. Its output is what was delivered.
const (
	finishError     = "error"
	finishCancelled = "cancelled"
)

// answerOf is the answer r records and why it ended (gen_ai.response.finish_reasons and
// the output message's finish_reason, which the conventions require): the delivered
// answer, with the upstream's reason ("stop" when it gave none, "tool_calls" for an
// answer of tool calls, as the OpenAI surface reports it); or what a stream delivered
// before it failed ("error") or was left by its caller ("cancelled"). nil when r has no
// answer (a failure before any was delivered): no generation, no finish reason.
func answerOf(r *completions.RequestRecord) (*completions.Response, string) {
	if a := r.Answer; a != nil {
		switch {
		case a.FinishReason != "":
			return a, a.FinishReason
		case len(a.ToolCalls) > 0:
			return a, "tool_calls"
		}
		return a, "stop"
	}
	if a := r.Partial; a != nil {
		if r.Outcome == completions.RequestCancelled {
			return a, finishCancelled
		}
		return a, finishError
	}
	return nil, ""
}

// appendContent adds the prompt and the answer, each attribute at most MaxContentBytes.
func (t *Tracing) appendContent(attrs []attribute.KeyValue, r *completions.RequestRecord) []attribute.KeyValue {
	limit := t.opts.MaxContentBytes
	if p := r.Prompt; p != nil {
		if s := systemInstructions(p, limit); s != "" {
			attrs = append(attrs, attribute.String("gen_ai.system_instructions", s))
		}
		attrs = append(attrs, attribute.String("gen_ai.input.messages", inputMessages(p, limit)))
		if s := toolDefinitions(p, limit); s != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.definitions", s))
		}
	}
	if a, reason := answerOf(r); a != nil {
		attrs = append(attrs, attribute.String("gen_ai.output.messages", outputMessages(a, reason, limit)))
	}
	return attrs
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
