package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// scriptedCalls is a scripted upstream of OpenAI's realtime calls (a fake for tests): POST
// /v1/realtime/calls answers 201 with an SDP answer and Location /v1/realtime/calls/rtc_N;
// GET /v1/realtime?call_id=rtc_N is the call's sideband, which sends a response.done
// reporting realtimeDoneUsage and then waits: end(id) closes it as a call hung up by the
// browser does (1000), and POST …/rtc_N/hangup records the hang-up and closes it too.
// refuseSideband makes the sideband's handshake fail; refuseStatus (with refuseBody) refuses
// every offer, after counting it; noLocation answers an offer 201 without a Location.
type scriptedCalls struct {
	mu             sync.Mutex
	offers         []string          // the SDP offers received
	sessions       []json.RawMessage // their session fields
	auth           []string          // the Authorization of each request
	hungUp         []string
	sides          map[string]chan struct{}
	refuseSideband bool
	closeCode      websocket.StatusCode // how the sideband closes when its call ends (0: 1000)
	refuseStatus   int
	refuseBody     string
	noLocation     bool
	absLocation    bool // Location is an absolute URL with a query
	n              int
}

func (u *scriptedCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.auth = append(u.auth, r.Header.Get("Authorization"))
	if u.sides == nil {
		u.sides = map[string]chan struct{}{}
	}
	u.mu.Unlock()
	switch {
	case r.Method == "POST" && r.URL.Path == "/v1/realtime/calls":
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		u.mu.Lock()
		u.n++
		id := "rtc_" + string(rune('0'+u.n))
		u.offers = append(u.offers, r.FormValue("sdp"))
		u.sessions = append(u.sessions, json.RawMessage(r.FormValue("session")))
		refuse, body, noLocation, abs := u.refuseStatus, u.refuseBody, u.noLocation, u.absLocation
		if refuse == 0 {
			u.sides[id] = make(chan struct{})
		}
		u.mu.Unlock()
		if refuse != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(refuse)
			io.WriteString(w, body)
			return
		}
		switch {
		case abs:
			w.Header().Set("Location", "https://api.openai.example/v1/realtime/calls/"+id+"?trace=1")
		case !noLocation:
			w.Header().Set("Location", "/v1/realtime/calls/"+id)
		}
		w.Header().Set("Content-Type", "application/sdp")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "v=0 answer for "+id)
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/hangup"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/realtime/calls/"), "/hangup")
		u.mu.Lock()
		u.hungUp = append(u.hungUp, id)
		_, live := u.sides[id]
		u.mu.Unlock()
		if !live { // over, or never placed: OpenAI's 404
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"call not found","type":"invalid_request_error"}}`)
			return
		}
		u.end(id)
		w.WriteHeader(http.StatusOK)
	case r.URL.Path == "/v1/realtime" && r.URL.Query().Get("call_id") != "":
		u.mu.Lock()
		refuse, done := u.refuseSideband, u.sides[r.URL.Query().Get("call_id")]
		u.mu.Unlock()
		if refuse || done == nil {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"no such call","type":"invalid_request_error"}}`)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.done","event_id":"ev_9","response":{"id":"resp_1","status":"completed","usage":`+realtimeDoneUsage+`}}`))
		<-done
		u.mu.Lock()
		code := u.closeCode
		u.mu.Unlock()
		if code == 0 {
			code = websocket.StatusNormalClosure
		}
		c.Close(code, "call ended")
	default:
		http.NotFound(w, r)
	}
}

// end ends the call id (its sideband closes).
func (u *scriptedCalls) end(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if ch, ok := u.sides[id]; ok {
		close(ch)
		delete(u.sides, id)
	}
}

func (u *scriptedCalls) hangUps() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.hungUp...)
}

