package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// realtimeDoneUsage is the usage of each response.done the scripted realtime upstream
// sends: 100 input tokens (40 text, 60 audio; 20 of the text cached), 50 output tokens (10
// text, 40 audio).
const realtimeDoneUsage = `{"total_tokens":150,"input_tokens":100,"output_tokens":50,` +
	`"input_token_details":{"text_tokens":40,"audio_tokens":60,"cached_tokens":20,"cached_tokens_details":{"text_tokens":20,"audio_tokens":0}},` +
	`"output_token_details":{"text_tokens":10,"audio_tokens":40}}`

// realtimeTranscriptionTokens is the usage of each input audio transcription of a
// token-priced model the scripted realtime upstream reports: 25 audio tokens in, 8 out.
const realtimeTranscriptionTokens = `{"type":"tokens","total_tokens":33,"input_tokens":25,"input_token_details":{"text_tokens":0,"audio_tokens":25},"output_tokens":8}`

// scriptedRealtime is a scripted upstream of OpenAI's Realtime API (a fake for tests): it
// sends session.created, answers response.create with response.created and a response.done
// reporting realtimeDoneUsage, session.update with session.updated (an error event for
// instructions "refuse me"), closes the session with 1000 "bye" on {"type":"close.me"},
// and echoes every other message as {"type":"echo","event":…}. A transcription session
// (?intent=transcription; with a model in the query it refuses the handshake, as OpenAI
// does) starts with a session.created of type transcription, or with OpenAI-Beta a
// transcription_session.created, and answers transcription_session.update with
// transcription_session.updated.
type scriptedRealtime struct {
	mu       sync.Mutex
	dials    []*http.Request
	closed   []error  // how each session ended, as its read saw it
	received []string // the text messages every session got, in order
	endedCh  chan struct{}
}

// got is the text messages the sessions received.
func (u *scriptedRealtime) got() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.received...)
}

func (u *scriptedRealtime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.dials = append(u.dials, r.Clone(context.Background()))
	u.mu.Unlock()
	if r.URL.Path != "/v1/realtime" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"no such route","type":"invalid_request_error","code":"not_found"}}`)
		return
	}
	if r.URL.Query().Get("model") == "gpt-4o-realtime-preview" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Model gpt-4o-realtime-preview is retired.","type":"invalid_request_error","code":"model_not_found"}}`)
		return
	}
	transcription := r.URL.Query().Get("intent") == "transcription"
	if transcription && r.URL.Query().Has("model") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"You must not provide a model parameter for transcription sessions.","type":"invalid_request_error"}}`)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := context.Background()
	switch {
	case transcription && r.Header.Get("OpenAI-Beta") != "":
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"transcription_session.created","event_id":"ev_0","session":{"id":"sess_t","input_audio_transcription":null}}`))
	case transcription:
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"session.created","event_id":"ev_0","session":{"id":"sess_t","type":"transcription","audio":{"input":{"transcription":null}}}}`))
	default:
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"session.created","event_id":"ev_0","session":{"id":"sess_1","model":"gpt-realtime"}}`))
	}
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			u.mu.Lock()
			u.closed = append(u.closed, err)
			u.mu.Unlock()
			if u.endedCh != nil {
				u.endedCh <- struct{}{}
			}
			return
		}
		if typ == websocket.MessageText {
			u.mu.Lock()
			u.received = append(u.received, string(msg))
			u.mu.Unlock()
		}
		var ev struct {
			Type string `json:"type"`
		}
		json.Unmarshal(msg, &ev)
		switch ev.Type {
		case "response.create":
			c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}`))
			c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.done","event_id":"ev_9","response":{"id":"resp_1","status":"completed","usage":`+realtimeDoneUsage+`}}`))
		case "close.me":
			c.Close(websocket.StatusNormalClosure, "bye")
			return
		case "input_audio_buffer.commit":
			// The input audio's transcription: whisper-1's usage by duration when the commit's
			// event_id says "whisper", else a token-priced model's.
			usage := realtimeTranscriptionTokens
			if strings.Contains(string(msg), `"whisper"`) {
				usage = `{"type":"duration","seconds":3}`
			}
			c.Write(ctx, websocket.MessageText, []byte(`{"type":"input_audio_buffer.committed","item_id":"item_1"}`))
			c.Write(ctx, websocket.MessageText, []byte(`{"type":"conversation.item.input_audio_transcription.completed","event_id":"ev_t","item_id":"item_1","content_index":0,"transcript":"the session. said hi","usage":`+usage+`}`))
		case "session.update", "transcription_session.update":
			// The session as configured: the update's fields over the model's session.
			var upd struct {
				Session map[string]any `json:"session"`
			}
			json.Unmarshal(msg, &upd)
			if upd.Session["instructions"] == "refuse me" {
				c.Write(ctx, websocket.MessageText, []byte(`{"type":"error","event_id":"ev_e","error":{"type":"invalid_request_error","message":"Invalid session configuration."}}`))
				continue
			}
			sess := map[string]any{"id": "sess_1", "model": "gpt-realtime"}
			if transcription {
				sess = map[string]any{"id": "sess_t"}
			}
			for k, v := range upd.Session {
				sess[k] = v
			}
			b, _ := json.Marshal(map[string]any{"type": strings.TrimSuffix(ev.Type, "update") + "updated", "event_id": "ev_u", "session": sess})
			c.Write(ctx, websocket.MessageText, b)
		default:
			if typ == websocket.MessageBinary {
				c.Write(ctx, websocket.MessageBinary, msg)
				continue
			}
			c.Write(ctx, websocket.MessageText, []byte(`{"type":"echo","event":`+string(msg)+`}`))
		}
	}
}

