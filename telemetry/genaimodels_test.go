package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// groupRecord is a request for the model group "smart" that fell back from Bedrock to
// Gemini, which answered.
func groupRecord() completions.RequestRecord {
	start := time.Unix(1700000000, 0)
	return completions.RequestRecord{Outcome: completions.RequestOK, Provider: "gemini", Model: "gemini/gemini-2.5-flash",
		ModelGroup: "smart", Requested: "bedrock/anthropic.claude-sonnet-4", Start: start, Latency: time.Second,
		Answer: &completions.Response{Provider: "gemini", Model: "gemini-2.5-flash", FinishReason: "stop"},
		Attempts: []completions.Attempt{
			{Model: "bedrock/anthropic.claude-sonnet-4", Outcome: completions.OutcomeError, Kind: "overloaded", LatencyMS: 10, Started: start},
			{Model: "gemini/gemini-2.5-flash", Outcome: completions.OutcomeOK, LatencyMS: 100, Started: start.Add(20 * time.Millisecond)},
		}}
}

// TestSpansSayWhatWasAskedAndWhatAnswered: the request's span names the model group the
// caller asked for (gen_ai.request.model, and the span's name) and the model that
// answered (gen_ai.response.model); each attempt's span the model it asked; and
// gen_ai.provider.name is the GenAI conventions' well-known value (gcp.gemini,
// aws.bedrock), Switchyard's own name being switchyard.provider.
func TestSpansSayWhatWasAskedAndWhatAnswered(t *testing.T) {
	spans := observedSpans(t, TracingOptions{}, groupRecord())
	byName := map[string]tracetest.SpanStub{}
	for _, sp := range spans {
		byName[sp.Name] = sp
	}
	chat, down, ok := byName["chat smart"], byName["attempt bedrock/anthropic.claude-sonnet-4"], byName["attempt gemini/gemini-2.5-flash"]
	if chat.Name == "" || down.Name == "" || ok.Name == "" {
		t.Fatalf("spans %v", spanNames(spans))
	}
	for _, c := range []struct {
		span      tracetest.SpanStub
		key, want string
	}{
		{chat, "gen_ai.request.model", "smart"},
		{chat, "gen_ai.response.model", "gemini-2.5-flash"},
		{chat, "gen_ai.provider.name", "gcp.gemini"},
		{chat, "switchyard.provider", "gemini"},
		{down, "gen_ai.request.model", "anthropic.claude-sonnet-4"},
		{down, "gen_ai.provider.name", "aws.bedrock"},
		{down, "switchyard.provider", "bedrock"},
		{ok, "gen_ai.request.model", "gemini-2.5-flash"},
		{ok, "gen_ai.provider.name", "gcp.gemini"},
	} {
		if v, found := attrOf(c.span.Attributes, c.key); !found || v.Emit() != c.want {
			t.Errorf("%s: %s = %q (present %v), want %q", c.span.Name, c.key, v.Emit(), found, c.want)
		}
	}

	// A request naming one model: that model is what was asked; an answer without the
	// upstream's name for its model says the model the gateway called.
	r := groupRecord()
	r.ModelGroup, r.Answer = "bedrock/anthropic.claude-sonnet-4", nil
	r.Operation = completions.OperationEmbeddings
	attrs := spanNamed(t, observedSpans(t, TracingOptions{}, r), "embeddings bedrock/anthropic.claude-sonnet-4").Attributes
	if v, _ := attrOf(attrs, "gen_ai.request.model"); v.Emit() != "bedrock/anthropic.claude-sonnet-4" {
		t.Errorf("one model asked: gen_ai.request.model %q", v.Emit())
	}
	if v, _ := attrOf(attrs, "gen_ai.response.model"); v.Emit() != "gemini-2.5-flash" {
		t.Errorf("no answer's model: gen_ai.response.model %q, want the model called", v.Emit())
	}
	// Nothing answered: no response model.
	r.Outcome, r.Provider, r.Model = completions.RequestFailed, "", ""
	attrs = spanNamed(t, observedSpans(t, TracingOptions{}, r), "embeddings bedrock/anthropic.claude-sonnet-4").Attributes
	if v, found := attrOf(attrs, "gen_ai.response.model"); found {
		t.Errorf("failed request: gen_ai.response.model %q", v.Emit())
	}
}

