package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagRoutingEmbeddings: the operations other than chat (here embeddings; audio, images,
// moderation and rerank share opPlan) filter a tag-filtered group's members by the request's
// tags as chat does: a tagged request reaches only its member, an untagged one the default
// member, and tags no member carries all of (match all) are refused with a *TagRoutingError, nothing called.
func TestTagRoutingEmbeddings(t *testing.T) {
	calls, urls := embeddingUpstreams(t, "free", "paid", "dflt")
	var ps []providers.Provider
	for _, n := range []string{"free", "paid", "dflt"} {
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: urls[n], KeyOptional: true}))
	}
	grp := ModelGroup{Models: []string{"free/m", "paid/m", "dflt/m"}, Tags: [][]string{{"free"}, {"paid"}, {"default"}}, TagFiltering: true}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), ModelGroups: map[string]ModelGroup{"emb": grp}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	embed := func(tags ...string) error {
		var in EmbeddingInput
		if err := json.Unmarshal([]byte(`"hello"`), &in); err != nil {
			t.Fatal(err)
		}
		_, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "emb", Input: in, Tags: tags})
		return err
	}
	count := func() map[string]int64 {
		out := map[string]int64{}
		for n, c := range calls {
			out[n] = c.Load()
		}
		return out
	}
	for _, c := range []struct {
		tags []string
		want string
	}{{[]string{"paid"}, "paid"}, {[]string{"free"}, "free"}, {nil, "dflt"}} {
		for range 6 {
			before := count()
			if err := embed(c.tags...); err != nil {
				t.Fatalf("tags %v: %v", c.tags, err)
			}
			after := count()
			for n := range calls {
				want := int64(0)
				if n == c.want {
					want = 1
				}
				if after[n]-before[n] != want {
					t.Fatalf("tags %v: %s called %d times, want %d", c.tags, n, after[n]-before[n], want)
				}
			}
		}
	}

	// Match all: a request tagged free and paid fits no member, and the group has members
	// that know its tags, so it is refused before any call.
	grp.TagMatchAll = true
	if err := g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"emb": grp}}); err != nil {
		t.Fatal(err)
	}
	before := count()
	err = embed("free", "paid")
	var tre *TagRoutingError
	if !errors.As(err, &tre) || tre.Model != "emb" {
		t.Fatalf("err = %v, want a *TagRoutingError for emb", err)
	}
	if after := count(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("calls %v after %v: nothing should have been called", after, before)
	}
}

// embeddingUpstreams starts one scripted OpenAI embeddings upstream per name (one vector,
// two prompt tokens, whatever is asked) and returns how many calls each got and its URL.
func embeddingUpstreams(t *testing.T, names ...string) (calls map[string]*atomic.Int64, urls map[string]string) {
	t.Helper()
	calls, urls = map[string]*atomic.Int64{}, map[string]string{}
	for _, n := range names {
		c := &atomic.Int64{}
		calls[n] = c
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`)
		}))
		t.Cleanup(up.Close)
		urls[n] = up.URL
	}
	return calls, urls
}
