package completions

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/openai/openai-go/responses"
)

// Bug: the Responses stream's "error" event (a stream failing after it started) had no
// param, which OpenAI's ResponseErrorEvent (openai-go v1.12.0 responses/response.go,
// ResponseErrorEvent: code, message, param, sequence_number, type) requires; param is null
// when the error names no request field.
func TestResponsesStreamErrorEventHasParam(t *testing.T) {
	g, up := responsesGateway(t)
	up.on("m", malformedAfter("one two three four", 2))
	rreq, req := responsesAsRequest(t, `{"model":"up/m","input":"Count.","stream":true}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	o := NewResponseObject(rreq, NewResponseID(st.ResponseMessageID()), time.Now())
	if err := WriteResponsesStream(rec, st, o); err == nil {
		t.Fatalf("the stream did not fail:\n%s", rec.Body)
	}
	var raw string
	for _, e := range parseSSE(t, rec.Body.String()) {
		if e.name == "error" {
			raw = e.data
		}
	}
	if raw == "" {
		t.Fatalf("no error event:\n%s", rec.Body)
	}
	var members map[string]any
	if err := json.Unmarshal([]byte(raw), &members); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(members), []string{"code", "message", "param", "sequence_number", "type"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("error event members %v, want %v: %s", got, want, raw)
	}
	if members["param"] != nil || members["code"] != "stream_failed" || members["message"] == "" {
		t.Fatalf("error event %s", raw)
	}
	var ev responses.ResponseErrorEvent
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.JSON.Param.Raw() != "null" || !ev.JSON.Code.Valid() || !ev.JSON.SequenceNumber.Valid() || len(ev.JSON.ExtraFields) != 0 {
		t.Fatalf("openai-go reads param %q code %v sequence_number %v extra %v", ev.JSON.Param.Raw(), ev.JSON.Code.Valid(), ev.JSON.SequenceNumber.Valid(), ev.JSON.ExtraFields)
	}
	// No other event carries param.
	for _, e := range parseSSE(t, rec.Body.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(e.data), &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m["param"]; has && e.name != "error" {
			t.Errorf("%s event has param: %s", e.name, e.data)
		}
	}
}
