package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// review29aHookedOpenAI is an OpenAI-format provider that runs hook (once armed) when the
// gateway asks whether it serves embeddings, which it does while resolving a request's
// model group: the routes can be swapped between that and the tag filter.
type review29aHookedOpenAI struct {
	*providers.OpenAI
	hook *atomic.Pointer[func()]
}

func (p review29aHookedOpenAI) RerankOnly() bool {
	if f := p.hook.Swap(nil); f != nil {
		(*f)()
	}
	return false
}

// TestReview29aTagRoutingOpsRoutesSwapped: an embeddings request (the operations other than
// chat share opPlan) to a tag-filtered group whose routes are replaced (SetRoutes, a
// config reload or /model/new) while its members are resolved still reaches only the
// members its tags select. The tag filter read the group again from the new routes and,
// when it did not have as many members as the targets resolved from the old ones, let
// every target through: the request tagged free was answered by the member tagged paid.
func TestReview29aTagRoutingOpsRoutesSwapped(t *testing.T) {
	hook := &atomic.Pointer[func()]{}
	calls, urls := embeddingUpstreams(t, "paid", "free", "dflt")
	var ps []providers.Provider
	for _, n := range []string{"paid", "free", "dflt"} {
		ps = append(ps, review29aHookedOpenAI{providers.NewOpenAI(providers.Config{Name: n, BaseURL: urls[n], KeyOptional: true}), hook})
	}
	before := ModelGroup{Models: []string{"paid/m", "free/m"}, Tags: [][]string{{"paid"}, {"free"}}, TagFiltering: true}
	after := ModelGroup{Models: []string{"paid/m", "free/m", "dflt/m"}, Tags: [][]string{{"paid"}, {"free"}, {"default"}}, TagFiltering: true}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), ModelGroups: map[string]ModelGroup{"emb": before}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var in EmbeddingInput
	if err := json.Unmarshal([]byte(`"hello"`), &in); err != nil {
		t.Fatal(err)
	}
	swap := func() {
		if err := g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"emb": after}}); err != nil {
			t.Error(err)
		}
	}
	hook.Store(&swap)
	if _, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "emb", Input: in, Tags: []string{"free"}}); err != nil {
		t.Fatal(err)
	}
	if hook.Load() != nil {
		t.Fatal("the routes were not swapped while the request was resolved")
	}
	if p, f := calls["paid"].Load(), calls["free"].Load(); p != 0 || f != 1 {
		t.Errorf("a request tagged free: paid/m called %d times, free/m %d, want only free/m, once", p, f)
	}
}

// TestReview29aTagRoutingUnderSetRoutes: chat (plain, streamed) and embeddings requests
// tagged free, while SetRoutes swaps between two tables whose member tagged free differs in
// place and count, and Deployments reads the members' tags, never reach the member tagged
// paid; run with -race.
func TestReview29aTagRoutingUnderSetRoutes(t *testing.T) {
	calls := map[string]*atomic.Int64{}
	var ps []providers.Provider
	for _, n := range []string{"paid", "free", "dflt"} {
		c := &atomic.Int64{}
		calls[n] = c
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.Add(1)
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/embeddings" {
				fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`)
				return
			}
			var body struct{ Stream bool }
			json.NewDecoder(r.Body).Decode(&body)
			if body.Stream {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", n)
				return
			}
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`, n)
		}))
		t.Cleanup(up.Close)
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: up.URL, KeyOptional: true}))
	}
	tables := []map[string]ModelGroup{
		{"g": {Models: []string{"paid/m", "free/m"}, Tags: [][]string{{"paid"}, {"free"}}, TagFiltering: true, Shuffle: true}},
		{"g": {Models: []string{"free/m", "dflt/m", "paid/m"}, Tags: [][]string{{"free"}, {"default"}, {"paid"}}, TagFiltering: true}},
	}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), ModelGroups: tables[0], DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var in EmbeddingInput
	if err := json.Unmarshal([]byte(`"hello"`), &in); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if err := g.SetRoutes(Routes{ModelGroups: tables[i%2]}); err != nil {
				t.Error(err)
				return
			}
			_ = g.Deployments()
		}
	}()
	const n = 100
	for range n {
		if _, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "g", Input: in, Tags: []string{"free"}}); err != nil {
			t.Fatal(err)
		}
		resp, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"g","tags":["free"],"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil || resp.Text() != "free" {
			t.Fatalf("chat: %v, %v", resp, err)
		}
		st, err := g.Stream(context.Background(), Scope{}, chatRequest(t, `{"model":"g","stream":true,"tags":["free"],"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := st.Recv(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
		}
		st.Close()
	}
	close(done)
	<-swapped
	if p := calls["paid"].Load(); p != 0 {
		t.Errorf("paid/m called %d times by requests tagged free", p)
	}
}
