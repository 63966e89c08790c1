package completions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// sequentialCalls streams two tool calls as OpenAI does: call 0's header and argument
// fragments, then call 1's.
func sequentialCalls() behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		startStream(w)
		call := func(i int, id, name string, frags ...string) {
			writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"finish_reason":null}]}`, i, id, name))
			for _, f := range frags {
				a, _ := json.Marshal(f)
				writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]},"finish_reason":null}]}`, i, a))
			}
		}
		call(0, "call_a", "get_weather", `{"loc`, `ation": "Pa`, `ris"}`)
		call(1, "call_b", "get_time", `{"tz"`, `: "Europe/`, `Paris"}`)
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		writeEvent(w, "[DONE]")
	}
}

// callLifecycle checks that evs send each function call whole before the next one starts,
// as OpenAI does: output_item.added, function_call_arguments.delta..., .done and
// output_item.done, with no event of another item between them, and returns each call's
// deltas by output index.
func callLifecycle(t *testing.T, evs []map[string]any) map[int][]string {
	t.Helper()
	deltas := map[int][]string{}
	open := -1 // the output index of the open call
	for seq, ev := range evs {
		typ := ev["type"].(string)
		oi, hasIndex := ev["output_index"].(float64)
		if open >= 0 && (!hasIndex || int(oi) != open) {
			t.Fatalf("event %d (%s, output_index %v) while call %d is open", seq, typ, ev["output_index"], open)
		}
		switch typ {
		case "response.output_item.added":
			if ev["item"].(map[string]any)["type"] == "function_call" {
				open = int(oi)
			}
		case "response.function_call_arguments.delta":
			deltas[int(oi)] = append(deltas[int(oi)], ev["delta"].(string))
		case "response.output_item.done":
			open = -1
		}
	}
	if open >= 0 {
		t.Fatalf("call %d never closed", open)
	}
	return deltas
}

// Parallel function calls stream one after the other whether the upstream sends them in
// turn or interleaves their fragments; the first call's fragments are sent as they came
// (never buffered), the SDK's accumulation matches response.completed.
func TestResponsesStreamParallelCallsInTurn(t *testing.T) {
	want := []string{`{"location": "Paris"}`, `{"tz": "Europe/Paris"}`}
	for _, tc := range []struct {
		name     string
		upstream behaviour
		// the deltas of each call: an interleaving upstream has call 1's held back and
		// sent as one delta once call 0 is whole
		deltas [][]string
	}{
		{"in turn", sequentialCalls(), [][]string{{`{"loc`, `ation": "Pa`, `ris"}`}, {`{"tz"`, `: "Europe/`, `Paris"}`}}},
		{"interleaved", interleavedCalls(""), [][]string{{`{"loc`, `ation": "Pa`, `ris"}`}, {`{"tz": "Europe/Paris"}`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, up := responsesGateway(t)
			up.on("m", tc.upstream)
			evs := streamResponses(t, g, `{"model":"up/m","input":"Weather and time in Paris?","stream":true,
				"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}},
					{"type":"function","name":"get_time","parameters":{"type":"object"}}]}`)
			deltas := callLifecycle(t, evs)
			for k, w := range tc.deltas {
				if got := deltas[k]; strings.Join(got, "|") != strings.Join(w, "|") {
					t.Errorf("call %d deltas %q, want %q", k, got, w)
				}
			}
			acc, _, completed := sdkReplay(t, evs)
			out := completed["output"].([]any)
			if len(out) != 2 || len(acc) != 2 {
				t.Fatalf("output %v, accumulated %v", out, acc)
			}
			for k, w := range want {
				if got := out[k].(map[string]any)["arguments"]; got != w {
					t.Errorf("response.completed call %d arguments %v, want %q", k, got, w)
				}
				if got := acc[k]["arguments"]; got != w {
					t.Errorf("accumulated call %d arguments %v, want %q", k, got, w)
				}
			}
		})
	}
}

// eventWriter is a ResponseWriter that hands each flushed write to the test.
type eventWriter struct {
	header http.Header
	mu     sync.Mutex
	buf    strings.Builder
	wrote  chan struct{}
}

func (w *eventWriter) Header() http.Header { return w.header }
func (w *eventWriter) WriteHeader(int)     {}
func (w *eventWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}
func (w *eventWriter) Flush() {
	select {
	case w.wrote <- struct{}{}:
	default:
	}
}
func (w *eventWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// The open call's deltas are sent as they arrive while another call's fragments wait: the
// upstream interleaves two calls and then stalls until the client has call 0's first delta.
func TestResponsesStreamInterleavedFirstCallNotHeldBack(t *testing.T) {
	g, up := responsesGateway(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseUpstream := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseUpstream() // a failed test must not leave the upstream's handler waiting
	up.on("m", func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		startStream(w)
		chunk := func(call string) {
			writeEvent(w, `{"choices":[{"index":0,"delta":{"tool_calls":[`+call+`]},"finish_reason":null}]}`)
		}
		chunk(`{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}`)
		chunk(`{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\""}}`)
		chunk(`{"index":0,"function":{"arguments":"{\"loc"}}`)
		<-release
		chunk(`{"index":1,"function":{"arguments":": \"UTC\"}"}}`)
		chunk(`{"index":0,"function":{"arguments":"ation\": \"Paris\"}"}}`)
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		writeEvent(w, "[DONE]")
	})
	rreq, req := responsesAsRequest(t, `{"model":"up/m","input":"x","stream":true,"tools":[{"type":"function","name":"get_weather"},{"type":"function","name":"get_time"}]}`)
	// A bound on a test that would otherwise hang, not a measured timing.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	w := &eventWriter{header: http.Header{}, wrote: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		done <- WriteResponsesStream(w, st, NewResponseObject(rreq, NewResponseID(st.ResponseMessageID()), time.Now()))
	}()
	// The upstream waits for release: call 0's first delta must come without it (a writer
	// holding it back would never send it, and the stream would fail at ctx's deadline).
	for !strings.Contains(w.String(), `"delta":"{\"loc"`) {
		select {
		case <-w.wrote:
		case err := <-done:
			t.Fatalf("stream ended before call 0's delta: %v\n%s", err, w.String())
		}
	}
	if s := w.String(); strings.Contains(s, `"call_b"`) {
		t.Fatalf("call 1 opened while call 0 is incomplete:\n%s", s)
	}
	releaseUpstream()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var evs []map[string]any
	for _, e := range parseSSE(t, w.String()) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	callLifecycle(t, evs)
	acc, _, completed := sdkReplay(t, evs)
	out := completed["output"].([]any)
	for k, want := range []string{`{"location": "Paris"}`, `{"tz": "UTC"}`} {
		if got := out[k].(map[string]any)["arguments"]; got != want || acc[k]["arguments"] != want {
			t.Errorf("call %d arguments %v (accumulated %v), want %q", k, got, acc[k]["arguments"], want)
		}
	}
}
