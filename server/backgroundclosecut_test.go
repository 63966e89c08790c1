package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestBackgroundResponseCutByCloseIsRecordedCut: a background /v1/responses answered 200
// (queued) whose run the gateway's Close cuts while its upstream call is under way (serve
// closes the gateway at shutdown) reads status failed with an error saying the server shut
// down and to send the request again — as OpenAI ends a background response that cannot
// finish: status "failed" with an error — and is recorded cut (the shutdown ended it, not
// a failure of its own or a client that left) with the model it asked for.
func TestBackgroundResponseCutByCloseIsRecordedCut(t *testing.T) {
	arrived := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
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

	status, _, body := postWithID(t, hs.URL+"/v1/responses", testKey, "bg-cut", `{"model":"up/gpt-4o-mini","input":"hi","background":true,"max_retries":0}`)
	var queued struct{ ID, Status string }
	if err := json.Unmarshal([]byte(body), &queued); err != nil || status != http.StatusOK || queued.Status != "queued" {
		t.Fatalf("background response: %d %s, want 200 queued", status, body)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never called the upstream")
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := do(t, s, "GET", "/v1/responses/"+queued.ID, testKey, "")
	var got struct {
		Status string
		Error  *struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.raw), &got); err != nil || r.status != http.StatusOK {
		t.Fatalf("GET the response: %d %s", r.status, r.raw)
	}
	if got.Status != "failed" || got.Error == nil || got.Error.Code != "server_error" || !strings.Contains(got.Error.Message, "shut down") {
		t.Errorf("the cut response reads %s, want status failed with a server_error saying the server shut down", r.raw)
	}
	recs := realtimeRecords(t, s, testKey, 1)
	if q := recs[0]; q.Outcome != usagelog.OutcomeCut || q.ModelGroup != "up/gpt-4o-mini" {
		t.Errorf("recorded %+v, want outcome cut, model_group up/gpt-4o-mini", q)
	}
}
