package telemetry

import (
	"context"
	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-ai/switchyard/completions"
)

func record(outcome string, attempts ...completions.Attempt) completions.RequestRecord {
	r := completions.RequestRecord{Owner: "key_a", Outcome: outcome, Attempts: attempts, Latency: 300 * time.Millisecond, TTFT: 100 * time.Millisecond}
	if outcome == completions.RequestOK {
		last := attempts[len(attempts)-1].Model
		r.Provider, r.Model = strings.Split(last, "/")[0], last
		r.Usage = completions.Usage{PromptTokens: 12, CompletionTokens: 30, TotalTokens: 42, Costs: completions.Costs{TotalTokensCost: 0.002}}
	}
	return r
}

// TestGatewayRequestsErrorType: switchyard_gateway_requests_total says why a request
// failed (OpenTelemetry's error.type): the last attempt's kind for an upstream failure, and
// for a request refused before any model was called budget_exceeded, rate_limited or the
// status it was answered with, so that an SRE can tell the gateway's own refusals from an
// upstream outage (all read outcome="error").
func TestGatewayRequestsErrorType(t *testing.T) {
	m := New(Options{StatusOf: func(err error) int {
		if strings.Contains(err.Error(), "too many") {
			return http.StatusTooManyRequests
		}
		return http.StatusRequestEntityTooLarge
	}})
	ctx := context.Background()
	down := completions.Attempt{Model: "openai/gpt-4o-mini", Outcome: completions.OutcomeError, Kind: "overloaded"}
	m.ObserveRequest(ctx, record(completions.RequestFailed, down))
	for _, err := range []error{fmt.Errorf("refused: %w", completions.ErrBudgetExceeded), errors.New("too many requests"), errors.New("body too large")} {
		m.ObserveRequest(ctx, completions.RequestRecord{Outcome: completions.RequestFailed, Err: err, Attempts: []completions.Attempt{}})
	}
	m.ObserveRequest(ctx, record(completions.RequestOK, completions.Attempt{Model: "openai/gpt-4o-mini", Outcome: completions.OutcomeOK}))
	got := map[string]float64{}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "switchyard_gateway_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "error_type" {
					got[l.GetValue()] += s.GetCounter().GetValue()
				}
			}
		}
	}
	want := map[string]float64{"": 1, "overloaded": 1, "budget_exceeded": 1, "rate_limited": 1, "413": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests by error_type %v, want %v", got, want)
	}
}

func TestGatewayMetrics(t *testing.T) {
	m := New(Options{})
	ctx := context.Background()
	ok := completions.Attempt{Model: "openai/gpt-4o-mini", Outcome: completions.OutcomeOK}
	down := completions.Attempt{Model: "anthropic/claude-3-5-haiku", Outcome: completions.OutcomeError, Kind: "overloaded"}
	m.ObserveRequest(ctx, record(completions.RequestOK, ok))
	m.ObserveRequest(ctx, record(completions.RequestOK, down, down, ok)) // a retry, then a fallback
	m.ObserveRequest(ctx, record(completions.RequestFailed, down))

	reqs := func(model, outcome string) float64 {
		provider := strings.Split(model, "/")[0]
		errType := ""
		if outcome != "ok" {
			errType = "overloaded"
		}
		return testutil.ToFloat64(m.requests.WithLabelValues(errType, "chat", provider, model, outcome, "false", ""))
	}
	if reqs("openai/gpt-4o-mini", "ok") != 2 || reqs("anthropic/claude-3-5-haiku", "error") != 1 {
		t.Fatalf("requests: ok %v, error %v", reqs("openai/gpt-4o-mini", "ok"), reqs("anthropic/claude-3-5-haiku", "error"))
	}
	if v := testutil.ToFloat64(m.attempts.WithLabelValues("anthropic", "anthropic/claude-3-5-haiku", "error", "overloaded")); v != 3 {
		t.Fatalf("failed attempts = %v, want 3", v)
	}
	if r, f := testutil.ToFloat64(m.retries.WithLabelValues("anthropic/claude-3-5-haiku")), testutil.ToFloat64(m.fallbacks.WithLabelValues("openai/gpt-4o-mini")); r != 1 || f != 1 {
		t.Fatalf("retries %v fallbacks %v, want 1 and 1", r, f)
	}
	if c := testutil.ToFloat64(m.cost.WithLabelValues("openai", "openai/gpt-4o-mini", "")); c < 0.0039 || c > 0.0041 {
		t.Fatalf("cost = %v, want 0.004", c)
	}
	body := scrape(t, m.Handler(""), "")
	for _, want := range []string{
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",gen_ai_token_type="output"} 60`,
		`gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",outcome="ok",requested_model="",stream="false"} 2`,
		`gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="openai/gpt-4o-mini",stream="false",le="0.1"} 2`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, "key_a") {
		t.Error("the owner is a label although OwnerLabel is off")
	}
}

