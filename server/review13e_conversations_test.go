package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview13eConversationLeaseOutlivedByRequestTimeout: a /v1/responses request may set
// its own deadline ("timeout", up to 3600 s), but the lease it takes on its conversation
// ends at --request-timeout + 30 s. Past it a second request on the conversation is
// answered while the first is still being answered (README: "another one on it ... is a 400
// conversation_locked"): neither saw the other's turn, and both are appended, interleaved.
// Reproduced with serve --request-timeout 2s, a 60 s upstream and "timeout":120.
// (Mended after review: the lease is now short and renewed while the request runs, on the
// real clock, so the test runs on it: a 600 ms lease, and the second request comes 1.5 s
// — two leases and more — after the first began, past --request-timeout too.)
func TestReview13eConversationLeaseOutlivedByRequestTimeout(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var n atomic.Int32
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			once.Do(func() { close(arrived) })
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		RequestTimeout: time.Second, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		StoredResponses: completions.StoredResponsesOptions{ConversationLease: 600 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	conv := review13dCreate(t, hs, `{}`)

	done := make(chan int)
	go func() {
		resp, _ := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/m","conversation":"`+conv+`","input":"A","timeout":600}`, nil)
		done <- resp.StatusCode
	}()
	<-arrived
	time.Sleep(1500 * time.Millisecond) // the first request, allowed 600 s, is still being answered
	resp, _ := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/m","conversation":"`+conv+`","input":"B"}`, nil)
	close(release)
	if code := <-done; code != 200 {
		t.Fatalf("first request: %d", code)
	}
	if resp.StatusCode == 200 {
		_, lb := do2(t, "GET", hs.URL+"/v1/conversations/"+conv+"/items?order=asc", testKey, "", nil)
		var page responseItemList
		json.Unmarshal(lb, &page)
		var texts []string
		for _, it := range page.Data {
			texts = append(texts, it.Role+":"+it.Content.Parts[0].Text)
		}
		t.Errorf("a second request was answered on a conversation whose first request (timeout 600 s) was still being answered: the lease ended with --request-timeout; the conversation reads %q", texts)
	}
}