// TestSpansNameCustomProvidersByWhatTheyCall: with the registry's names (serve's
// NameProviders), an Azure entry of its own name is azure.ai.openai and an OpenAI-format
// entry at a self-hosted server openai.
func TestSpansNameCustomProvidersByWhatTheyCall(t *testing.T) {
	reg := providers.NewRegistry(
		providers.NewAzure(providers.AzureConfig{Config: providers.Config{Name: "azure-eu", BaseURL: "https://eu.example.com"}}),
		providers.NewOpenAI(providers.Config{Name: "my-vllm", BaseURL: "http://gpu:8000/v1"}))
	exp := tracetest.NewInMemoryExporter()
	tr := NewTracing(exp, "test", true, TracingOptions{})
	tr.NameProviders(reg.GenAIName)
	r := groupRecord()
	r.Provider, r.Model = "azure-eu", "azure-eu/prod-4o"
	r.Attempts = []completions.Attempt{
		{Model: "my-vllm/llama", Outcome: completions.OutcomeError, Kind: "timeout", LatencyMS: 10, Started: r.Start},
		{Model: "azure-eu/prod-4o", Outcome: completions.OutcomeOK, LatencyMS: 10, Started: r.Start},
	}
	tr.ObserveRequest(context.Background(), r)
	spans := exp.GetSpans()
	for name, want := range map[string]string{"chat smart": "azure.ai.openai", "attempt my-vllm/llama": "openai", "attempt azure-eu/prod-4o": "azure.ai.openai"} {
		if v, _ := attrOf(spanNamed(t, spans, name).Attributes, "gen_ai.provider.name"); v.Emit() != want {
			t.Errorf("%s: gen_ai.provider.name %q, want %q", name, v.Emit(), want)
		}
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var names []string
	for _, sp := range spans {
		names = append(names, sp.Name)
	}
	return names
}

func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	for _, sp := range spans {
		if sp.Name == name {
			return sp
		}
	}
	t.Fatalf("no span %q in %s", name, strings.Join(spanNames(spans), ", "))
	return tracetest.SpanStub{}
}

// TestRequestedModelLabel: the gateway's request, duration and cost series keep
// gen_ai_request_model the model that answered and say in requested_model what the caller
// asked for (a model group), bounded as model labels are: names the gateway does not know
// that never answered are "other", so made-up group names add no series.
func TestRequestedModelLabel(t *testing.T) {
	m := New(Options{})
	m.AdmitModels(func(model string) bool { return model == "smart" || strings.HasPrefix(model, "gemini/") })
	r := groupRecord()
	r.Usage = completions.Usage{PromptTokens: 10, CompletionTokens: 5, Costs: completions.Costs{TotalTokensCost: 0.002}}
	m.ObserveRequest(context.Background(), r)
	for i := range MaxModelLabels + 10 {
		bad := groupRecord()
		bad.Outcome, bad.Provider, bad.Model, bad.ModelGroup = completions.RequestFailed, "", "", fmt.Sprintf("made-up-%d", i)
		bad.Attempts = nil
		m.ObserveRequest(context.Background(), bad)
	}
	body := scrape(t, m.Handler(""), "")
	for _, want := range []string{
		`switchyard_gateway_requests_total{error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="gemini",gen_ai_request_model="gemini/gemini-2.5-flash",outcome="ok",requested_model="smart",stream="false"} 1`,
		`gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="gemini",gen_ai_request_model="gemini/gemini-2.5-flash",outcome="ok",requested_model="smart",stream="false"} 1`,
		`switchyard_gateway_cost_usd_total{gen_ai_provider_name="gemini",gen_ai_request_model="gemini/gemini-2.5-flash",requested_model="smart"} 0.002`,
		`requested_model="other",stream="false"} 210`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s:\n%s", want, grepLines(body, "switchyard_gateway_requests_total{"))
		}
	}
	if strings.Contains(body, "made-up-") {
		t.Error("made-up model names took label values")
	}
}

