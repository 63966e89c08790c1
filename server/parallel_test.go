package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/store"
)

// heldCall is one request the blocking upstream holds: the model it named, whether it is
// streamed, and the channel that lets it finish.
type heldCall struct {
	model   string
	stream  bool
	release chan struct{}
}

// blockingUpstream is a fake OpenAI upstream for tests: each chat request is announced on
// arrived and answered only once its release is closed (a streamed one sends its first
// chunk at once, the rest after its release), so a test knows how many requests are in
// flight without timing anything.
type blockingUpstream struct{ arrived chan heldCall }

func newBlockingUpstream() *blockingUpstream {
	return &blockingUpstream{arrived: make(chan heldCall, 16)}
}

func (u *blockingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	c := heldCall{model: body.Model, stream: body.Stream, release: make(chan struct{})}
	if !body.Stream {
		u.arrived <- c
		select {
		case <-c.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`, body.Model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"first\"},\"finish_reason\":null}]}\n\n", body.Model)
	w.(http.Flusher).Flush()
	u.arrived <- c
	select {
	case <-c.release:
	case <-r.Context().Done():
		return
	}
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\ndata: [DONE]\n\n", body.Model)
}

// next is the next request the upstream holds, failing the test when none comes.
func (u *blockingUpstream) next(t *testing.T) heldCall {
	t.Helper()
	select {
	case c := <-u.arrived:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no request reached the upstream")
		return heldCall{}
	}
}

// chatResult is the outcome of a request sent in the background.
type chatResult struct {
	status int
	header http.Header
	body   string
	err    error
}

// chatInBackground sends a chat request of key for model to hs (streamed with stream) and
// delivers its outcome, its body read to the end, on the channel returned. A streamed
// request's firstEvent is closed once its first event has been read.
func chatInBackground(hs *httptest.Server, key, model string, stream bool) (done chan chatResult, firstEvent chan struct{}) {
	done, firstEvent = make(chan chatResult, 1), make(chan struct{})
	go func() {
		body := fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, model, stream)
		req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- chatResult{err: err}
			return
		}
		defer resp.Body.Close()
		var sb strings.Builder
		br := bufio.NewReader(resp.Body)
		signalled := false
		for {
			line, err := br.ReadString('\n')
			sb.WriteString(line)
			if stream && !signalled && strings.HasPrefix(line, "data: ") {
				close(firstEvent)
				signalled = true
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				done <- chatResult{err: err}
				return
			}
		}
		done <- chatResult{status: resp.StatusCode, header: resp.Header, body: sb.String()}
	}()
	return done, firstEvent
}

// result waits for a background request's outcome.
func result(t *testing.T, done chan chatResult) chatResult {
	t.Helper()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("a request did not end")
		return chatResult{}
	}
}

// waitInFlight waits until unit has n requests in flight on s (a handler's slot is given
// back just after its answer is sent).
func waitInFlight(t *testing.T, s *Server, unit string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.parallel.mu.Lock()
		got := s.parallel.n[unit]
		s.parallel.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d requests in flight, want %d", unit, got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKeyMaxParallelRequests: a key made by /key/generate with max_parallel_requests 2 has
// two requests in flight at once — a streamed one counting until its last event — and a
// third is refused before any upstream call with LiteLLM's 429 (its message, Retry-After,
// rate_limit_type and x-ratelimit-api_key-*-max_parallel_requests headers); once one
// ends another is admitted. /key/info, /key/list and /api/v1/keys show the bound,
// /key/update null removes it and 0 is refused.
func TestKeyMaxParallelRequests(t *testing.T) {
	up := newBlockingUpstream()
	hs, s := keysServerWith(t, nil, up, Config{APIKeys: []string{testKey, completionsOtherKey}})
	r := do(t, s, "POST", "/key/generate", testKey, `{"models":["openai/ok"],"max_parallel_requests":2}`)
	if r.status != 200 || r.body["max_parallel_requests"] != float64(2) {
		t.Fatalf("/key/generate: %d %s", r.status, r.raw)
	}
	key, id := r.body["key"].(string), r.body["token"].(string)
	if info := do(t, s, "GET", "/key/info?key="+id, testKey, ""); !strings.Contains(info.raw, `"max_parallel_requests":2`) {
		t.Errorf("/key/info: %s", info.raw)
	}
	if list := do(t, s, "GET", "/key/list?return_full_object=true", testKey, ""); !strings.Contains(list.raw, `"max_parallel_requests":2`) {
		t.Errorf("/key/list: %s", list.raw)
	}
	if native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+id); native.MaxParallelRequests != 2 {
		t.Errorf("/api/v1/keys: max_parallel_requests %d", native.MaxParallelRequests)
	}

	plain, _ := chatInBackground(hs, key, "openai/ok", false)
	streamed, first := chatInBackground(hs, key, "openai/ok", true)
	c1, c2 := up.next(t), up.next(t)
	<-first
	refused := do(t, s, "POST", "/v1/chat/completions", key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`)
	msg, _ := refused.body["error"].(map[string]any)["message"].(string)
	if refused.status != http.StatusTooManyRequests || !strings.Contains(msg, "Rate limit exceeded for api_key: "+id+". Limit type: max_parallel_requests. Current limit: 2, Remaining: 0.") {
		t.Fatalf("the third request: %d %s", refused.status, refused.raw)
	}
	h := refused.header
	if h.Get("Retry-After") == "" || h.Get("Rate_limit_type") != "max_parallel_requests" ||
		h.Get("X-Ratelimit-Api_key-Limit-Max_parallel_requests") != "2" || h.Get("X-Ratelimit-Api_key-Remaining-Max_parallel_requests") != "0" {
		t.Errorf("the 429's headers: %v", h)
	}
	select {
	case c := <-up.arrived:
		t.Fatalf("the refused request reached the upstream: %+v", c)
	default:
	}
	// The plain request ends; the stream is still open and holds its slot.
	for _, c := range []heldCall{c1, c2} {
		if !c.stream {
			close(c.release)
		}
	}
	if res := result(t, plain); res.status != 200 {
		t.Fatalf("the plain request: %d %s", res.status, res.body)
	}
	waitInFlight(t, s, "key/"+id, 1)
	third, _ := chatInBackground(hs, key, "openai/ok", false)
	c3 := up.next(t)
	if again := do(t, s, "POST", "/v1/chat/completions", key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`); again.status != http.StatusTooManyRequests {
		t.Errorf("with the stream still open and one more: %d %s, want 429", again.status, again.raw)
	}
	for _, c := range []heldCall{c1, c2} {
		if c.stream {
			close(c.release)
		}
	}
	if res := result(t, streamed); res.status != 200 || !strings.Contains(res.body, "[DONE]") {
		t.Fatalf("the stream: %d %s", res.status, res.body)
	}
	close(c3.release)
	result(t, third)
	waitInFlight(t, s, "key/"+id, 0)
	last, _ := chatInBackground(hs, key, "openai/ok", false)
	close(up.next(t).release)
	if res := result(t, last); res.status != 200 || res.header.Get("X-Ratelimit-Api_key-Remaining-Max_parallel_requests") != "1" {
		t.Errorf("a request with none in flight: %d %v %s", res.status, res.header, res.body)
	}

	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+id+`","max_parallel_requests":0}`); r.status != 400 || r.body["error"].(map[string]any)["param"] != "max_parallel_requests" {
		t.Errorf("/key/update max_parallel_requests 0: %d %s, want 400 naming it", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+id+`","max_parallel_requests":null}`); r.status != 200 || r.body["max_parallel_requests"] != nil {
		t.Errorf("/key/update max_parallel_requests null: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+id, testKey, `{"max_parallel_requests":-1}`); r.status != 422 || !strings.Contains(r.raw, "max_parallel_requests") {
		t.Errorf("PATCH max_parallel_requests -1: %d %s", r.status, r.raw)
	}
}

// TestTeamMaxParallelRequests: a team's max_parallel_requests (/team/new) bounds its keys'
// requests in flight together: one key's request held, another key of the team is refused
// with the 429 naming the team, a key of no team is not; /team/info shows the bound and
// /team/update null removes it.
func TestTeamMaxParallelRequests(t *testing.T) {
	up := newBlockingUpstream()
	hs, s := keysServerWith(t, nil, up, Config{APIKeys: []string{testKey, completionsOtherKey}})
	if r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"crew","max_parallel_requests":1}`); r.status != 200 || r.body["max_parallel_requests"] != float64(1) {
		t.Fatalf("/team/new: %d %s", r.status, r.raw)
	}
	a := do(t, s, "POST", "/key/generate", testKey, `{"team_id":"crew"}`)
	b := do(t, s, "POST", "/key/generate", testKey, `{"team_id":"crew"}`)
	alone := do(t, s, "POST", "/key/generate", testKey, `{}`)
	if a.status != 200 || b.status != 200 || alone.status != 200 {
		t.Fatalf("keys: %s %s %s", a.raw, b.raw, alone.raw)
	}
	held, _ := chatInBackground(hs, a.body["key"].(string), "openai/ok", false)
	c := up.next(t)
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
	r := do(t, s, "POST", "/v1/chat/completions", b.body["key"].(string), chat)
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.raw, "Rate limit exceeded for team: crew. Limit type: max_parallel_requests. Current limit: 1") ||
		r.header.Get("X-Ratelimit-Team-Remaining-Max_parallel_requests") != "0" {
		t.Errorf("the team's other key: %d %v %s", r.status, r.header, r.raw)
	}
	free, _ := chatInBackground(hs, alone.body["key"].(string), "openai/ok", false)
	close(up.next(t).release)
	if res := result(t, free); res.status != 200 {
		t.Errorf("a key of no team: %d %s", res.status, res.body)
	}
	close(c.release)
	result(t, held)
	if info := do(t, s, "GET", "/team/info?team_id=crew", testKey, ""); !strings.Contains(info.raw, `"max_parallel_requests":1`) {
		t.Errorf("/team/info: %s", info.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"crew","max_parallel_requests":null}`); r.status != 200 || strings.Contains(r.raw, `"max_parallel_requests":1`) {
		t.Errorf("/team/update null: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"crew","max_parallel_requests":0}`); r.status != 400 {
		t.Errorf("/team/update 0: %d %s, want 400", r.status, r.raw)
	}
}

// TestMaxParallelRequestsSharedByReplicas: two replicas on one store with store.Counters
// hold a key to its max_parallel_requests together once they Sync: a request in flight
// on a refuses the key's next one on b; when it ends (and they Sync) b admits again.
func TestMaxParallelRequestsSharedByReplicas(t *testing.T) {
	st := newTestStore(t)
	ctx := context.Background()
	ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	up := newBlockingUpstream()
	hsa, a := keysServerWith(t, st, up, Config{APIKeys: []string{testKey}, SharedLimits: ca})
	_, b := keysServerWith(t, st, up, Config{APIKeys: []string{testKey}, SharedLimits: cb})
	sync := func() {
		t.Helper()
		for _, c := range []*store.Counters{ca, cb} {
			if err := c.Sync(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	sync()
	vk := issue(t, a, `{"max_parallel_requests":1}`)
	held, _ := chatInBackground(hsa, vk.Key, "openai/ok", false)
	c := up.next(t)
	sync()
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
	if r := do(t, b, "POST", "/v1/chat/completions", vk.Key, chat); r.status != http.StatusTooManyRequests || !strings.Contains(r.raw, "max_parallel_requests") {
		t.Errorf("on b with one in flight on a: %d %s, want 429", r.status, r.raw)
	}
	close(c.release)
	result(t, held)
	waitInFlight(t, a, "key/"+vk.ID, 0)
	sync()
	done, _ := chatInBackground(hsa, vk.Key, "openai/ok", false)
	close(up.next(t).release)
	if res := result(t, done); res.status != 200 {
		t.Errorf("after the first ended: %d %s", res.status, res.body)
	}
	waitInFlight(t, a, "key/"+vk.ID, 0)
	sync()
	// b admits (the blocking upstream holds it; b has no httptest server: in-process).
	go func() { c := <-up.arrived; close(c.release) }()
	if r := do(t, b, "POST", "/v1/chat/completions", vk.Key, chat); r.status != 200 {
		t.Errorf("on b with none in flight: %d %s", r.status, r.raw)
	}
}

// TestRealtimeSessionHoldsAParallelSlot: a /v1/realtime session counts towards its key's
// max_parallel_requests for its whole life: a second session of a key bounded to 1 is
// refused before the upgrade, and admitted once the first has closed.
func TestRealtimeSessionHoldsAParallelSlot(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"models":["openai/gpt-realtime"],"max_parallel_requests":1}`)
	auth := http.Header{"Authorization": {"Bearer " + vk.Key}}
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", auth)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	readEvent(t, c)
	_, resp, err = dialRealtime(t, hs, "model=gpt-realtime", auth)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second session: %v %v, want 429", err, resp)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "Limit type: max_parallel_requests") {
		t.Errorf("the second session's refusal: %s", b)
	}
	c.Close(websocket.StatusNormalClosure, "")
	<-up.endedCh
	waitInFlight(t, s, "key/"+vk.ID, 0)
	c2, resp, err := dialRealtime(t, hs, "model=gpt-realtime", auth)
	if err != nil {
		t.Fatalf("after the first closed: %v (%v)", err, resp)
	}
	c2.Close(websocket.StatusNormalClosure, "")
}

// TestBudgetMaxParallelRequestsOnKeys: a LiteLLM budget's max_parallel_requests
// (/budget/new, /budget/update) becomes the max_parallel_requests of each key naming it by
// budget_id, held on its requests in flight, and follows /budget/update (raised, removed
// with null); the key's own value beside budget_id is refused unless it is the budget's,
// and an end user naming the budget takes its other limits without a bound of its own.
func TestBudgetMaxParallelRequestsOnKeys(t *testing.T) {
	up := newBlockingUpstream()
	hs, s := keysServerWith(t, nil, up, Config{APIKeys: []string{testKey}})
	r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"one-at-a-time","max_parallel_requests":1,"max_budget":5}`)
	if r.status != http.StatusOK || r.body["max_parallel_requests"] != float64(1) {
		t.Fatalf("/budget/new: %d %s", r.status, r.raw)
	}
	k := litellmGenerate(t, s, `{"models":["openai/ok"],"budget_id":"one-at-a-time"}`)
	if info := do(t, s, "GET", "/key/info?key="+k.Token, testKey, ""); !strings.Contains(info.raw, `"max_parallel_requests":1`) {
		t.Fatalf("/key/info of the budget's key: %s", info.raw)
	}
	held, _ := chatInBackground(hs, k.Key, "openai/ok", false)
	c1 := up.next(t)
	refused := do(t, s, "POST", "/v1/chat/completions", k.Key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`)
	if msg, _ := refused.body["error"].(map[string]any)["message"].(string); refused.status != http.StatusTooManyRequests ||
		!strings.Contains(msg, "Limit type: max_parallel_requests. Current limit: 1,") {
		t.Fatalf("a second request of the budget's key: %d %s", refused.status, refused.raw)
	}
	close(c1.release)
	if res := result(t, held); res.status != 200 {
		t.Fatalf("the held request: %d %s", res.status, res.body)
	}
	waitInFlight(t, s, "key/"+k.Token, 0)

	// Raised by /budget/update: the key follows, on its description and on its requests.
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"one-at-a-time","max_parallel_requests":2}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+k.Token); native.MaxParallelRequests != 2 {
		t.Fatalf("/api/v1/keys after /budget/update: max_parallel_requests %d", native.MaxParallelRequests)
	}
	a, _ := chatInBackground(hs, k.Key, "openai/ok", false)
	b, _ := chatInBackground(hs, k.Key, "openai/ok", false)
	ca, cb := up.next(t), up.next(t)
	refused = do(t, s, "POST", "/v1/chat/completions", k.Key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`)
	if msg, _ := refused.body["error"].(map[string]any)["message"].(string); refused.status != http.StatusTooManyRequests || !strings.Contains(msg, "Current limit: 2,") {
		t.Fatalf("a third request after the budget was raised to 2: %d %s", refused.status, refused.raw)
	}
	close(ca.release)
	close(cb.release)
	for _, done := range []chan chatResult{a, b} {
		if res := result(t, done); res.status != 200 {
			t.Fatalf("a held request: %d %s", res.status, res.body)
		}
	}

	// The key's own value beside the budget: refused unless it is the budget's.
	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"budget_id":"one-at-a-time","max_parallel_requests":5}`), http.StatusBadRequest, "max_parallel_requests", "sets it to 2:")
	if r := do(t, s, "POST", "/key/generate", testKey, `{"budget_id":"one-at-a-time","max_parallel_requests":2}`); r.status != http.StatusOK {
		t.Errorf("/key/generate with the budget's own max_parallel_requests: %d %s", r.status, r.raw)
	}
	// An end user takes the budget's other limits; it has no parallel bound to take.
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol","budget_id":"one-at-a-time"}`); r.status != http.StatusOK {
		t.Errorf("/customer/new naming a budget with max_parallel_requests: %d %s", r.status, r.raw)
	}

	// Removed with null: the key is unbounded again.
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"one-at-a-time","max_parallel_requests":null}`); r.status != http.StatusOK || r.body["max_parallel_requests"] != nil {
		t.Fatal(r.status, r.raw)
	}
	if info := do(t, s, "GET", "/key/info?key="+k.Token, testKey, ""); !strings.Contains(info.raw, `"max_parallel_requests":null`) {
		t.Errorf("/key/info after the budget's bound was removed: %s", info.raw)
	}
	if r := do(t, s, "GET", "/budget/settings?budget_id=one-at-a-time", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"field_name":"max_parallel_requests"`) {
		t.Errorf("/budget/settings: %d %s", r.status, r.raw)
	}
}

