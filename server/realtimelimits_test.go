package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRealtimeSessionLimits: a WebSocket realtime session with no message either way for
// Config.RealtimeSessionIdleTimeout, or lasting Config.RealtimeSessionMaxDuration, is closed
// by the gateway: the client gets an error event saying which limit, then a 1008 close; the
// upstream is closed with 1008 too; the session is recorded cancelled, its error naming the
// limit, and the key's max_parallel_requests slot it held is free for the next session.
func TestRealtimeSessionLimits(t *testing.T) {
	for name, c := range map[string]struct {
		idle, longest time.Duration
		code, says    string
	}{
		"idle":         {idle: 100 * time.Millisecond, longest: -1, code: "session_idle_timeout", says: "idle limit"},
		"max duration": {idle: time.Hour, longest: 100 * time.Millisecond, code: "session_expired", says: "longest"},
	} {
		t.Run(name, func(t *testing.T) {
			up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
			ups := httptest.NewServer(up)
			t.Cleanup(ups.Close)
			hs, s := callsServerWith(t, Config{RealtimeSessionIdleTimeout: c.idle, RealtimeSessionMaxDuration: c.longest}, map[string]string{"openai": ups.URL + "/v1"}, nil)
			vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_parallel_requests":1}`)
			auth := http.Header{"Authorization": {"Bearer " + vk.Key}}
			conn, resp, err := dialRealtime(t, hs, "model=gpt-realtime", auth)
			if err != nil {
				t.Fatalf("dial: %v (%v)", err, resp)
			}
			defer conn.CloseNow()
			// session.created comes first, unless a loaded machine let the limit pass before
			// the relay handed it on.
			typ, msg := readEvent(t, conn)
			if typ == "session.created" {
				typ, msg = readEvent(t, conn)
			}
			if typ != "error" || !strings.Contains(msg, `"code":"`+c.code+`"`) {
				t.Errorf("at the limit the client got %q %s, want an error event of code %s", typ, msg, c.code)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; i < 3 && err == nil; i++ { // past any event the relay still had in hand
				_, _, err = conn.Read(ctx)
			}
			if code := websocket.CloseStatus(err); code != websocket.StatusPolicyViolation {
				t.Errorf("the client's session ended with %v, want a 1008 close", err)
			}
			<-up.endedCh
			up.mu.Lock()
			if code := websocket.CloseStatus(up.closed[0]); code != websocket.StatusPolicyViolation {
				t.Errorf("the upstream saw %v, want 1008", up.closed[0])
			}
			up.mu.Unlock()
			recs := realtimeRecords(t, s, vk.Key, 1)
			if q := recs[0]; q.Outcome != "cancelled" || !strings.Contains(q.Error, c.says) {
				t.Errorf("the session's record %+v, want cancelled saying %q", q, c.says)
			}
			next, resp, err := dialRealtime(t, hs, "model=gpt-realtime", auth)
			if err != nil {
				t.Fatalf("a session after the limit closed the first: %v (%v; its slot still held?)", err, resp)
			}
			next.Close(websocket.StatusNormalClosure, "")
		})
	}
}
