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

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// stalledRealtime is a fake realtime upstream that never answers a dial: it signals each
// handshake it holds on dialled and waits for the gateway to give it up.
type stalledRealtime struct{ dialled chan struct{} }

func (u *stalledRealtime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // read whole, so its connection's end cancels r's context
	u.dialled <- struct{}{}
	<-r.Context().Done()
}

// stalledRealtimeServer is a gateway whose realtime sessions dial a stalledRealtime, its
// requests' contexts cut with ErrShuttingDown by cut (serve's --shutdown-timeout running
// out), its http.Server not started.
func stalledRealtimeServer(t *testing.T) (hs *httptest.Server, s *Server, up *stalledRealtime, cut func()) {
	t.Helper()
	up = &stalledRealtime{dialled: make(chan struct{}, 4)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
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
	t.Cleanup(hs.Close)
	return hs, s, up, func() { cutRequests(ErrShuttingDown) }
}

// TestRealtimeDialCutAtShutdown: a realtime session whose dial upstream is under way when
// the shutdown cuts its request (the shutdown timeout ran out), or when the shutdown begins
// (CloseRealtimeSessions), is answered 503 with Retry-After saying the server is shutting
// down, never opened, and recorded cut with the model asked, as the sessions the shutdown
// closes or refuses are — not a 502 recorded as a failure of the provider's or a client that
// left.
func TestRealtimeDialCutAtShutdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(s *Server, cut func())
	}{
		{"request cut", func(_ *Server, cut func()) { cut() }},
		{"shutdown began", func(s *Server, _ func()) { s.CloseRealtimeSessions() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, s, up, cut := stalledRealtimeServer(t)
			hs.Start()
			type answer struct {
				resp *http.Response
				err  error
			}
			res := make(chan answer, 1)
			go func() {
				_, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
				res <- answer{resp, err}
			}()
			select {
			case <-up.dialled:
			case a := <-res:
				t.Fatalf("the session ended before its dial: %v %v", a.err, a.resp)
			case <-time.After(30 * time.Second):
				t.Fatal("the dial never reached the upstream")
			}
			tc.stop(s, cut)
			a := <-res
			if a.err == nil {
				t.Fatal("the session opened")
			}
			if a.resp == nil || a.resp.StatusCode != http.StatusServiceUnavailable || a.resp.Header.Get("Retry-After") == "" {
				t.Fatalf("answered %v %v, want 503 with Retry-After", a.err, a.resp)
			}
			q := realtimeRecords(t, s, testKey, 1)[0]
			if q.Outcome != usagelog.OutcomeCut || !strings.Contains(q.Error, "shutting down") || q.ModelGroup != "gpt-realtime" {
				t.Errorf("recorded %+v, want outcome cut saying the server is shutting down, model_group gpt-realtime", q)
			}
		})
	}
}

// TestRealtimeCallCutAtShutdown: a WebRTC call (POST /v1/realtime/calls) whose offer the
// provider has not answered when the shutdown cuts its request is answered 503 with
// Retry-After and recorded cut with the model asked, not a 502 recorded as the provider's
// failure.
func TestRealtimeCallCutAtShutdown(t *testing.T) {
	hs, s, up, cut := stalledRealtimeServer(t)
	hs.Start()
	type answer struct {
		status int
		retry  string
		err    error
	}
	res := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", hs.URL+"/v1/realtime/calls?model=gpt-realtime", strings.NewReader("v=0"))
		req.Header.Set("Content-Type", "application/sdp")
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- answer{err: err}
			return
		}
		resp.Body.Close()
		res <- answer{status: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
	}()
	select {
	case <-up.dialled:
	case a := <-res:
		t.Fatalf("the call ended before its offer reached the provider: %+v", a)
	case <-time.After(30 * time.Second):
		t.Fatal("the offer never reached the provider")
	}
	cut()
	if a := <-res; a.err != nil || a.status != http.StatusServiceUnavailable || a.retry == "" {
		t.Fatalf("answered %+v, want 503 with Retry-After", a)
	}
	q := realtimeRecords(t, s, testKey, 1)[0]
	if q.Outcome != usagelog.OutcomeCut || !strings.Contains(q.Error, "shutting down") || q.ModelGroup != "gpt-realtime" {
		t.Errorf("recorded %+v, want outcome cut saying the server is shutting down, model_group gpt-realtime", q)
	}
}