func (u *scriptedRealtime) dialCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.dials)
}

func (u *scriptedRealtime) lastDial() *http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dials[len(u.dials)-1]
}

// realtimeServer is a server whose gateway's openai provider is a scriptedRealtime.
func realtimeServer(t *testing.T) (*httptest.Server, *Server, *scriptedRealtime) {
	t.Helper()
	up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	hs, s := passThroughServerOver(t, reg)
	return hs, s, up
}

// dialRealtime opens a realtime session through hs as OpenAI's SDKs do.
func dialRealtime(t *testing.T, hs *httptest.Server, query string, header http.Header, protocols ...string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/v1/realtime?"+query, &websocket.DialOptions{HTTPHeader: header, Subprotocols: protocols})
}

// readEvent reads the next text message of c and its type.
func readEvent(t *testing.T, c *websocket.Conn) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	var ev struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		t.Fatalf("not an event: %s", msg)
	}
	return ev.Type, string(msg)
}

func send(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("writing: %v", err)
	}
}

// realtimeRecords waits until n requests are recorded for key and returns them.
func realtimeRecords(t *testing.T, s *Server, key string, n int) []usagelog.Request {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := do(t, s, "GET", "/api/v1/usage/requests", key, "")
		var usage struct {
			Data []usagelog.Request `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.raw), &usage); err != nil || r.status != 200 {
			t.Fatalf("usage: %d %s", r.status, r.raw)
		}
		if len(usage.Data) >= n || time.Now().After(deadline) {
			if len(usage.Data) != n {
				t.Fatalf("%d requests recorded, want %d: %s", len(usage.Data), n, r.raw)
			}
			return usage.Data
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// realtimeResponseCost is the catalogue's price of one scripted response.done.
func realtimeResponseCost() float64 {
	u := providers.RealtimeUsage{InputTokens: 100, OutputTokens: 50, InputTextTokens: 40, InputAudioTokens: 60, CachedTokens: 20,
		CachedTextTokens: 20, OutputTextTokens: 10, OutputAudioTokens: 40}
	return providers.DefaultCatalog().RealtimeCost("openai/gpt-realtime", u).TotalUSD
}

// TestRealtimeRelaysAndBills: a realtime session through /v1/realtime reaches the upstream
// with the server's credential (none of the caller's, no OpenAI-Beta when the client sent
// none), relays messages both ways unchanged (text and binary), bills each response.done's
// usage to the virtual key as it arrives (text and audio tokens at their catalogue rates),
// and is recorded once, when the client closes it, with the usage summed; the upstream sees
// the client's close.
func TestRealtimeRelaysAndBills(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_budget_usd":5}`)
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + vk.Key}}, "realtime")
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "realtime" {
		t.Errorf("subprotocol %q, want realtime", c.Subprotocol())
	}
	if typ, _ := readEvent(t, c); typ != "session.created" {
		t.Fatalf("first event %q", typ)
	}
	d := up.lastDial()
	if d.URL.Path != "/v1/realtime" || d.URL.Query().Get("model") != "gpt-realtime" {
		t.Errorf("upstream dialled %s", d.URL)
	}
	if got := d.Header.Get("Authorization"); got != "Bearer server-openai-key" {
		t.Errorf("upstream Authorization %q, want the server's key", got)
	}
	if got := d.Header.Get("OpenAI-Beta"); got != "" {
		t.Errorf("upstream OpenAI-Beta %q without the client's", got)
	}
	for k, vs := range d.Header {
		for _, v := range vs {
			if strings.Contains(v, vk.Key) {
				t.Errorf("the caller's key reached the upstream in %s", k)
			}
		}
	}
	item := `{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi é"}]}}`
	send(t, c, item)
	if typ, msg := readEvent(t, c); typ != "echo" || msg != `{"type":"echo","event":`+item+`}` {
		t.Errorf("echo %q %s", typ, msg)
	}
	if err := c.Write(context.Background(), websocket.MessageBinary, []byte{0, 1, 2, 255}); err != nil {
		t.Fatal(err)
	}
	if typ, msg, err := c.Read(context.Background()); err != nil || typ != websocket.MessageBinary || string(msg) != string([]byte{0, 1, 2, 255}) {
		t.Errorf("binary echo %v %v %v", typ, msg, err)
	}
	cost := realtimeResponseCost()
	if cost <= 0 {
		t.Fatal("the catalogue does not price openai/gpt-realtime")
	}
	for i := 1; i <= 2; i++ {
		send(t, c, `{"type":"response.create"}`)
		if typ, _ := readEvent(t, c); typ != "response.created" {
			t.Fatalf("response %d: %q", i, typ)
		}
		typ, msg := readEvent(t, c)
		if typ != "response.done" || !strings.Contains(msg, realtimeDoneUsage) {
			t.Fatalf("response %d: %q %s", i, typ, msg)
		}
		// Billed as it arrived, before it was handed on.
		info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
		if math.Abs(info.Spend.CostUSD-float64(i)*cost) > 1e-12 {
			t.Errorf("after response %d: key spend %v, want %v", i, info.Spend.CostUSD, float64(i)*cost)
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
		t.Errorf("closing: %v", err)
	}
	<-up.endedCh
	up.mu.Lock()
	if code := websocket.CloseStatus(up.closed[0]); code != websocket.StatusNormalClosure {
		t.Errorf("upstream saw %v, want the client's 1000", up.closed[0])
	}
	up.mu.Unlock()
	recs := realtimeRecords(t, s, vk.Key, 1)
	q := recs[0]
	if q.Operation != completions.OperationRealtime || q.Outcome != "ok" || q.Model != "openai/gpt-realtime" || q.PromptTokens != 200 || q.CompletionTokens != 100 ||
		!q.PriceKnown || math.Abs(q.CostUSD-2*cost) > 1e-12 {
		t.Errorf("recorded %+v, want 200+100 tokens at %v", q, 2*cost)
	}
}

