package server

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// recordCosts keeps the cost of each answered request, to compare with the metrics.
type recordCosts struct {
	mu    sync.Mutex
	spent float64
}

func (c *recordCosts) ObserveRequest(_ context.Context, r completions.RequestRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spent += r.Usage.Costs.Spent()
}

// liteLLMServer is a gateway over the fake upstream with metrics (LiteLLM's names on when
// litellm) served at /metrics; up/ok is priced. Its model groups: primary (up/down) falls
// back to the group backup (up/ok), direct (up/down) to the model up/ok.
func liteLLMServer(t *testing.T, litellm bool) (*httptest.Server, *telemetry.Metrics, *recordCosts, *Server) {
	t.Helper()
	m := telemetry.New(telemetry.Options{})
	up := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(up.Close)
	in, out := 1e-6, 2e-6
	prices := providers.DefaultCatalog().WithOwnPrices(map[string]providers.OwnPrice{"up/ok": {InputPerToken: &in, OutputPerToken: &out}})
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
	costs := &recordCosts{}
	st := store.New(newTestDriver(t))
	g, err := completions.New(completions.Options{Providers: reg, Prices: prices, Store: st, Observer: completions.Observers{m, costs},
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{
			"primary": {Models: []string{"up/down"}, Fallbacks: []string{"backup"}},
			"backup":  {Models: []string{"up/ok"}},
			"direct":  {Models: []string{"up/down"}, Fallbacks: []string{"up/ok"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if litellm {
		m.EnableLiteLLM(telemetry.LiteLLMOptions{StatusOf: ErrorStatus, DeploymentID: g.DeploymentIDOf, EndUser: true})
	}
	s, err := New(Config{Store: st, APIKeys: []string{testKey}}, Completions(g), MetricsEndpoint(m.Handler("")))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, m, costs, s
}

// series finds the one series of the family name whose labels include want; it fails the
// test when there is not exactly one.
func series(t *testing.T, m *telemetry.Metrics, name string, want map[string]string) *dto.Metric {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var found []*dto.Metric
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if hv, ok := have[k]; !ok || hv != v {
					continue next
				}
			}
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, want, len(found))
	}
	return found[0]
}

func labelNames(s *dto.Metric) string {
	var n []string
	for _, l := range s.GetLabel() {
		n = append(n, l.GetName())
	}
	return strings.Join(n, ",")
}

// TestLiteLLMMetrics: with LiteLLM's metrics on, an answered request and a failed one through
// the gateway show in LiteLLM's series with its label names: the requests by status_code,
// the failure with its exception status and class, the spend equal to the priced cost, the
// tokens, the latencies, and the deployments' calls and state.
func TestLiteLLMMetrics(t *testing.T) {
	hs, m, costs, _ := liteLLMServer(t, true)
	resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","user":"cust-1","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, hs.URL+"/api/v1/completions", testKey, `{"models":["up/down"],"maxRetries":0,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if resp.StatusCode < 400 {
		t.Fatalf("failing completion: %d %s", resp.StatusCode, body)
	}
	failed := resp.Status[:3]

	okID := completions.DeploymentID("up/ok", "up/ok")
	total := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"status_code": "200"})
	if total.GetCounter().GetValue() != 1 || labelNames(total) != "api_key_alias,client_ip,end_user,hashed_api_key,model_id,requested_model,route,status_code,team,team_alias,user,user_agent,user_email" {
		t.Errorf("total requests (200): %v", total)
	}
	want := map[string]string{"end_user": "cust-1", "requested_model": "up/ok", "model_id": okID, "hashed_api_key": "", "team": ""}
	series(t, m, "litellm_proxy_total_requests_metric_total", want)
	if f := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"status_code": failed}); f.GetCounter().GetValue() != 1 {
		t.Errorf("total requests (%s): %v", failed, f)
	}
	f := series(t, m, "litellm_proxy_failed_requests_metric_total", map[string]string{"exception_status": failed, "requested_model": "up/down"})
	if f.GetCounter().GetValue() != 1 || labelNames(f) != "api_key_alias,client_ip,end_user,exception_class,exception_status,hashed_api_key,model_id,requested_model,route,team,team_alias,user,user_agent,user_email" {
		t.Errorf("failed requests: %v", f)
	}
	for _, l := range f.GetLabel() {
		// The answer's status in LiteLLM's class names, after the upstream's provider.
		if l.GetName() == "exception_class" && (!strings.HasPrefix(l.GetValue(), "Up.") || !strings.HasSuffix(l.GetValue(), "Error")) {
			t.Errorf("exception_class %q", l.GetValue())
		}
	}
	spend := series(t, m, "litellm_spend_metric_total", map[string]string{"model": "up/ok", "end_user": "cust-1"}).GetCounter().GetValue()
	if want := 7*1e-6 + 3*2e-6; spend <= 0 || math.Abs(spend-costs.spent) > 1e-12 || math.Abs(spend-want) > 1e-12 {
		t.Errorf("spend %g, want the priced cost %g (%g)", spend, costs.spent, want)
	}
	for name, v := range map[string]float64{"litellm_total_tokens_metric_total": 10, "litellm_input_tokens_metric_total": 7, "litellm_output_tokens_metric_total": 3} {
		if got := series(t, m, name, map[string]string{"model": "up/ok", "requested_model": "up/ok"}).GetCounter().GetValue(); got != v {
			t.Errorf("%s = %g, want %g", name, got, v)
		}
	}
	for _, name := range []string{"litellm_request_total_latency_metric", "litellm_llm_api_latency_metric"} {
		if h := series(t, m, name, map[string]string{"model": "up/ok"}); h.GetHistogram().GetSampleCount() != 1 {
			t.Errorf("%s: %v", name, h)
		}
	}
	if h := series(t, m, "litellm_deployment_latency_per_output_token", map[string]string{"litellm_model_name": "up/ok", "api_provider": "up", "model_id": okID}); h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("latency per output token: %v", h)
	}
	if c := series(t, m, "litellm_deployment_success_responses_total", map[string]string{"litellm_model_name": "up/ok", "requested_model": "up/ok"}); c.GetCounter().GetValue() != 1 {
		t.Errorf("deployment successes: %v", c)
	}
	downFail := series(t, m, "litellm_deployment_failure_responses_total", map[string]string{"litellm_model_name": "up/down", "exception_status": "503", "exception_class": "Up.ServiceUnavailableError"})
	if downFail.GetCounter().GetValue() != 1 {
		t.Errorf("deployment failures: %v", downFail)
	}
	for model, want := range map[string]float64{"up/ok": 0, "up/down": 1} {
		if g := series(t, m, "litellm_deployment_state", map[string]string{"litellm_model_name": model}); g.GetGauge().GetValue() != want {
			t.Errorf("deployment state of %s: %v, want %g", model, g, want)
		}
		if c := series(t, m, "litellm_deployment_total_requests_total", map[string]string{"litellm_model_name": model}); c.GetCounter().GetValue() != 1 {
			t.Errorf("deployment calls of %s: %v", model, c)
		}
	}
	text := scrape(t, hs.URL)
	for _, name := range []string{"litellm_proxy_total_requests_metric_total{", "litellm_spend_metric_total{", "litellm_deployment_state{", "litellm_request_total_latency_metric_bucket{"} {
		if !strings.Contains(text, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

// TestLiteLLMMetricsOff: without EnableLiteLLM no series of LiteLLM's names exist.
func TestLiteLLMMetricsOff(t *testing.T) {
	hs, _, _, _ := liteLLMServer(t, false)
	if resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	text := scrape(t, hs.URL)
	if strings.Contains(text, "litellm_") || !strings.Contains(text, "switchyard_gateway_requests_total") {
		t.Errorf("metrics with LiteLLM's off:\n%s", text)
	}
}

// TestLiteLLMMetricsOfAVirtualKey: a streamed request with a virtual key of a team is
// labelled with the key's id as hashed_api_key and the team's id as team, and has its time
// to first token.
func TestLiteLLMMetricsOfAVirtualKey(t *testing.T) {
	hs, m, _, s := liteLLMServer(t, true)
	if r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"eng"}`); r.status != http.StatusOK {
		t.Fatalf("/team/new: %d %s", r.status, r.raw)
	}
	k := litellmGenerate(t, s, `{"team_id":"eng"}`)
	resp, body := post(t, hs.URL+"/v1/chat/completions", k.Key, `{"model":"up/ok","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	who := map[string]string{"hashed_api_key": k.Token, "team": "eng", "model": "up/ok"}
	if c := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"hashed_api_key": k.Token, "team": "eng", "status_code": "200"}); c.GetCounter().GetValue() != 1 {
		t.Errorf("total requests of the key: %v", c)
	}
	if h := series(t, m, "litellm_llm_api_time_to_first_token_metric", who); h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("time to first token: %v", h)
	}
	if c := series(t, m, "litellm_output_tokens_metric_total", who); c.GetCounter().GetValue() != 3 {
		t.Errorf("output tokens of the key: %v", c)
	}
	if c := series(t, m, "litellm_deployment_success_responses_total", map[string]string{"hashed_api_key": k.Token, "team": "eng"}); c.GetCounter().GetValue() != 1 {
		t.Errorf("deployment successes of the key: %v", c)
	}
}

// TestLiteLLMMetricsMadeUpModel: a request naming a model the gateway does not know that
// the upstream refuses (404) reads "other" in model_id as in requested_model, model and
// litellm_model_name: its name's deployment id would be a series of its own.
func TestLiteLLMMetricsMadeUpModel(t *testing.T) {
	hs, m, _, _ := liteLLMServer(t, true)
	m.AdmitModels(func(model string) bool { return model == "up/ok" })
	resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/nosuch","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("made-up model: %d %s", resp.StatusCode, body)
	}
	series(t, m, "litellm_proxy_failed_requests_metric_total", map[string]string{"requested_model": "other", "model_id": "other"})
	series(t, m, "litellm_deployment_failure_responses_total", map[string]string{"litellm_model_name": "other", "model_id": "other"})
	series(t, m, "litellm_deployment_state", map[string]string{"litellm_model_name": "other", "model_id": "other"})
}

// TestLiteLLMMetricsFallbackGroup: a request to a model group whose member fails and whose
// fallback group answers labels each deployment call with the model_id of the deployment
// under the group it was called in: the failed member's under the group asked, the answer's
// under the fallback group (and under its own name when the fallback names a model, not a
// group), in the deployment metrics and in the request's model_id.
func TestLiteLLMMetricsFallbackGroup(t *testing.T) {
	hs, m, _, _ := liteLLMServer(t, true)
	for _, group := range []string{"primary", "direct"} {
		resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+group+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", group, resp.StatusCode, body)
		}
	}
	for group, okID := range map[string]string{
		"primary": completions.DeploymentID("backup", "up/ok"),
		"direct":  completions.DeploymentID("up/ok", "up/ok"),
	} {
		downID := completions.DeploymentID(group, "up/down")
		series(t, m, "litellm_deployment_failure_responses_total", map[string]string{"requested_model": group, "litellm_model_name": "up/down", "model_id": downID})
		series(t, m, "litellm_deployment_success_responses_total", map[string]string{"requested_model": group, "litellm_model_name": "up/ok", "model_id": okID})
		series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"requested_model": group, "status_code": "200", "model_id": okID})
		series(t, m, "litellm_deployment_state", map[string]string{"litellm_model_name": "up/ok", "model_id": okID})
	}
}

// TestLiteLLMBudgetGauges: after a request of a virtual key of a team, LiteLLM's budget
// gauges say the key's and the team's max budget, what is left of it after the request's
// priced cost, and the hours to the budget's reset, labelled with the key's and team's
// aliases as the request's series are; a key without a max budget has +Inf left and no
// max; a key of no request has none of them.
func TestLiteLLMBudgetGauges(t *testing.T) {
	hs, m, costs, s := liteLLMServer(t, true)
	if r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"eng","team_alias":"Engineering","max_budget":10,"budget_duration":"1d"}`); r.status != http.StatusOK {
		t.Fatalf("/team/new: %d %s", r.status, r.raw)
	}
	k := litellmGenerate(t, s, `{"team_id":"eng","key_alias":"billing-bot","max_budget":2,"budget_duration":"1h"}`)
	free := litellmGenerate(t, s, `{}`)
	idle := litellmGenerate(t, s, `{"max_budget":3}`)
	for _, key := range []string{k.Key, free.Key} {
		if resp, body := post(t, hs.URL+"/v1/chat/completions", key, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
			t.Fatalf("completion: %d %s", resp.StatusCode, body)
		}
	}
	spent := costs.spent / 2 // two requests alike
	gauge := func(name string, labels map[string]string) float64 {
		return series(t, m, name, labels).GetGauge().GetValue()
	}
	key, team := map[string]string{"hashed_api_key": k.Token, "api_key_alias": "billing-bot"}, map[string]string{"team": "eng", "team_alias": "Engineering"}
	series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"hashed_api_key": k.Token, "api_key_alias": "billing-bot", "team": "eng", "team_alias": "Engineering"})
	series(t, m, "litellm_deployment_success_responses_total", map[string]string{"hashed_api_key": k.Token, "api_key_alias": "billing-bot", "team_alias": "Engineering"})
	if spent <= 0 {
		t.Fatalf("the requests cost nothing")
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"litellm_api_key_max_budget_metric", key, 2},
		{"litellm_remaining_api_key_budget_metric", key, 2 - spent},
		{"litellm_team_max_budget_metric", team, 10},
		{"litellm_remaining_team_budget_metric", team, 10 - spent},
	} {
		if got := gauge(c.name, c.labels); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s = %g, want %g", c.name, got, c.want)
		}
	}
	if h := gauge("litellm_api_key_budget_remaining_hours_metric", key); h <= 0 || h > 1 {
		t.Errorf("key's hours to reset %g, want in (0, 1]", h)
	}
	if h := gauge("litellm_team_budget_remaining_hours_metric", team); h <= 0 || h > 24 {
		t.Errorf("team's hours to reset %g, want in (0, 24]", h)
	}
	if left := gauge("litellm_remaining_api_key_budget_metric", map[string]string{"hashed_api_key": free.Token}); !math.IsInf(left, 1) {
		t.Errorf("remaining budget of a key without max budget %g, want +Inf", left)
	}
	// A new alias (/key/update, /team/update) labels the next request's series.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Key+`","key_alias":"renamed-bot"}`); r.status != http.StatusOK {
		t.Fatalf("/key/update: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","team_alias":"Eng"}`); r.status != http.StatusOK {
		t.Fatalf("/team/update: %d %s", r.status, r.raw)
	}
	if resp, body := post(t, hs.URL+"/v1/chat/completions", k.Key, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"hashed_api_key": k.Token, "api_key_alias": "renamed-bot", "team_alias": "Eng"})
	series(t, m, "litellm_remaining_api_key_budget_metric", map[string]string{"hashed_api_key": k.Token, "api_key_alias": "renamed-bot"})
	text := scrape(t, hs.URL)
	for _, absent := range []string{`litellm_api_key_max_budget_metric{api_key_alias="",hashed_api_key="` + free.Token, `hashed_api_key="` + idle.Token,
		`litellm_api_key_budget_remaining_hours_metric{api_key_alias="",hashed_api_key="` + free.Token} {
		if strings.Contains(text, absent) {
			t.Errorf("/metrics has %s", absent)
		}
	}
}
