package telemetry

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestCutStreamSpendIsCounted: what a stream cut midway was billed (the record of a
// stream_error, or of a client that left, carries the prompt and the output sent so far)
// counts in litellm_spend_metric and LiteLLM's token counters, as it counts in the key's
// spend, and in switchyard_gateway_cost_usd; a cancelled request billed nothing still
// counts nowhere, and the proxy's request counters still leave a cancelled one out.
func TestCutStreamSpendIsCounted(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	billed := completions.Usage{PromptTokens: 8, CompletionTokens: 3, TotalTokens: 11,
		Costs: completions.Costs{InputTokensCost: 0.008, OutputTokensCost: 0.006, TotalTokensCost: 0.014, PriceKnown: true}}
	attempt := []completions.Attempt{{Model: "openai/ok", Outcome: completions.OutcomeError, Started: time.Now()}}
	for _, r := range []completions.RequestRecord{
		{Outcome: completions.RequestStreamFailed, Stream: true, Model: "openai/ok", Provider: "openai", KeyID: "vk_1", Usage: billed,
			UsageEstimated: true, Attempts: attempt, Err: errors.New("stream from openai/ok failed after it started")},
		{Outcome: completions.RequestCancelled, Stream: true, Model: "openai/ok", Provider: "openai", KeyID: "vk_1", Usage: billed,
			UsageEstimated: true, Attempts: attempt, Err: context.Canceled},
		{Outcome: completions.RequestCancelled, Stream: true, Model: "openai/ok", Provider: "openai", KeyID: "vk_1", Err: context.Canceled},
	} {
		m.ObserveRequest(context.Background(), r)
	}
	for name, want := range map[string]float64{
		"litellm_spend_metric_total":         2 * 0.014,
		"litellm_input_tokens_metric_total":  2 * 8,
		"litellm_output_tokens_metric_total": 2 * 3,
		"litellm_total_tokens_metric_total":  2 * 11,
		"switchyard_gateway_cost_usd_total":  2 * 0.014,
	} {
		if got := sumOf(t, m, name); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.litellm.Load().proxyTotal); n != 1 {
		t.Errorf("litellm_proxy_total_requests_metric: %d series, want the stream_error's alone", n)
	}
	if got := sumOf(t, m, "litellm_proxy_total_requests_metric_total"); got != 1 {
		t.Errorf("litellm_proxy_total_requests_metric = %v, want 1 (the cancelled requests are neither success nor failure)", got)
	}
}

// sumOf is the sum of the counter name's series in m's registry.
func sumOf(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			sum += s.GetCounter().GetValue()
		}
	}
	return sum
}

// TestCutStreamSpanCarriesItsUsage: the span of a stream cut midway (or left by its
// client) carries what it was billed — its input and output tokens and its cost — beside
// its error status; one billed nothing carries no usage.
func TestCutStreamSpanCarriesItsUsage(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		r := brokenStream("Once upon a", cancelled)
		r.Usage = completions.Usage{PromptTokens: 8, CompletionTokens: 3, TotalTokens: 11, Costs: completions.Costs{TotalTokensCost: 0.014, PriceKnown: true}}
		sp := chatSpanStub(t, observedSpans(t, TracingOptions{}, r))
		in, okIn := attrOf(sp.Attributes, "gen_ai.usage.input_tokens")
		out, okOut := attrOf(sp.Attributes, "gen_ai.usage.output_tokens")
		cost, okCost := attrOf(sp.Attributes, "switchyard.cost_usd")
		if !okIn || !okOut || !okCost || in.AsInt64() != 8 || out.AsInt64() != 3 || cost.AsFloat64() != 0.014 {
			t.Errorf("cancelled %v: span usage %v %v $%v, want 8 in, 3 out, $0.014", cancelled, in.AsInt64(), out.AsInt64(), cost.AsFloat64())
		}
		r.Usage = completions.Usage{}
		if _, ok := attrOf(chatSpanStub(t, observedSpans(t, TracingOptions{}, r)).Attributes, "gen_ai.usage.input_tokens"); ok {
			t.Errorf("cancelled %v: usage on the span of a stream billed nothing", cancelled)
		}
	}
}