func TestModelLabelsAreBounded(t *testing.T) {
	m := New(Options{OwnerLabel: true, MaxOwnerLabels: 2})
	for i := range MaxModelLabels + 50 {
		r := record(completions.RequestFailed, completions.Attempt{Model: fmt.Sprintf("x/m%d", i), Outcome: completions.OutcomeError, Kind: "not_found"})
		r.Owner = fmt.Sprintf("key_%d", i%5)
		m.ObserveRequest(context.Background(), r)
	}
	if n := testutil.CollectAndCount(m.requests); n > MaxModelLabels+5*2 {
		t.Fatalf("%d request series for %d models: labels not bounded", n, MaxModelLabels+50)
	}
	if v := testutil.ToFloat64(m.requests.WithLabelValues("not_found", "chat", "x", "other", "error", "false", "", "other")); v == 0 {
		t.Fatal("no \"other\" series for the models beyond the bound")
	}
}

func TestMetricsToken(t *testing.T) {
	h := New(Options{}).Handler("s3cret")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Content-Type") != "application/json" ||
		!strings.Contains(rec.Body.String(), `"error":"Unauthorized"`) {
		t.Fatalf("without the token: %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if body := scrape(t, h, "s3cret"); !strings.Contains(body, "switchyard_") && !strings.Contains(body, "go_") {
		t.Fatalf("with the token: %s", body)
	}
}

func scrape(t *testing.T, h http.Handler, token string) string {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// TestJobDurationsFromTheProcessThatRanThem: the duration histogram counts what JobEnded
// reports, once per call; the jobs the scrape reads from the store (every replica reads the
// same ones) are in the state gauge only.
func TestJobDurationsFromTheProcessThatRanThem(t *testing.T) {
	m := New(Options{})
	now := time.Now()
	m.Jobs("training", func(context.Context) ([]JobStat, error) {
		return []JobStat{
			{ID: "elsewhere", State: "completed", Seconds: 50, Finished: now.Add(-time.Hour)},
			{ID: "here", State: "completed", Seconds: 3, Finished: now},
			{ID: "queued", State: "queued"},
		}, nil
	})
	m.JobEnded("training")(JobStat{ID: "here", State: "completed", Seconds: 3, Finished: now})
	m.JobEnded("optimization")(JobStat{ID: "never-started", State: "failed"})
	for range 2 { // scrapes observe nothing themselves
		if _, err := m.Registry().Gather(); err != nil {
			t.Fatal(err)
		}
	}
	fams, _ := m.Registry().Gather()
	var count uint64
	var sum float64
	jobs := 0.0
	for _, f := range fams {
		switch f.GetName() {
		case "switchyard_job_duration_seconds":
			for _, mt := range f.GetMetric() {
				count += mt.GetHistogram().GetSampleCount()
				sum += mt.GetHistogram().GetSampleSum()
			}
		case "switchyard_jobs":
			for _, mt := range f.GetMetric() {
				jobs += mt.GetGauge().GetValue()
			}
		}
	}
	if count != 1 || sum != 3 || jobs != 3 {
		t.Fatalf("durations counted %d (sum %v), jobs gauge %v; want 1 (3 s) and 3", count, sum, jobs)
	}
}

// Once the model label values are used up, several open breakers share "other": the scrape
// must still succeed (a duplicate series fails all of it), counting them.
func TestBreakersBeyondTheLabelBound(t *testing.T) {
	m := New(Options{})
	for i := range MaxModelLabels {
		m.ObserveRequest(context.Background(), record(completions.RequestOK, completions.Attempt{Model: fmt.Sprintf("x/m%d", i), Outcome: completions.OutcomeOK}))
	}
	m.Breakers(func() map[string]string {
		return map[string]string{"x/late-a": "open", "x/late-b": "open", "x/m1": "open", "x/late-c": "half_open"}
	})
	if _, err := m.Registry().Gather(); err != nil {
		t.Fatalf("scrape failed: %v", err)
	}
	if v := breakerGauge(t, m, "other", "open"); v != 2 {
		t.Errorf("other/open = %v, want 2", v)
	}
}

func breakerGauge(t *testing.T, m *Metrics, model, state string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "switchyard_gateway_circuit_breaker_state" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["gen_ai_request_model"] == model && labels["state"] == state {
				return mt.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no breaker series %s/%s", model, state)
	return 0
}

// With AdmitModels, names the gateway does not know take no label value until they answer:
// a caller sending made-up names cannot use up the values real models need.
func TestMadeUpModelsTakeNoLabel(t *testing.T) {
	m := New(Options{})
	m.AdmitModels(func(model string) bool { return strings.HasPrefix(model, "real/") })
	for i := range MaxModelLabels + 10 {
		m.ObserveRequest(context.Background(), record(completions.RequestFailed, completions.Attempt{Model: fmt.Sprintf("made/up%d", i), Outcome: completions.OutcomeError, Kind: "model_not_found"}))
	}
	m.ObserveRequest(context.Background(), record(completions.RequestFailed, completions.Attempt{Model: "real/down", Outcome: completions.OutcomeError, Kind: "overloaded"}))
	m.ObserveRequest(context.Background(), record(completions.RequestOK, completions.Attempt{Model: "self/hosted", Outcome: completions.OutcomeOK}))
	if v := testutil.ToFloat64(m.requests.WithLabelValues("overloaded", "chat", "real", "real/down", "error", "false", "")); v != 1 {
		t.Errorf("a known model that failed has no series of its own (%v)", v)
	}
	if v := testutil.ToFloat64(m.requests.WithLabelValues("", "chat", "self", "self/hosted", "ok", "false", "")); v != 1 {
		t.Errorf("a model that answered has no series of its own (%v)", v)
	}
	if n := testutil.CollectAndCount(m.requests); n != 3 {
		t.Errorf("%d request series, want 3 (other, real/down, self/hosted)", n)
	}
}

// A state whose last job left reads 0 instead of its series vanishing; queued and running
// read 0 from the start.
func TestJobStatesReadZeroWhenEmpty(t *testing.T) {
	jobs := []JobStat{{ID: "a", State: "failed"}}
	c := &jobCollector{kind: "training", src: func(context.Context) ([]JobStat, error) { return jobs, nil }}
	collect := func() map[string]float64 {
		ch := make(chan prometheus.Metric, 16)
		c.Collect(ch)
		close(ch)
		out := map[string]float64{}
		for m := range ch {
			var pb dto.Metric
			if err := m.Write(&pb); err != nil {
				t.Fatal(err)
			}
			if pb.GetGauge() == nil || len(pb.GetLabel()) != 2 {
				continue // the queue depth
			}
			for _, l := range pb.GetLabel() {
				if l.GetName() == "state" {
					out[l.GetValue()] = pb.GetGauge().GetValue()
				}
			}
		}
		return out
	}
	if got := collect(); got["failed"] != 1 || got["queued"] != 0 || len(got) != 3 {
		t.Fatalf("first scrape %v", got)
	}
	jobs = nil
	c.at = time.Time{} // past the refresh interval
	if got, ok := collect()["failed"]; !ok || got != 0 {
		t.Fatalf("after the failed job was deleted: failed = %v (present %v)", got, ok)
	}
}

// TestLatencyGauges: the gateway's latency figures are gauges per model and kind; models
// sharing "other" beyond the label bound are averaged into one series, so the scrape works.
func TestLatencyGauges(t *testing.T) {
	m := New(Options{})
	for i := range MaxModelLabels {
		m.ObserveRequest(context.Background(), record(completions.RequestOK, completions.Attempt{Model: fmt.Sprintf("x/m%d", i), Outcome: completions.OutcomeOK}))
	}
	m.Latencies(func() map[string]map[string]float64 {
		return map[string]map[string]float64{
			"x/m1":     {"first_token": 0.5, "per_output_token": 0.02},
			"x/late-a": {"per_output_token": 0.01},
			"x/late-b": {"per_output_token": 0.03},
		}
	})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("scrape failed: %v", err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "switchyard_gateway_model_latency_seconds" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["gen_ai_request_model"]+" "+labels["kind"]] = mt.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"x/m1 first_token": 0.5, "x/m1 per_output_token": 0.02, "other per_output_token": 0.02}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for k, v := range want {
		if d := got[k] - v; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// TestEmbeddingsMetrics: an embeddings request counts under gen_ai_operation_name
// "embeddings", with its input tokens and cost and no output-token or TTFT samples.
func TestEmbeddingsMetrics(t *testing.T) {
	m := New(Options{})
	r := completions.RequestRecord{Owner: "key_a", Operation: completions.OperationEmbeddings, Outcome: completions.RequestOK,
		Provider: "openai", Model: "openai/text-embedding-3-small", Latency: 50 * time.Millisecond,
		Attempts: []completions.Attempt{{Model: "openai/text-embedding-3-small", Outcome: completions.OutcomeOK}},
		Usage:    completions.Usage{PromptTokens: 40, TotalTokens: 40, Costs: completions.Costs{TotalTokensCost: 0.0000008}}}
	m.ObserveRequest(context.Background(), r)
	if v := testutil.ToFloat64(m.requests.WithLabelValues("", "embeddings", "openai", "openai/text-embedding-3-small", "ok", "false", "")); v != 1 {
		t.Fatalf("embeddings requests = %v", v)
	}
	body := scrape(t, m.Handler(""), "")
	if !strings.Contains(body, `gen_ai_client_token_usage_sum{gen_ai_operation_name="embeddings",gen_ai_provider_name="openai",gen_ai_request_model="openai/text-embedding-3-small",gen_ai_token_type="input"} 40`) ||
		strings.Contains(body, `gen_ai_operation_name="embeddings",gen_ai_provider_name="openai",gen_ai_request_model="openai/text-embedding-3-small",gen_ai_token_type="output"`) ||
		strings.Contains(body, `gen_ai_server_time_to_first_token_seconds_count{gen_ai_operation_name="embeddings"`) {
		t.Errorf("scrape:\n%s", grepLines(body, "embeddings"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAudioMetrics: audio requests count under their own gen_ai_operation_name, speech's
// time to its first audio byte as its TTFT.
func TestAudioMetrics(t *testing.T) {
	m := New(Options{})
	for _, r := range []completions.RequestRecord{
		{Operation: completions.OperationTranscription, Outcome: completions.RequestOK, Provider: "groq", Model: "groq/whisper-large-v3",
			Latency: time.Second, Usage: completions.Usage{Costs: completions.Costs{TotalTokensCost: 0.001, PriceKnown: true}}},
		{Operation: completions.OperationSpeech, Stream: true, Outcome: completions.RequestOK, Provider: "openai", Model: "openai/tts-1",
			Latency: time.Second, TTFT: 200 * time.Millisecond, Usage: completions.Usage{Costs: completions.Costs{TotalTokensCost: 0.0003, PriceKnown: true}}},
	} {
		m.ObserveRequest(context.Background(), r)
	}
	if v := testutil.ToFloat64(m.requests.WithLabelValues("", "transcription", "groq", "groq/whisper-large-v3", "ok", "false", "")); v != 1 {
		t.Errorf("transcription requests = %v", v)
	}
	if v := testutil.ToFloat64(m.requests.WithLabelValues("", "speech", "openai", "openai/tts-1", "ok", "true", "")); v != 1 {
		t.Errorf("speech requests = %v", v)
	}
	body := scrape(t, m.Handler(""), "")
	if !strings.Contains(body, `gen_ai_server_time_to_first_token_seconds_count{gen_ai_operation_name="speech"`) {
		t.Errorf("scrape:\n%s", grepLines(body, "speech"))
	}
}

// TestPendingChargeGauges: the budget charges the store did not take are scraped as gauges
// (pending, their USD and tokens, the oldest's wait) and counters (applied, lost, unknown).
func TestPendingChargeGauges(t *testing.T) {
	m := New(Options{})
	m.PendingCharges(func() completions.PendingChargeStats {
		return completions.PendingChargeStats{Count: 3, CostUSD: 0.25, Tokens: 60, Oldest: time.Now().Add(-time.Minute), Applied: 7, Lost: 1, Unknown: 2}
	})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("scrape failed: %v", err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			switch {
			case mt.GetGauge() != nil:
				got[f.GetName()] = mt.GetGauge().GetValue()
			case mt.GetCounter() != nil:
				got[f.GetName()] = mt.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{"switchyard_budget_pending_charges": 3, "switchyard_budget_pending_charges_cost_usd": 0.25,
		"switchyard_budget_pending_charges_tokens": 60, "switchyard_budget_pending_charges_applied_total": 7,
		"switchyard_budget_pending_charges_lost_total": 1, "switchyard_budget_pending_charges_unknown_total": 2}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if w := got["switchyard_budget_pending_charge_oldest_seconds"]; w < 59 {
		t.Errorf("oldest pending charge's wait = %v s, want about 60", w)
	}
	// Since PostgreSQL's transaction status is asked, "unknown" covers only the charges
	// whose outcome the store cannot tell: its help says so.
	for _, f := range fams {
		if f.GetName() == "switchyard_budget_pending_charges_unknown_total" && !strings.Contains(f.GetHelp(), "cannot tell") {
			t.Errorf("%s help %q: does not say it counts only the charges whose outcome the store cannot tell", f.GetName(), f.GetHelp())
		}
	}
}
