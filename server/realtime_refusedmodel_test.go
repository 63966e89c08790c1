package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestRealtimeRefusalRecordsModelAsked: a realtime session refused before the WebSocket
// upgrade — a model the key may not call, a bad intent, a client secret used with the
// wrong protocol — is recorded with the model the client asked for (its ?model=, else its
// client secret's, a call's session's) as its model_group, as the gateway's own refusals
// are, not with none.
func TestRealtimeRefusalRecordsModelAsked(t *testing.T) {
	hs, s, _ := realtimeServer(t)
	narrow := issue(t, s, `{"name":"narrow","models":["openai/gpt-4o-mini"]}`)
	for _, q := range []string{"model=gpt-realtime", "intent=bogus&model=gpt-realtime-mini"} {
		if conn, resp, err := dialRealtime(t, hs, q, http.Header{"Authorization": {"Bearer " + narrow.Key}}); err == nil {
			conn.CloseNow()
			t.Fatalf("%s: upgraded", q)
		} else if resp == nil || resp.StatusCode/100 != 4 {
			t.Fatalf("%s: %v %v, want a 4xx", q, err, resp)
		}
	}
	groups := func(recs []usagelog.Request) []string {
		var out []string
		for _, r := range recs {
			if r.Operation != completions.OperationRealtime || r.Outcome != completions.RequestFailed {
				t.Errorf("record %+v: want a failed realtime request", r)
			}
			out = append(out, r.ModelGroup)
		}
		slices.Sort(out)
		return out
	}
	if got := groups(realtimeRecords(t, s, narrow.Key, 2)); !slices.Equal(got, []string{"gpt-realtime", "gpt-realtime-mini"}) {
		t.Errorf("refused sessions recorded with model_group %q, want the models asked", got)
	}

	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"]}`)
	sec, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime","instructions":"Be brief."}}`)
	if r.status != http.StatusOK {
		t.Fatalf("mint: %d %s", r.status, r.raw)
	}
	// A GA secret's configuration over the beta protocol: refused, no model in the query.
	if conn, resp, err := dialRealtime(t, hs, "", http.Header{"Authorization": {"Bearer " + sec.Value}, "Openai-Beta": {"realtime=v1"}}); err == nil {
		conn.CloseNow()
		t.Fatal("a GA secret over the beta protocol: upgraded")
	} else if resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a GA secret over the beta protocol: %v %v, want 400", err, resp)
	}
	if got := groups(realtimeRecords(t, s, vk.Key, 1)); !slices.Equal(got, []string{"gpt-realtime"}) {
		t.Errorf("a refused session of a client secret recorded with model_group %q, want the secret's gpt-realtime", got)
	}

	// A WebRTC call (POST /v1/realtime/calls) of a model the key may not call.
	chs, cs, _ := callsServer(t)
	narrowCalls := issue(t, cs, `{"name":"narrow","models":["openai/gpt-4o-mini"]}`)
	if resp, body := placeCall(t, chs, narrowCalls.Key, "", "v=0", `{"type":"realtime","model":"gpt-realtime"}`); resp.StatusCode/100 != 4 {
		t.Fatalf("a call of a model not allowed: %d %s, want a 4xx", resp.StatusCode, body)
	}
	if got := groups(realtimeRecords(t, cs, narrowCalls.Key, 1)); !slices.Equal(got, []string{"gpt-realtime"}) {
		t.Errorf("a refused call recorded with model_group %q, want gpt-realtime", got)
	}
}