// TestBackgroundResponseHoldsAParallelSlot: a /v1/responses request with background: true
// is answered at once (queued) but its run goes on calling the model; it holds the key's
// max_parallel_requests slot until that run ends, so a key of max_parallel_requests 1 cannot
// run any number of background responses at once by starting them one after another.
func TestBackgroundResponseHoldsAParallelSlot(t *testing.T) {
	up := newBlockingUpstream()
	hs, s := keysServerWith(t, nil, up, Config{APIKeys: []string{testKey}})
	r := do(t, s, "POST", "/key/generate", testKey, `{"models":["openai/ok"],"max_parallel_requests":1}`)
	if r.status != 200 {
		t.Fatalf("/key/generate: %d %s", r.status, r.raw)
	}
	key, id := r.body["key"].(string), r.body["token"].(string)
	bg := do(t, s, "POST", "/v1/responses", key, `{"model":"openai/ok","input":"hi","background":true}`)
	if bg.status != 200 || bg.body["status"] != "queued" {
		t.Fatalf("background response: %d %s", bg.status, bg.raw)
	}
	c := up.next(t) // its run is calling the model
	waitInFlight(t, s, "key/"+id, 1)
	if again := do(t, s, "POST", "/v1/responses", key, `{"model":"openai/ok","input":"hi","background":true}`); again.status != http.StatusTooManyRequests ||
		!strings.Contains(again.raw, "Limit type: max_parallel_requests") {
		t.Fatalf("a second background response while the first runs: %d %s, want the 429", again.status, again.raw)
	}
	select {
	case c := <-up.arrived:
		t.Fatalf("the refused request reached the upstream: %+v", c)
	default:
	}
	close(c.release)
	waitInFlight(t, s, "key/"+id, 0)
	next, _ := chatInBackground(hs, key, "openai/ok", false)
	close(up.next(t).release)
	if res := result(t, next); res.status != 200 {
		t.Errorf("a request once the run ended: %d %s", res.status, res.body)
	}
	// A background response refused before it starts gives its slot back at once.
	if bad := do(t, s, "POST", "/v1/responses", key, `{"model":"openai/ok2","input":"hi","background":true}`); bad.status < 400 {
		t.Fatalf("a background response of a model the key may not call: %d %s", bad.status, bad.raw)
	}
	waitInFlight(t, s, "key/"+id, 0)
}