// TestRequestedModelLabelOfNamesAWildcardAnswers: names a wildcard answers ("my-*" calling
// one model: any "my-<anything>" a client makes up is answered) take no requested_model
// value of their own, in Switchyard's series or LiteLLM's, so they cannot use up the values
// real models need (a model answering after them still reads as itself); the answering
// model's own name, with its provider or bare, and a known group's are their own.
func TestRequestedModelLabelOfNamesAWildcardAnswers(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	m.AdmitModels(func(model string) bool { return model == "smart" || strings.HasPrefix(model, "openai/") })
	answered := func(asked, model string) completions.RequestRecord {
		r := groupRecord()
		r.Provider, r.Model, r.ModelGroup, r.Requested = "openai", model, asked, model
		r.Attempts = []completions.Attempt{{Model: model, Outcome: completions.OutcomeOK, LatencyMS: 100, Started: r.Start}}
		return r
	}
	for i := range MaxModelLabels + 10 {
		m.ObserveRequest(context.Background(), answered(fmt.Sprintf("my-%d", i), "openai/gpt-4o"))
	}
	m.ObserveRequest(context.Background(), answered("gpt-4o-mini", "openai/gpt-4o-mini"))
	m.ObserveRequest(context.Background(), answered("openai/o3", "openai/o3"))
	m.ObserveRequest(context.Background(), answered("smart", "openai/o3"))
	body := scrape(t, m.Handler(""), "")
	if strings.Contains(body, `"my-`) {
		t.Errorf("names a wildcard answered took label values:\n%s", grepLines(body, "my-"))
	}
	for _, want := range []string{
		`requested_model="other",stream="false"} 210`,
		`gen_ai_request_model="openai/gpt-4o-mini",outcome="ok",requested_model="gpt-4o-mini"`,
		`gen_ai_request_model="openai/o3",outcome="ok",requested_model="openai/o3"`,
		`gen_ai_request_model="openai/o3",outcome="ok",requested_model="smart"`,
		`litellm_proxy_total_requests_metric_total{`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s:\n%s", want, grepLines(body, "switchyard_gateway_requests_total{"))
		}
	}
	if lines := grepLines(body, "litellm_proxy_total_requests_metric_total{"); !strings.Contains(lines, `requested_model="other"`) || !strings.Contains(lines, `requested_model="gpt-4o-mini"`) {
		t.Errorf("LiteLLM's series:\n%s", lines)
	}
}

// TestFailedRequestSpanNamesItsProvider: the span of a request no model answered still
// has gen_ai.provider.name (the conventions require it), of the model tried last.
func TestFailedRequestSpanNamesItsProvider(t *testing.T) {
	r := groupRecord()
	r.Outcome, r.Provider, r.Model, r.Answer = completions.RequestFailed, "", "", nil
	r.Err = errors.New("every model failed")
	r.Attempts[1].Outcome, r.Attempts[1].Kind = completions.OutcomeError, "rate_limit"
	sp := chatSpanStub(t, observedSpans(t, TracingOptions{}, r))
	got := map[string]string{}
	for _, a := range sp.Attributes {
		got[string(a.Key)] = a.Value.Emit()
	}
	if got["gen_ai.provider.name"] != "gcp.gemini" || got["switchyard.provider"] != "gemini" || got["error.type"] != "rate_limit" {
		t.Errorf("failed request's span: %v", got)
	}
}
