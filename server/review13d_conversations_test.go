package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// review13dCountingDriver counts the conversation items the store hands out.
type review13dCountingDriver struct {
	store.Driver
	itemsRead atomic.Int64
}

func (d *review13dCountingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.OpenAIConversationItems {
		d.itemsRead.Add(1)
	}
	return d.Driver.Get(ctx, c, key)
}

func (d *review13dCountingDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	es, err := d.Driver.List(ctx, c, opts)
	if c == store.OpenAIConversationItems {
		d.itemsRead.Add(int64(len(es)))
	}
	return es, err
}

// review13dServer is a completions server on st whose upstream is up (an OpenAI chat
// completions endpoint, model "up/<any>").
func review13dServer(t *testing.T, st *store.Store, up http.Handler) *httptest.Server {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

func review13dCreate(t *testing.T, hs *httptest.Server, body string) string {
	t.Helper()
	resp, b := do2(t, "POST", hs.URL+"/v1/conversations", testKey, body, nil)
	var c struct{ ID string }
	if err := json.Unmarshal(b, &c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	return c.ID
}

// TestReview13dConcurrentResponsesOnOneConversation: while a /v1/responses request on a
// conversation is being answered, OpenAI refuses a second one on it (400, param
// conversation, code conversation_locked: "Another process is currently operating on this
// conversation"). The gateway answers both from the same items and appends both: the
// second answer was made without the first turn, yet the conversation now lists it after
// that turn, as if it had seen it.
func TestReview13dConcurrentResponsesOnOneConversation(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var seen [][]map[string]string
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []map[string]string `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen = append(seen, body.Messages)
		first := len(seen) == 1
		mu.Unlock()
		if first {
			close(arrived)
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"answer %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, len(body.Messages))
	})
	hs := review13dServer(t, newTestStore(t), up)
	conv := review13dCreate(t, hs, `{"items":[{"type":"message","role":"user","content":"start"}]}`)

	done := make(chan int)
	go func() {
		resp, _ := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/m","conversation":"`+conv+`","input":"A"}`, nil)
		done <- resp.StatusCode
	}()
	<-arrived
	resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/m","conversation":"`+conv+`","input":"B"}`, nil)
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
			texts = append(texts, it.Content.Parts[0].Text)
		}
		t.Errorf("a second response on a conversation being answered was answered (the model got %d messages, without turn A) and appended: the conversation reads %q", len(seen[1]), texts)
	} else if e := wantOpenAIError(t, "second response", resp, b, 400, "invalid_request_error", "conversation_locked"); e.Param == nil || *e.Param != "conversation" {
		t.Errorf("param %v", e.Param)
	}
}

// TestReview13dConversationItemPagingWithADuplicateID: a conversation may hold two items
// of one id (a client resending an item it got back); paging with after=<that id> then
// restarts from the first copy, and a client following last_id (OpenAI's SDKs'
// ConversationCursorPage) pages forever.
func TestReview13dConversationItemPagingWithADuplicateID(t *testing.T) {
	hs := review13dServer(t, newTestStore(t), http.NotFoundHandler())
	conv := review13dCreate(t, hs, `{"items":[
		{"type":"message","id":"msg_a","role":"user","content":"a"},
		{"type":"message","id":"msg_b","role":"user","content":"b"}]}`)
	resp, b := do2(t, "POST", hs.URL+"/v1/conversations/"+conv+"/items", testKey, `{"items":[
		{"type":"message","id":"msg_a","role":"user","content":"a"},
		{"type":"message","id":"msg_c","role":"user","content":"c"}]}`, nil)
	if resp.StatusCode != 200 {
		return // refused: fine
	}
	_ = b
	var ids []string
	after := ""
	for range 12 {
		q := "?order=asc&limit=1"
		if after != "" {
			q += "&after=" + after
		}
		_, b := do2(t, "GET", hs.URL+"/v1/conversations/"+conv+"/items"+q, testKey, "", nil)
		var p responseItemList
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("page: %s", b)
		}
		for _, it := range p.Data {
			ids = append(ids, it.ID)
		}
		if !p.HasMore || p.LastID == nil {
			return
		}
		after = *p.LastID
	}
	t.Errorf("paging a 4-item conversation by last_id did not end after 12 pages: %v", ids)
}

// TestReview13dConversationItemReadsCostTheWholeConversation: listing one item of a long
// conversation (limit=1, as the Agents SDK's pop_item and get_items(limit) do), reading one
// item and deleting one each read every item of the conversation from the store — with
// no bound (the history bound applies only to /v1/responses, and POST items never checks
// it), so a conversation grown by POST items makes each of these requests read all of it.
func TestReview13dConversationItemReadsCostTheWholeConversation(t *testing.T) {
	d := &review13dCountingDriver{Driver: newTestDriver(t)}
	hs := review13dServer(t, store.New(d), http.NotFoundHandler())
	conv := review13dCreate(t, hs, `{}`)
	var last string
	for range 30 { // 600 items
		items := strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"x"},`, 20), ",")
		resp, b := do2(t, "POST", hs.URL+"/v1/conversations/"+conv+"/items", testKey, `{"items":[`+items+`]}`, nil)
		var p responseItemList
		if err := json.Unmarshal(b, &p); err != nil || resp.StatusCode != 200 {
			t.Fatalf("add: %d %s", resp.StatusCode, b)
		}
		last = *p.LastID
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/items?limit=1"},
		{"GET", "/items/" + last},
		{"DELETE", "/items/" + last},
	} {
		d.itemsRead.Store(0)
		resp, b := do2(t, c.method, hs.URL+"/v1/conversations/"+conv+c.path, testKey, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, resp.StatusCode, b)
		}
		if n := d.itemsRead.Load(); n > 50 {
			t.Errorf("%s %s on a 600-item conversation read %d items from the store", c.method, c.path, n)
		}
	}
}

// TestReview13dConversationWireShapes: OpenAI's update takes metadata as required (the
// route's schema says so too), yet a body without it is answered 200 and wipes the
// conversation's metadata; and the items listed lack status, which OpenAI's item types
// carry ("completed") on every message returned by the API.
func TestReview13dConversationWireShapes(t *testing.T) {
	hs := review13dServer(t, newTestStore(t), http.NotFoundHandler())
	conv := review13dCreate(t, hs, `{"metadata":{"topic":"names"},"items":[{"role":"user","content":"x"}]}`)
	t.Run("update without metadata", func(t *testing.T) {
		resp, b := do2(t, "POST", hs.URL+"/v1/conversations/"+conv, testKey, `{}`, nil)
		_, got := do2(t, "GET", hs.URL+"/v1/conversations/"+conv, testKey, "", nil)
		if resp.StatusCode == 200 || !strings.Contains(string(got), `"topic":"names"`) {
			t.Errorf("POST /v1/conversations/{id} with {}: %d %s; the conversation now reads %s", resp.StatusCode, b, got)
		}
	})
	t.Run("item status", func(t *testing.T) {
		_, b := do2(t, "GET", hs.URL+"/v1/conversations/"+conv+"/items", testKey, "", nil)
		if !strings.Contains(string(b), `"status":"completed"`) {
			t.Errorf("items list without status: %s", b)
		}
	})
}
