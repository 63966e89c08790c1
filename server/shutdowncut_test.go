package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/telemetry"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// cutUpstream is a fake OpenAI upstream whose streams send one chunk, then: model "hang"
// waits for its request to end; model "breaks" drops the connection.
type cutUpstream struct{}

func (u *cutUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`+"\n\n")
	w.(http.Flusher).Flush()
	if strings.Contains(string(body), `"breaks"`) {
		panic(http.ErrAbortHandler)
	}
	<-r.Context().Done()
}

// cutServer is a gateway over a cutUpstream ("up") with its request history and metrics
// (LiteLLM's names on), whose requests' contexts are cut with ErrShuttingDown by cut, as
// serve's are when --shutdown-timeout runs out.
func cutServer(t *testing.T) (hs *httptest.Server, s *Server, m *telemetry.Metrics, cut func()) {
	t.Helper()
	ups := httptest.NewServer(&cutUpstream{})
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	m = telemetry.New(telemetry.Options{StatusOf: ErrorStatus})
	m.EnableLiteLLM(telemetry.LiteLLMOptions{StatusOf: ErrorStatus})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: completions.Observers{rec, m}})
	if err != nil {
		t.Fatal(err)
	}
	s = testServer(t, Config{Store: st}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	reqCtx, cutRequests := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cutRequests(nil) })
	hs = httptest.NewUnstartedServer(s)
	hs.Config.BaseContext = func(net.Listener) context.Context { return reqCtx }
	hs.Start()
	t.Cleanup(hs.Close)
	return hs, s, m, func() { cutRequests(ErrShuttingDown) }
}

// streamChat sends a streamed chat request for model through hs and returns its status and
// body read whole; started, if not nil, is closed once the body's first chunk came.
func streamChat(t *testing.T, hs *httptest.Server, model string, started chan<- struct{}) (int, string) {
	req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(
		`{"model":"`+model+`","stream":true,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var body strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		body.Write(buf[:n])
		if started != nil && strings.Contains(body.String(), "Hel") {
			close(started)
			started = nil
		}
		if err != nil {
			return resp.StatusCode, body.String()
		}
	}
}

// labelValue is s's label name's value.
func labelValue(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestShutdownCutStartedStreamStatus: a stream the shutdown cut after its first chunk (its
// 200 sent, then an error event saying the server is shutting down) is recorded cut and
// counted in LiteLLM's proxy counters with status_code and exception_status 503, as LiteLLM
// labels a stream that failed mid-way with the failure's status though its 200 was sent; a
// stream its upstream broke after its first chunk reads its failure's status there too.
func TestShutdownCutStartedStreamStatus(t *testing.T) {
	hs, s, m, cut := cutServer(t)
	// First (the cut ends every request after it): a stream its upstream breaks.
	status, body := streamChat(t, hs, "up/breaks", nil)
	if status != http.StatusOK || !strings.Contains(body, "Hel") || !strings.Contains(body, "error") {
		t.Fatalf("the broken stream: %d %s", status, body)
	}
	realtimeRecords(t, s, testKey, 1)
	if f := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"requested_model": "up/breaks"}); labelValue(f, "status_code") == "200" || labelValue(f, "status_code") == "" {
		t.Errorf("the broken stream's status_code %q, want its failure's", labelValue(f, "status_code"))
	}
	if f := series(t, m, "litellm_proxy_failed_requests_metric_total", map[string]string{"requested_model": "up/breaks"}); labelValue(f, "exception_status") == "200" {
		t.Errorf("the broken stream's exception_status is 200, want its failure's")
	}

	type answer struct {
		status int
		body   string
	}
	res := make(chan answer, 1)
	started := make(chan struct{})
	go func() {
		status, body := streamChat(t, hs, "up/hang", started)
		res <- answer{status, body}
	}()
	select {
	case <-started:
	case a := <-res:
		t.Fatalf("the stream ended before its first chunk: %d %s", a.status, a.body)
	case <-time.After(30 * time.Second):
		t.Fatal("the stream's first chunk never came")
	}
	cut()
	a := <-res
	if a.status != http.StatusOK || !strings.Contains(a.body, "Hel") || !strings.Contains(a.body, "shutting down") {
		t.Fatalf("the cut stream: %d %s", a.status, a.body)
	}
	outcomes := map[string]string{}
	for _, q := range realtimeRecords(t, s, testKey, 2) {
		outcomes[q.ModelGroup] = q.Outcome
	}
	if outcomes["up/hang"] != usagelog.OutcomeCut || outcomes["up/breaks"] != completions.RequestStreamFailed {
		t.Errorf("recorded outcomes %v, want the cut stream cut, the broken one stream_error", outcomes)
	}
	if f := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"requested_model": "up/hang"}); labelValue(f, "status_code") != "503" {
		t.Errorf("the cut stream's status_code %q, want 503", labelValue(f, "status_code"))
	}
	if f := series(t, m, "litellm_proxy_failed_requests_metric_total", map[string]string{"requested_model": "up/hang"}); labelValue(f, "exception_status") != "503" {
		t.Errorf("the cut stream's exception_status %q, want 503", labelValue(f, "exception_status"))
	}

}

// TestGatewayClosedRequestIsCut: a request arriving after the gateway closed (serve closes
// it at shutdown, once the HTTP server stopped: a background response asked for then,
// completions.ErrGatewayClosed) was answered a 500 "internal error", recorded error; the
// server's shutdown refused it, as it cuts a request, so it gets a 503 with Retry-After
// asking to retry, is recorded cut, and counts in LiteLLM's proxy counters with status 503
// and the proxy's own ServiceUnavailableError, no deployment called.
func TestGatewayClosedRequestIsCut(t *testing.T) {
	up := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	m := telemetry.New(telemetry.Options{StatusOf: ErrorStatus})
	m.EnableLiteLLM(telemetry.LiteLLMOptions{StatusOf: ErrorStatus})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: completions.Observers{rec, m}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", hs.URL+"/v1/responses", strings.NewReader(`{"model":"up/ok","input":"hi","background":true}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "shutting down") {
		t.Errorf("a background response asked for after the gateway closed: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if q := realtimeRecords(t, s, testKey, 1)[0]; q.Outcome != usagelog.OutcomeCut || len(q.Attempts) != 0 {
		t.Errorf("recorded %+v, want outcome cut, no attempt", q)
	}
	if f := series(t, m, "litellm_proxy_failed_requests_metric_total", map[string]string{}); labelValue(f, "exception_status") != "503" || labelValue(f, "exception_class") != "ServiceUnavailableError" {
		t.Errorf("litellm_proxy_failed_requests_metric_total: exception_status %q exception_class %q, want 503 ServiceUnavailableError", labelValue(f, "exception_status"), labelValue(f, "exception_class"))
	}
	if f := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{}); labelValue(f, "status_code") != "503" {
		t.Errorf("litellm_proxy_total_requests_metric_total: status_code %q, want 503", labelValue(f, "status_code"))
	}
	if n := seriesCount(t, m, "litellm_deployment_total_requests_total"); n != 0 {
		t.Errorf("litellm_deployment_total_requests_total: %d series, want none (no deployment was called)", n)
	}
}
