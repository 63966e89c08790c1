package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
)

// fakeAlertReceiver is a test webhook that keeps every delivery.
type fakeAlertReceiver struct {
	mu    sync.Mutex
	got   []receivedAlert
	serve *httptest.Server
}

type receivedAlert struct {
	body   []byte
	header http.Header
}

func newFakeAlertReceiver(t *testing.T) *fakeAlertReceiver {
	r := &fakeAlertReceiver{}
	r.serve = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, receivedAlert{body: b, header: req.Header.Clone()})
		r.mu.Unlock()
	}))
	t.Cleanup(r.serve.Close)
	return r
}

func (r *fakeAlertReceiver) all() []receivedAlert {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedAlert(nil), r.got...)
}

// serveUntil runs `switchyard serve` in-process with the openai provider at upstream and
// the given flags; the returned stop ends it and waits (the alerts are drained then).
func serveUntil(t *testing.T, upstream string, flags ...string) (base string, stop func()) {
	t.Helper()
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	t.Setenv("OPENAI_BASE_URL", upstream+"/v1")
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--allow-local-urls"}, flags...), stdout, stderr)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop")
			}
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := addrRe.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], stop
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
}

func postJSON(t *testing.T, url, key, body string, into any) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if strings.Contains(url, "/api/v1/keys/") {
		req.Method = "PATCH"
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if into != nil && json.Unmarshal(raw, into) != nil {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// TestAlertsBudgetThresholdsOncePerKey: a virtual key whose spend crosses its soft budget,
// 85% of its max budget and its max budget over many requests sends exactly three signed
// alerts to the webhook, counted in switchyard_alerts_total.
func TestAlertsBudgetThresholdsOncePerKey(t *testing.T) {
	rec := newFakeAlertReceiver(t)
	base, stop := serveUntil(t, fakeOpenAIUpstream(t).URL, "--alert-webhook", rec.serve.URL, "--alert-webhook-secret", "whsec")
	var vk struct {
		ID, Key string
	}
	if code := postJSON(t, base+"/api/v1/keys", "k", `{"name":"alerted"}`, &vk); code != 200 && code != 201 {
		t.Fatalf("issue key: %d", code)
	}
	chat := func() int {
		return postJSON(t, base+"/v1/chat/completions", vk.Key, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
	}
	if code := chat(); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	var info struct {
		Spend struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"spend"`
		SoftBudgetUSD float64 `json:"soft_budget_usd"`
	}
	code, raw := get(t, base+"/api/v1/keys/"+vk.ID, "k")
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &info)
	c := info.Spend.CostUSD
	if code != 200 || c <= 0 {
		t.Fatalf("key info %d %v: no cost to budget on", code, raw)
	}
	// Thresholds between requests: soft at the 5th, 85% at the 9th, the max at the 10th.
	if code := postJSON(t, base+"/api/v1/keys/"+vk.ID, "k", fmt.Sprintf(`{"soft_budget_usd":%g,"max_budget_usd":%g}`, 4.5*c, 9.5*c), &info); code != 200 || info.SoftBudgetUSD != 4.5*c {
		t.Fatalf("PATCH: %d %+v", code, info)
	}
	ok := 1
	for range 19 {
		if chat() == 200 {
			ok++
		}
	}
	if ok != 10 {
		t.Fatalf("%d requests answered, want 10 (the max budget stops the rest)", ok)
	}
	// The deliveries are counted: poll until the three are sent (they go in the background).
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, text := scrapeMetrics(t, base+"/metrics", "")
		if sentAlerts(text) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("switchyard_alerts_total never counted 3 sent:\n%s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop() // drains the queue: nothing more may come
	got := rec.all()
	var types []string
	for _, a := range got {
		if err := alerting.Verify("whsec", a.header.Get(alerting.HeaderSignature), a.header.Get(alerting.HeaderTimestamp), a.body, time.Minute, time.Now()); err != nil {
			t.Fatalf("alert %s: %v", a.body, err)
		}
		var e alerting.Event
		if err := json.Unmarshal(a.body, &e); err != nil {
			t.Fatal(err)
		}
		if e.Subject != vk.ID || e.Figures["spend_usd"] <= 0 {
			t.Fatalf("alert %s", a.body)
		}
		types = append(types, e.Type)
	}
	want := map[string]bool{alerting.EventSoftBudget: true, alerting.EventBudgetNear: true, alerting.EventBudgetReached: true}
	if len(types) != 3 || !want[types[0]] || !want[types[1]] || !want[types[2]] || types[0] == types[1] || types[1] == types[2] || types[0] == types[2] {
		t.Fatalf("alerts %v, want soft, 85%% and reached once each", types)
	}
}

// TestAlertsOutageTripAndRecovery: a model whose upstream fails opens its breaker (one
// deployment_down alert) and its recovery closes it (one deployment_recovered), to a JSON
// and a Slack webhook alike.
func TestAlertsOutageTripAndRecovery(t *testing.T) {
	var down atomic.Bool
	ok := fakeOpenAIUpstream(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		resp, err := http.Post(ok.URL+r.URL.Path, "application/json", bytes.NewReader(b))
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(up.Close)
	asJSON, asSlack := newFakeAlertReceiver(t), newFakeAlertReceiver(t)
	base, stop := serveUntil(t, up.URL, "--alert-webhook", asJSON.serve.URL+",slack:"+asSlack.serve.URL,
		"--breaker-failures", "2", "--breaker-cooldown", "100ms", "--alert-events", "outage")
	chat := func() int {
		return postJSON(t, base+"/v1/chat/completions", "k", `{"model":"openai/gpt-4o-mini","max_retries":1,"messages":[{"role":"user","content":"hi"}]}`, nil)
	}
	down.Store(true)
	for range 3 {
		chat()
	}
	down.Store(false)
	time.Sleep(200 * time.Millisecond) // past the cool-down: the next request probes
	if code := chat(); code != 200 {
		t.Fatalf("after recovery: %d", code)
	}
	for range 3 {
		chat()
	}
	stop()
	var types []string
	for _, a := range asJSON.all() {
		var e alerting.Event
		if err := json.Unmarshal(a.body, &e); err != nil {
			t.Fatal(err)
		}
		if e.Subject != "openai/gpt-4o-mini" {
			t.Fatalf("alert %s", a.body)
		}
		types = append(types, e.Type)
	}
	if len(types) != 2 || types[0] != alerting.EventDeploymentDown || types[1] != alerting.EventDeploymentRecovered {
		t.Fatalf("alerts %v, want deployment_down then deployment_recovered", types)
	}
	slack := asSlack.all()
	if len(slack) != 2 {
		t.Fatalf("%d Slack alerts, want 2", len(slack))
	}
	var text struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(slack[0].body, &text); err != nil || !strings.Contains(text.Text, "Deployment down") || !strings.Contains(text.Text, "openai/gpt-4o-mini") {
		t.Fatalf("Slack body %s", slack[0].body)
	}
}

// sentAlerts adds up switchyard_alerts_total{outcome="sent"} in a scrape.
func sentAlerts(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "switchyard_alerts_total{") && strings.Contains(line, `outcome="sent"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += int(v)
		}
	}
	return n
}

// TestAlertsTeamBudget: a team's account (shared by its keys) alerts at 85% and at its max
// budget once each, with the team's id as the subject, whichever key spent it.
func TestAlertsTeamBudget(t *testing.T) {
	rec := newFakeAlertReceiver(t)
	base, stop := serveUntil(t, fakeOpenAIUpstream(t).URL, "--alert-webhook", rec.serve.URL)
	var team struct {
		TeamID string `json:"team_id"`
	}
	if code := postJSON(t, base+"/team/new", "k", `{"team_alias":"eng"}`, &team); code != 200 || team.TeamID == "" {
		t.Fatalf("/team/new: %d %+v", code, team)
	}
	keys := make([]string, 2)
	for i := range keys {
		var k struct {
			Key string `json:"key"`
		}
		if code := postJSON(t, base+"/key/generate", "k", `{"team_id":"`+team.TeamID+`"}`, &k); code != 200 || k.Key == "" {
			t.Fatalf("/key/generate: %d", code)
		}
		keys[i] = k.Key
	}
	chat := func(i int) int {
		return postJSON(t, base+"/v1/chat/completions", keys[i%2], `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
	}
	if code := chat(0); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	var info struct {
		TeamInfo struct {
			Spend float64 `json:"spend"`
		} `json:"team_info"`
	}
	code, raw := get(t, base+"/team/info?team_id="+team.TeamID, "k")
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &info)
	c := info.TeamInfo.Spend
	if code != 200 || c <= 0 {
		t.Fatalf("team info %d %v: no spend to budget on", code, raw)
	}
	// 85% at the 8th request, the max at the 9th (both keys spending).
	if code := postJSON(t, base+"/team/update", "k", fmt.Sprintf(`{"team_id":%q,"max_budget":%g}`, team.TeamID, 8.5*c), nil); code != 200 {
		t.Fatalf("/team/update: %d", code)
	}
	for i := range 14 {
		chat(i)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, text := scrapeMetrics(t, base+"/metrics", "")
		if sentAlerts(text) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("switchyard_alerts_total never counted 2 sent:\n%s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	var events []alerting.Event
	for _, a := range rec.all() {
		var e alerting.Event
		if err := json.Unmarshal(a.body, &e); err != nil {
			t.Fatal(err)
		}
		if e.Subject != team.TeamID || e.Details["subject_kind"] != "team" || !strings.HasPrefix(e.Message, "Team "+team.TeamID) {
			t.Fatalf("alert %s, want one about team %s", a.body, team.TeamID)
		}
		events = append(events, e)
	}
	// In the order they happened: the alerter's two workers may deliver two alerts raised
	// one request apart in either order.
	slices.SortStableFunc(events, func(a, b alerting.Event) int { return a.Time.Compare(b.Time) })
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if len(types) != 2 || types[0] != alerting.EventBudgetNear || types[1] != alerting.EventBudgetReached {
		t.Fatalf("alerts %v, want 85%% then reached, once each", types)
	}
}

// TestAlertsBudgetLoweredBelowSpend: a max budget lowered below what the key already spent
// refuses its next requests, and the first refusal sends budget_reached once (no charge
// crosses it: LiteLLM alerts on the refusal); later refusals send nothing more.
func TestAlertsBudgetLoweredBelowSpend(t *testing.T) {
	rec := newFakeAlertReceiver(t)
	base, stop := serveUntil(t, fakeOpenAIUpstream(t).URL, "--alert-webhook", rec.serve.URL)
	var vk struct {
		ID, Key string
	}
	if code := postJSON(t, base+"/api/v1/keys", "k", `{"name":"lowered","max_budget_usd":100}`, &vk); code != 200 && code != 201 {
		t.Fatalf("issue key: %d", code)
	}
	chat := func() int {
		return postJSON(t, base+"/v1/chat/completions", vk.Key, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
	}
	for range 2 {
		if code := chat(); code != 200 {
			t.Fatalf("a request within the budget: %d", code)
		}
	}
	var info struct {
		Spend struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"spend"`
	}
	if code := postJSON(t, base+"/api/v1/keys/"+vk.ID, "k", `{"max_budget_usd":100}`, &info); code != 200 || info.Spend.CostUSD <= 0 {
		t.Fatalf("key info: %d %+v", code, info)
	}
	if code := postJSON(t, base+"/api/v1/keys/"+vk.ID, "k", fmt.Sprintf(`{"max_budget_usd":%g}`, info.Spend.CostUSD/2), nil); code != 200 {
		t.Fatalf("lowering the budget: %d", code)
	}
	for range 3 {
		if code := chat(); code != 429 {
			t.Fatalf("a request past the lowered budget: %d, want 429", code)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, text := scrapeMetrics(t, base+"/metrics", "")
		if sentAlerts(text) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("switchyard_alerts_total never counted the alert:\n%s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	got := rec.all()
	if len(got) != 1 {
		t.Fatalf("%d alerts, want 1 (budget_reached at the first refusal)", len(got))
	}
	var e alerting.Event
	if err := json.Unmarshal(got[0].body, &e); err != nil || e.Type != alerting.EventBudgetReached || e.Subject != vk.ID {
		t.Fatalf("alert %s (%v), want budget_reached for %s", got[0].body, err, vk.ID)
	}
}