// TestRealtimeBrowserSubprotocol: a browser's client, which cannot set headers, offers its
// key as the subprotocol openai-insecure-api-key.<key> and the beta protocol as
// openai-beta.realtime-v1: it is authenticated, the realtime subprotocol is selected, the
// upstream gets OpenAI-Beta: realtime=v1 and never the key; LiteLLM's /realtime alias
// serves it too.
func TestRealtimeBrowserSubprotocol(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"browser","models":["openai/gpt-realtime"]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/realtime?model=openai/gpt-realtime",
		&websocket.DialOptions{Subprotocols: []string{"realtime", "openai-insecure-api-key." + vk.Key, "openai-beta.realtime-v1"}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "realtime" {
		t.Errorf("subprotocol %q, want realtime", c.Subprotocol())
	}
	if typ, _ := readEvent(t, c); typ != "session.created" {
		t.Fatalf("first event %q", typ)
	}
	d := up.lastDial()
	if got := d.Header.Get("OpenAI-Beta"); got != "realtime=v1" {
		t.Errorf("upstream OpenAI-Beta %q, want realtime=v1", got)
	}
	for k, vs := range d.Header {
		for _, v := range vs {
			if strings.Contains(v, vk.Key) {
				t.Errorf("the caller's key reached the upstream in %s", k)
			}
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// TestRealtimeRefusals: a wrong key, a model outside the key's list, a spent budget, a
// model with no realtime API, a request that is not a WebSocket and the upstream's refusal
// of the model are answered with an HTTP error in OpenAI's envelope before any upgrade, the
// gateway's own refusals before the upstream is dialled.
func TestRealtimeRefusals(t *testing.T) {
	hs, s, up := realtimeServer(t)
	narrow := issue(t, s, `{"name":"narrow","models":["openai/gpt-4o-mini"]}`)
	spent := issue(t, s, `{"name":"spent","models":["openai/gpt-realtime"],"max_budget_usd":0.0000001}`)
	// The spent key's first session goes (nothing spent yet) and is billed past its budget.
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + spent.Key}})
	if err != nil {
		t.Fatalf("first session of the budget key: %v (%v)", err, resp)
	}
	readEvent(t, c)
	send(t, c, `{"type":"response.create"}`)
	readEvent(t, c)
	readEvent(t, c)
	c.Close(websocket.StatusNormalClosure, "")
	<-up.endedCh
	cases := []struct {
		name, query, key string
		status           int
		want             string
		dials            bool
	}{
		{"wrong key", "model=gpt-realtime", "sy-nope", 401, `"invalid_request_error"`, false},
		{"model not allowed", "model=gpt-realtime", narrow.Key, 401, `"key_model_access_denied"`, false},
		{"budget spent", "model=gpt-realtime", spent.Key, 429, `budget`, false},
		{"no model", "", testKey, 400, `"param":"model"`, false},
		{"not a realtime provider", "model=nobody/gpt-realtime", testKey, 400, `unknown provider`, false},
		{"upstream refuses the model", "model=gpt-4o-realtime-preview", testKey, 400, `is retired`, true},
	}
	for _, c := range cases {
		before := up.dialCount()
		conn, resp, err := dialRealtime(t, hs, c.query, http.Header{"Authorization": {"Bearer " + c.key}})
		if err == nil {
			conn.CloseNow()
			t.Errorf("%s: upgraded", c.name)
			continue
		}
		var b []byte
		if resp != nil && resp.Body != nil {
			b, _ = io.ReadAll(resp.Body)
		}
		if resp == nil || resp.StatusCode != c.status || !strings.Contains(string(b), c.want) || !strings.Contains(string(b), `"error":{`) {
			st := 0
			if resp != nil {
				st = resp.StatusCode
			}
			t.Errorf("%s: %d %s, want %d with %s", c.name, st, b, c.status, c.want)
		}
		if dialled := up.dialCount() != before; dialled != c.dials {
			t.Errorf("%s: upstream dialled %v, want %v", c.name, dialled, c.dials)
		}
	}
	// A plain GET, not a WebSocket upgrade.
	r := do(t, s, "GET", "/v1/realtime?model=gpt-realtime", testKey, "")
	if r.status != http.StatusUpgradeRequired || !strings.Contains(r.raw, "WebSocket") {
		t.Errorf("plain GET: %d %s", r.status, r.raw)
	}
}

// TestRealtimeUpstreamCloses: the upstream closing the session hands its close code and
// reason to the client, and the session is recorded as ended normally.
func TestRealtimeUpstreamCloses(t *testing.T) {
	hs, s, _ := realtimeServer(t)
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	readEvent(t, c)
	send(t, c, `{"type":"close.me"}`)
	_, _, err = c.Read(context.Background())
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || ce.Reason != "bye" {
		t.Fatalf("client read %v, want the upstream's 1000 bye", err)
	}
	recs := realtimeRecords(t, s, testKey, 1)
	if recs[0].Operation != completions.OperationRealtime || recs[0].Outcome != "ok" {
		t.Errorf("recorded %+v", recs[0])
	}
}

// TestRealtimeShutdown: the server's shutdown closes an open session on both sides with
// 1001 (going away), records it cut (the server ended it, not its client) with what it was
// billed, and refuses new sessions with a 503.
func TestRealtimeShutdown(t *testing.T) {
	hs, s, up := realtimeServer(t)
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	readEvent(t, c)
	send(t, c, `{"type":"response.create"}`)
	readEvent(t, c)
	readEvent(t, c)
	go s.CloseRealtimeSessions()
	_, _, err = c.Read(context.Background())
	if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
		t.Fatalf("client read %v, want 1001", err)
	}
	<-up.endedCh
	up.mu.Lock()
	if code := websocket.CloseStatus(up.closed[0]); code != websocket.StatusGoingAway {
		t.Errorf("upstream saw %v, want 1001", up.closed[0])
	}
	up.mu.Unlock()
	recs := realtimeRecords(t, s, testKey, 1)
	if recs[0].Outcome != usagelog.OutcomeCut || recs[0].PromptTokens != 100 || recs[0].CostUSD <= 0 {
		t.Errorf("recorded %+v", recs[0])
	}
	_, resp, err = dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a session opened after the shutdown: %v %v", err, resp)
	}
}