// callsServer is a server whose openai provider is a scriptedCalls.
func callsServer(t *testing.T) (*httptest.Server, *Server, *scriptedCalls) {
	t.Helper()
	up := &scriptedCalls{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	hs, s := passThroughServerOver(t, reg)
	return hs, s, up
}

// callsFake starts a scriptedCalls and returns it with its base URL (…/v1).
func callsFake(t *testing.T) (*scriptedCalls, string) {
	t.Helper()
	up := &scriptedCalls{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	return up, ups.URL + "/v1"
}

// callsServerWith is a server with cfg (its Store new when nil) over provs, an OpenAI
// adapter each (name -> base URL), and groups.
func callsServerWith(t *testing.T, cfg Config, provs map[string]string, groups map[string]completions.ModelGroup) (*httptest.Server, *Server) {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = newTestStore(t)
	}
	var ps []providers.Provider
	for name, base := range provs {
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: name, BaseURL: base, APIKey: "server-" + name + "-key"}))
	}
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(ps...), Prices: providers.DefaultCatalog(),
		Store: cfg.Store, Observer: rec, ModelGroups: groups})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, cfg, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}

// hangUpCall POSTs a hang-up of the call id to hs with key and returns its status.
func hangUpCall(t *testing.T, hs *httptest.Server, key, id string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", hs.URL+"/v1/realtime/calls/"+id+"/hangup", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// placeCall POSTs an offer to /v1/realtime/calls with key: raw SDP when session is "",
// else a multipart form of sdp and session.
func placeCall(t *testing.T, hs *httptest.Server, key, query, sdp, session string) (*http.Response, string) {
	t.Helper()
	var body bytes.Buffer
	ctype := "application/sdp"
	if session == "" {
		body.WriteString(sdp)
	} else {
		mw := multipart.NewWriter(&body)
		mw.WriteField("sdp", sdp)
		mw.WriteField("session", session)
		mw.Close()
		ctype = mw.FormDataContentType()
	}
	req, _ := http.NewRequest("POST", hs.URL+"/v1/realtime/calls?"+query, &body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestRealtimeCallWebRTC: a browser's SDP offer with a client secret (the raw SDP body) goes
// upstream with the server's credential and the secret's session configuration and model;
// the provider's answer comes back (201, Location naming the call); the gateway watches the
// call's sideband, bills its response.done to the minting key and records the call once
// when the provider ends it. A key's multipart offer works alike.
func TestRealtimeCallWebRTC(t *testing.T) {
	hs, s, up := callsServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_budget_usd":5}`)
	sec, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime","instructions":"Be brief."}}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	resp, body := placeCall(t, hs, sec.Value, "", "v=0 offer", "")
	if resp.StatusCode != http.StatusCreated || body != "v=0 answer for rtc_1" || resp.Header.Get("Location") != "/v1/realtime/calls/rtc_1" || resp.Header.Get("Content-Type") != "application/sdp" {
		t.Fatalf("call: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	up.mu.Lock()
	var sess map[string]any
	json.Unmarshal(up.sessions[0], &sess)
	offer, auth := up.offers[0], up.auth[0]
	up.mu.Unlock()
	if offer != "v=0 offer" || auth != "Bearer server-openai-key" || sess["model"] != "gpt-realtime" || sess["type"] != "realtime" || sess["instructions"] != "Be brief." {
		t.Errorf("upstream got offer %q, auth %q, session %v", offer, auth, sess)
	}
	up.end("rtc_1") // the browser hangs up
	recs := realtimeRecords(t, s, vk.Key, 1)
	if cost := realtimeResponseCost(); recs[0].CostUSD != cost || recs[0].Outcome != "ok" {
		t.Errorf("the call's record %+v, want one response at %v, ok", recs[0], cost)
	}
	if h := up.hangUps(); len(h) != 0 {
		t.Errorf("hung up %v: a call the provider ended needs none", h)
	}

	// A key's own offer, multipart with its session.
	resp, body = placeCall(t, hs, vk.Key, "", "v=0 offer 2", `{"type":"realtime","model":"gpt-realtime"}`)
	if resp.StatusCode != http.StatusCreated || !strings.Contains(body, "rtc_2") {
		t.Fatalf("multipart call: %d %s", resp.StatusCode, body)
	}
	// The server shutting down hangs up the calls it watches.
	s.CloseRealtimeSessions()
	waitFor(t, func() bool { return len(up.hangUps()) == 1 })
	if h := up.hangUps(); h[0] != "rtc_2" {
		t.Errorf("hung up %v, want rtc_2", h)
	}
	// The call the shutdown hung up is recorded cut (the server ended it), not cancelled.
	outcomes := map[string]bool{}
	for _, q := range realtimeRecords(t, s, vk.Key, 2) {
		outcomes[q.Outcome] = true
	}
	if !outcomes["ok"] || !outcomes[usagelog.OutcomeCut] {
		t.Errorf("the calls' outcomes %v, want ok and cut", outcomes)
	}
}

// TestRealtimeCallRefusals: no offer, no model, a model outside the key's, a secret for
// another model: refused before the provider; a sideband that does not open hangs the call
// up (502), nothing recorded as answered.
func TestRealtimeCallRefusals(t *testing.T) {
	hs, s, up := callsServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"]}`)
	for name, c := range map[string]struct {
		key, query, sdp, session string
		status                   int
		param                    string
	}{
		"no offer":           {vk.Key, "model=gpt-realtime", "  ", "", 400, "sdp"},
		"no model":           {vk.Key, "", "v=0", "", 400, "session.model"},
		"model not allowed":  {vk.Key, "model=gpt-realtime-mini", "v=0", "", 401, ""},
		"transcription type": {vk.Key, "", "v=0", `{"type":"transcription","model":"gpt-realtime"}`, 400, "session.type"},
	} {
		resp, body := placeCall(t, hs, c.key, c.query, c.sdp, c.session)
		if resp.StatusCode != c.status || (c.param != "" && !strings.Contains(body, `"param":"`+c.param+`"`)) {
			t.Errorf("%s: %d %s, want %d naming %q", name, resp.StatusCode, body, c.status, c.param)
		}
	}
	sec, _ := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime"}}`)
	if resp, body := placeCall(t, hs, sec.Value, "model=gpt-realtime-mini", "v=0", ""); resp.StatusCode != 400 {
		t.Errorf("a secret with another model: %d %s", resp.StatusCode, body)
	}
	if n := len(up.offers); n != 0 {
		t.Fatalf("%d offers reached the provider, want none", n)
	}
	up.mu.Lock()
	up.refuseSideband = true
	up.mu.Unlock()
	resp, body := placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", "")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "hung up") {
		t.Errorf("an unwatchable call: %d %s, want 502", resp.StatusCode, body)
	}
	if h := up.hangUps(); len(h) != 1 {
		t.Errorf("hang-ups %v, want the unwatchable call hung up", h)
	}
}

// TestRealtimeCallSidebandGoingAway: a sideband the provider closes going away (1001, a
// restart) or without a code has not said the call is over, so the call is hung up rather
// than left to run unwatched and unbilled; one closed normally (1000) is not.
func TestRealtimeCallSidebandGoingAway(t *testing.T) {
	hs, s, up := callsServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"]}`)
	up.mu.Lock()
	up.closeCode = websocket.StatusGoingAway
	up.mu.Unlock()
	if resp, body := placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", ""); resp.StatusCode != http.StatusCreated {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}
	up.end("rtc_1") // the sideband goes away
	recs := realtimeRecords(t, s, vk.Key, 1)
	if h := up.hangUps(); len(h) != 1 || h[0] != "rtc_1" {
		t.Errorf("hang-ups %v, want rtc_1: a sideband gone away leaves the call unwatched", h)
	}
	if recs[0].Outcome != "ok" {
		t.Errorf("the call's record %+v, want ok", recs[0])
	}
}

// TestRealtimeCallHangUp: the key that placed a call (here through its client secret) hangs
// it up through the gateway (OpenAI's POST /v1/realtime/calls/{id}/hangup): the call is
// ended at the provider and recorded ok; the hang-up takes no max_parallel_requests slot
// (the call holds the key's only one); another key, or an unknown call, gets a 404.
func TestRealtimeCallHangUp(t *testing.T) {
	hs, s, up := callsServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_parallel_requests":1}`)
	other := issue(t, s, `{"name":"other","models":["openai/gpt-realtime"]}`)
	sec, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime"}}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	resp, body := placeCall(t, hs, sec.Value, "", "v=0 offer", "")
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}
	hangUp := func(key, id string) int {
		req, _ := http.NewRequest("POST", hs.URL+"/v1/realtime/calls/"+id+"/hangup", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := hangUp(other.Key, "rtc_1"); st != http.StatusNotFound {
		t.Errorf("another key's hang-up: %d, want 404", st)
	}
	if st := hangUp(vk.Key, "rtc_9"); st != http.StatusNotFound {
		t.Errorf("an unknown call: %d, want 404", st)
	}
	if n := len(up.hangUps()); n != 0 {
		t.Fatalf("%d hang-ups reached the provider, want none yet", n)
	}
	if st := hangUp(sec.Value, "rtc_1"); st != http.StatusOK {
		t.Fatalf("the caller's hang-up (with its secret): %d, want 200", st)
	}
	waitFor(t, func() bool { return len(up.hangUps()) == 1 })
	recs := realtimeRecords(t, s, vk.Key, 1)
	if recs[0].Outcome != "ok" {
		t.Errorf("the hung-up call's record %+v, want ok", recs[0])
	}
	// The key's slot is back: another call goes through.
	if resp, body := placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", ""); resp.StatusCode != http.StatusCreated {
		t.Errorf("a call after the hang-up: %d %s", resp.StatusCode, body)
	}
}

// TestRealtimeCallIdleAndMaxDuration: a call whose sideband stays silent past
// RealtimeCallIdleTimeout, or that lasts RealtimeCallMaxDuration, is hung up by the gateway
// and recorded cancelled saying which limit; the key's max_parallel_requests slot it held is
// free again.
func TestRealtimeCallIdleAndMaxDuration(t *testing.T) {
	for name, c := range map[string]struct {
		idle, longest time.Duration
		says          string
	}{
		"idle":         {idle: 50 * time.Millisecond, longest: -1, says: "silent"},
		"max duration": {idle: time.Hour, longest: 50 * time.Millisecond, says: "longest"},
	} {
		t.Run(name, func(t *testing.T) {
			up, base := callsFake(t)
			hs, s := callsServerWith(t, Config{RealtimeCallIdleTimeout: c.idle, RealtimeCallMaxDuration: c.longest}, map[string]string{"openai": base}, nil)
			vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_parallel_requests":1}`)
			if resp, body := placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", ""); resp.StatusCode != http.StatusCreated {
				t.Fatalf("call: %d %s", resp.StatusCode, body)
			}
			waitFor(t, func() bool { return len(up.hangUps()) == 1 })
			recs := realtimeRecords(t, s, vk.Key, 1)
			if q := recs[0]; q.Outcome != "cancelled" || !strings.Contains(q.Error, c.says) || q.CostUSD != realtimeResponseCost() {
				t.Errorf("the call's record %+v, want cancelled saying %q with its response billed", q, c.says)
			}
			if resp, body := placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", ""); resp.StatusCode != http.StatusCreated {
				t.Errorf("a call after the limit hung the first up: %d %s (its slot still held?)", resp.StatusCode, body)
			}
		})
	}
}

// TestRealtimeCallHangUpAcrossReplicas: two servers on one store; a call placed through
// one (with a client secret) is hung up through the other by the key that minted the
// secret, or by the secret itself: that replica hangs it up at the provider with the
// gateway's credential and the watching replica records the call ok when its sideband
// closes. Another key, or a call over, is a 404 on either replica; so is a call whose
// record its replica left behind (deleted once the provider says it is over) or expired.
func TestRealtimeCallHangUpAcrossReplicas(t *testing.T) {
	up, base := callsFake(t)
	st := newTestStore(t)
	provs := map[string]string{"openai": base}
	hsA, a := callsServerWith(t, Config{Store: st}, provs, nil)
	hsB, _ := callsServerWith(t, Config{Store: st}, provs, nil)
	vk := issue(t, a, `{"name":"voice","models":["openai/gpt-realtime"]}`)
	other := issue(t, a, `{"name":"other","models":["openai/gpt-realtime"]}`)
	sec, r := mintSecret(t, a, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime"}}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	var credential string // the key's, as the store records who placed a call
	for i, hangWith := range []string{vk.Key, sec.Value} {
		id := "rtc_" + string(rune('1'+i))
		if resp, body := placeCall(t, hsA, sec.Value, "", "v=0", ""); resp.StatusCode != http.StatusCreated || !strings.Contains(body, id) {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
		if i == 0 {
			rec, err := store.GetJSON[realtimeCallRecord](context.Background(), st, store.RealtimeCalls, id)
			if err != nil || rec.Model != "openai/gpt-realtime" || rec.ExpiresAt.IsZero() {
				t.Fatalf("the call's record %+v (%v)", rec, err)
			}
			credential = rec.Credential
		}
		if code := hangUpCall(t, hsB, other.Key, id); code != http.StatusNotFound {
			t.Errorf("another key's hang-up at the other replica: %d, want 404", code)
		}
		if n := len(up.hangUps()); n != i {
			t.Fatalf("%d hang-ups reached the provider, want %d", n, i)
		}
		if code := hangUpCall(t, hsB, hangWith, id); code != http.StatusOK {
			t.Fatalf("the caller's hang-up at the other replica: %d, want 200", code)
		}
		if h := up.hangUps(); len(h) != i+1 || h[i] != id {
			t.Fatalf("hang-ups %v, want %s", h, id)
		}
		recs := realtimeRecords(t, a, vk.Key, i+1)
		if recs[0].Outcome != "ok" {
			t.Errorf("the call's record at the watching replica %+v, want ok", recs[0])
		}
		waitFor(t, func() bool {
			_, err := st.Get(context.Background(), store.RealtimeCalls, id)
			return errors.Is(err, store.ErrNotFound)
		})
		if code := hangUpCall(t, hsB, vk.Key, id); code != http.StatusNotFound {
			t.Errorf("hanging up a call over: %d, want 404", code)
		}
	}
	if code := hangUpCall(t, hsA, vk.Key, "rtc_9"); code != http.StatusNotFound {
		t.Errorf("an unknown call: %d, want 404", code)
	}

	// A record its replica left behind (gone without deleting it): a call the provider no
	// longer has is a 404 and its record deleted; one expired is a 404 without asking.
	ctx := context.Background()
	put := func(id string, expires time.Time) {
		rec := realtimeCallRecord{Credential: credential, Model: "openai/gpt-realtime", Started: time.Now(), ExpiresAt: expires}
		if err := store.PutJSON(ctx, st, store.RealtimeCalls, id, rec); err != nil {
			t.Fatal(err)
		}
	}
	put("rtc_left", time.Now().Add(time.Hour))
	put("rtc_expired", time.Now().Add(-time.Minute))
	before := len(up.hangUps())
	if code := hangUpCall(t, hsB, vk.Key, "rtc_left"); code != http.StatusNotFound {
		t.Errorf("a call left behind, over at the provider: %d, want 404", code)
	}
	if _, err := st.Get(ctx, store.RealtimeCalls, "rtc_left"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the record of a call over is still there (%v)", err)
	}
	if code := hangUpCall(t, hsB, vk.Key, "rtc_expired"); code != http.StatusNotFound {
		t.Errorf("an expired record: %d, want 404", code)
	}
	if n := len(up.hangUps()) - before; n != 1 {
		t.Errorf("%d hang-ups reached the provider, want 1 (none for the expired record)", n)
	}
}

// TestRealtimeCallWithoutLocation: a provider answering an offer 2xx without a Location
// naming the call leaves a call that could be neither watched nor hung up: it is the
// provider's error (502), nothing hung up, and the key's slot is free again. An absolute
// Location with a query names its call as well.
func TestRealtimeCallWithoutLocation(t *testing.T) {
	up, base := callsFake(t)
	hs, s := callsServerWith(t, Config{}, map[string]string{"openai": base}, nil)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_parallel_requests":1}`)
	up.mu.Lock()
	up.noLocation = true
	up.mu.Unlock()
	resp, body := placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", "")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "Location") || resp.Header.Get("Location") != "" {
		t.Fatalf("an answer without Location: %d %s %v, want 502", resp.StatusCode, body, resp.Header)
	}
	if h := up.hangUps(); len(h) != 0 {
		t.Errorf("hang-ups %v, want none", h)
	}
	if recs := realtimeRecords(t, s, vk.Key, 1); recs[0].Outcome != "error" {
		t.Errorf("recorded %+v, want an error", recs[0])
	}
	up.mu.Lock()
	up.noLocation, up.absLocation = false, true
	up.mu.Unlock()
	resp, body = placeCall(t, hs, vk.Key, "model=gpt-realtime", "v=0", "")
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != "/v1/realtime/calls/rtc_2" {
		t.Fatalf("the next call: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if code := hangUpCall(t, hs, vk.Key, "rtc_2"); code != http.StatusOK {
		t.Errorf("hanging it up: %d", code)
	}
	waitFor(t, func() bool { return len(up.hangUps()) == 1 })
}

// TestRealtimeCallGroupOfferRefusal: a model group's member refusing the offer itself (a
// 400 about the SDP, or a session field) is answered to the client (400 naming the field)
// without trying the next member, who would refuse it too; a member failing for its own
// reasons (5xx, 429, its model unknown, its credential refused) passes the offer on.
func TestRealtimeCallGroupOfferRefusal(t *testing.T) {
	first, firstBase := callsFake(t)
	second, secondBase := callsFake(t)
	hs, _ := callsServerWith(t, Config{}, map[string]string{"first": firstBase, "openai": secondBase},
		map[string]completions.ModelGroup{"voice": {Models: []string{"first/gpt-realtime", "openai/gpt-realtime"}}})
	offers := func(u *scriptedCalls) int {
		u.mu.Lock()
		defer u.mu.Unlock()
		return len(u.offers)
	}
	for name, c := range map[string]struct {
		status   int
		body     string
		fallOver bool
		param    string
	}{
		"invalid offer":     {400, `{"error":{"message":"Invalid SDP offer. Please try again with a WHIP-compliant offer.","type":"invalid_request_error","param":null,"code":"invalid_offer"}}`, false, "sdp"},
		"unparsable SDP":    {400, `{"error":{"message":"Failed to parse offer: failed to unmarshal SDP: EOF","type":"invalid_request_error"}}`, false, "sdp"},
		"session field":     {400, `{"error":{"message":"Invalid value: 'robot'.","type":"invalid_request_error","param":"session.audio.output.voice","code":"invalid_value"}}`, false, "session.audio.output.voice"},
		"overloaded":        {503, `{"error":{"message":"overloaded","type":"server_error"}}`, true, ""},
		"rate limited":      {429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, true, ""},
		"model not found":   {404, `{"error":{"message":"no such model","type":"invalid_request_error","code":"model_not_found"}}`, true, ""},
		"model not allowed": {400, `{"error":{"message":"Invalid model","type":"invalid_request_error","param":"session.model","code":"invalid_value"}}`, true, ""},
		"credential":        {401, `{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, true, ""},
	} {
		first.mu.Lock()
		first.refuseStatus, first.refuseBody = c.status, c.body
		first.mu.Unlock()
		before, beforeFirst := offers(second), offers(first)
		resp, body := placeCall(t, hs, testKey, "model=voice", "v=0", "")
		if offers(first) != beforeFirst+1 {
			t.Fatalf("%s: the first member got no offer", name)
		}
		passed := offers(second) - before
		if c.fallOver {
			if resp.StatusCode != http.StatusCreated || passed != 1 {
				t.Errorf("%s: %d %s, %d offers passed on; want 201 from the next member", name, resp.StatusCode, body, passed)
			}
			continue
		}
		if resp.StatusCode != http.StatusBadRequest || passed != 0 || !strings.Contains(body, `"param":"`+c.param+`"`) {
			t.Errorf("%s: %d %s, %d offers passed on; want 400 naming %s and none passed on", name, resp.StatusCode, body, passed, c.param)
		}
	}
}