// TestRealtimeModelGroup: a model group of realtime models opens its session with the
// first member whose provider accepts the handshake; the record names the member that
// served it, after the refused one's attempt.
func TestRealtimeModelGroup(t *testing.T) {
	up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}),
		providers.NewOpenAI(providers.Config{Name: "elsewhere", BaseURL: ups.URL + "/gone", APIKey: "other-key"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec,
		ModelGroups: map[string]completions.ModelGroup{"voice": {Models: []string{"elsewhere/gpt-realtime", "openai/gpt-realtime"}}}})
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
	c, resp, err := dialRealtime(t, hs, "model=voice", http.Header{"Authorization": {"Bearer " + testKey}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if typ, _ := readEvent(t, c); typ != "session.created" {
		t.Fatalf("first event %q", typ)
	}
	if d := up.lastDial(); d.URL.Path != "/v1/realtime" || d.Header.Get("Authorization") != "Bearer server-openai-key" {
		t.Errorf("dialled %s with %q", d.URL, d.Header.Get("Authorization"))
	}
	c.Close(websocket.StatusNormalClosure, "")
	recs := realtimeRecords(t, s, testKey, 1)
	if q := recs[0]; q.Model != "openai/gpt-realtime" || len(q.Attempts) != 2 || q.Attempts[0].Outcome != "error" || q.Outcome != "ok" {
		t.Errorf("recorded %+v", q)
	}
}

// TestRealtimeClientGoesAway: a client whose connection drops without a close frame has
// its upstream session closed with 1001 (going away), and the session is recorded as
// cancelled with what its responses were billed.
func TestRealtimeClientGoesAway(t *testing.T) {
	hs, s, up := realtimeServer(t)
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	readEvent(t, c)
	send(t, c, `{"type":"response.create"}`)
	readEvent(t, c)
	readEvent(t, c)
	c.CloseNow() // no close frame
	<-up.endedCh
	up.mu.Lock()
	var ce websocket.CloseError
	if !errors.As(up.closed[0], &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "the client went away" {
		t.Errorf("upstream saw %v, want 1001", up.closed[0])
	}
	up.mu.Unlock()
	recs := realtimeRecords(t, s, testKey, 1)
	if q := recs[0]; q.Outcome != "cancelled" || q.PromptTokens != 100 || q.CompletionTokens != 50 || q.CostUSD <= 0 {
		t.Errorf("recorded %+v", q)
	}
}
