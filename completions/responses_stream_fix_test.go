package completions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// responsesGateway is a gateway over the scripted OpenAI-format upstream ("up").
func responsesGateway(t *testing.T) (*Gateway, *scriptedUpstream) {
	t.Helper()
	up := newScriptedUpstream(t)
	reg := fakeRegistry{"up": providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test"})}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, DefaultMaxRetries: -1, Sleep: (&sleepRecorder{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	return g, up
}

// responsesAsRequest is the Responses request body, decoded, and the gateway's Request it
// converts to, as POST /v1/responses converts it.
func responsesAsRequest(t *testing.T, body string) (*ResponsesRequest, *Request) {
	t.Helper()
	var rreq ResponsesRequest
	if err := json.Unmarshal([]byte(body), &rreq); err != nil {
		t.Fatal(err)
	}
	creq, err := rreq.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := creq.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return &rreq, req
}

// streamResponses sends the Responses request body through g as WriteResponsesStream does
// for POST /v1/responses and returns the events' data, decoded.
func streamResponses(t *testing.T, g *Gateway, body string) []map[string]any {
	t.Helper()
	rreq, req := responsesAsRequest(t, body)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	o := NewResponseObject(rreq, NewResponseID(st.ResponseMessageID()), time.Now())
	if err := WriteResponsesStream(rec, st, o); err != nil {
		t.Fatalf("WriteResponsesStream: %v\n%s", err, rec.Body)
	}
	var evs []map[string]any
	for i, e := range parseSSE(t, rec.Body.String()) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
			t.Fatalf("event %d %q: %v", i, e.data, err)
		}
		if ev["type"] != e.name {
			t.Fatalf("event %d named %q has type %v", i, e.name, ev["type"])
		}
		if ev["sequence_number"] != float64(i) {
			t.Fatalf("event %d has sequence_number %v", i, ev["sequence_number"])
		}
		evs = append(evs, ev)
	}
	return evs
}

// sdkReplay replays events as the official Node SDK's responses.stream() does
// (lib/responses/ResponseAccumulator.ts): output_item.added appends the item at
// output_index == len(output); content_part.added pushes its part into the message item's
// content (which must be an array: "output.content is not iterable" otherwise) at
// content_index == len(content); text and argument deltas are appended to the item at
// output_index; the .done events and output_item.done replace what they carry. It also
// checks what the SDK relies on: deltas name their item's id and come before its
// output_item.done. It returns the accumulated output before response.completed, the
// output built from the deltas alone, and the response of response.completed.
func sdkReplay(t *testing.T, evs []map[string]any) (acc, fromDeltas []map[string]any, completed map[string]any) {
	t.Helper()
	var done []bool
	item := func(ev map[string]any) map[string]any {
		i := int(ev["output_index"].(float64))
		if i < 0 || i >= len(acc) {
			t.Fatalf("%v: missing output at index %d", ev["type"], i)
		}
		if id, ok := ev["item_id"]; ok && id != acc[i]["id"] {
			t.Fatalf("%v: item_id %v names not output[%d] (%v)", ev["type"], id, i, acc[i]["id"])
		}
		return acc[i]
	}
	content := func(it map[string]any) []any {
		c, ok := it["content"].([]any)
		if !ok {
			t.Fatalf("output.content is not iterable: message item %v", it)
		}
		return c
	}
	clone := func(v any) map[string]any {
		b, _ := json.Marshal(v)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	for _, ev := range evs {
		typ := ev["type"].(string)
		if strings.HasSuffix(typ, ".delta") {
			if i := int(ev["output_index"].(float64)); i < len(done) && done[i] {
				t.Fatalf("%s for output %d after its output_item.done", typ, i)
			}
		}
		switch typ {
		case "response.created", "response.in_progress":
			if out := ev["response"].(map[string]any)["output"].([]any); len(out) != 0 {
				t.Fatalf("%s with output %v", typ, out)
			}
		case "response.output_item.added":
			it := ev["item"].(map[string]any)
			if i := int(ev["output_index"].(float64)); i != len(acc) {
				t.Fatalf("output_item.added at %d, want %d", i, len(acc))
			}
			acc, fromDeltas, done = append(acc, clone(it)), append(fromDeltas, clone(it)), append(done, false)
			if it["type"] == "message" {
				content(acc[len(acc)-1])
			}
		case "response.content_part.added":
			it := item(ev)
			c := content(it)
			if ci := int(ev["content_index"].(float64)); ci != len(c) {
				t.Fatalf("content_part.added at %d, want %d", ci, len(c))
			}
			it["content"] = append(c, clone(ev["part"]))
			d := fromDeltas[int(ev["output_index"].(float64))]
			d["content"] = append(d["content"].([]any), clone(ev["part"]))
		case "response.output_text.delta":
			i, ci := int(ev["output_index"].(float64)), int(ev["content_index"].(float64))
			for _, out := range []map[string]any{item(ev), fromDeltas[i]} {
				p := content(out)[ci].(map[string]any)
				p["text"] = p["text"].(string) + ev["delta"].(string)
			}
		case "response.output_text.done":
			content(item(ev))[int(ev["content_index"].(float64))].(map[string]any)["text"] = ev["text"]
		case "response.content_part.done":
			content(item(ev))[int(ev["content_index"].(float64))] = clone(ev["part"])
		case "response.function_call_arguments.delta":
			it := item(ev)
			if it["type"] != "function_call" {
				t.Fatalf("argument delta for a %v item", it["type"])
			}
			d := fromDeltas[int(ev["output_index"].(float64))]
			it["arguments"] = it["arguments"].(string) + ev["delta"].(string)
			d["arguments"] = d["arguments"].(string) + ev["delta"].(string)
		case "response.function_call_arguments.done":
			item(ev)["arguments"] = ev["arguments"]
		case "response.output_item.done":
			i := int(ev["output_index"].(float64))
			item(ev)
			acc[i], done[i] = clone(ev["item"]), true
		case "response.completed", "response.incomplete":
			completed = ev["response"].(map[string]any)
		default:
			t.Fatalf("unexpected event %v", ev)
		}
	}
	if completed == nil {
		t.Fatal("no response.completed")
	}
	for i, d := range done {
		if !d {
			t.Fatalf("output %d without output_item.done", i)
		}
	}
	return acc, fromDeltas, completed
}

// outputText joins the output_text parts of the message items of output.
func outputText(t *testing.T, output []any) string {
	t.Helper()
	var b strings.Builder
	for _, o := range output {
		it := o.(map[string]any)
		if it["type"] != "message" {
			continue
		}
		c, ok := it["content"].([]any)
		if !ok {
			t.Fatalf("message item without a content array: %v", it)
		}
		for _, p := range c {
			b.WriteString(p.(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

func anys(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// keys returns the sorted member names of m.
func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Bug: the message item of response.output_item.added had no "content" (omitempty dropped
// the empty array), and the Node SDK's responses.stream() threw "output.content is not
// iterable" on pushing the content_part.added part into it.
func TestResponsesStreamMessageHasContent(t *testing.T) {
	g, up := responsesGateway(t)
	up.on("m", answer("Paris is the capital of France."))
	evs := streamResponses(t, g, `{"model":"up/m","input":"Capital of France?","stream":true}`)

	var added map[string]any
	for _, ev := range evs {
		if ev["type"] == "response.output_item.added" {
			added = ev["item"].(map[string]any)
			break
		}
	}
	if added == nil {
		t.Fatal("no response.output_item.added")
	}
	if c, ok := added["content"].([]any); !ok || len(c) != 0 {
		t.Fatalf(`output_item.added message has content %#v, want []`, added["content"])
	}
	if got, want := keys(added), []string{"content", "id", "role", "status", "type"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("message item members %v, want %v", got, want)
	}
	if added["type"] != "message" || added["status"] != "in_progress" || added["role"] != "assistant" {
		t.Fatalf("added item %v", added)
	}

	acc, fromDeltas, completed := sdkReplay(t, evs)
	const want = "Paris is the capital of France."
	if got := outputText(t, anys(acc)); got != want {
		t.Fatalf("replayed text %q, want %q", got, want)
	}
	if got := outputText(t, anys(fromDeltas)); got != want {
		t.Fatalf("text from the deltas %q, want %q", got, want)
	}
	if got := outputText(t, completed["output"].([]any)); got != want {
		t.Fatalf("response.completed text %q, want %q", got, want)
	}
	if !reflect.DeepEqual(anys(acc), completed["output"]) {
		t.Fatalf("replayed output %v\n!= completed output %v", acc, completed["output"])
	}
}

// interleavedCalls streams two tool calls as some upstreams do: both headers (index 0 and
// 1, id and name) first, then the argument fragments of the two calls interleaved, one of
// the chunks carrying a fragment of each.
func interleavedCalls(text string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		startStream(w)
		if text != "" {
			writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"role":"assistant","content":%q},"finish_reason":null}]}`, text))
		}
		header := func(i int, id, name string) string {
			return fmt.Sprintf(`{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}`, i, id, name)
		}
		arg := func(i int, piece string) string {
			a, _ := json.Marshal(piece)
			return fmt.Sprintf(`{"index":%d,"function":{"arguments":%s}}`, i, a)
		}
		chunk := func(calls ...string) {
			writeEvent(w, `{"choices":[{"index":0,"delta":{"tool_calls":[`+strings.Join(calls, ",")+`]},"finish_reason":null}]}`)
		}
		chunk(header(0, "call_a", "get_weather"))
		chunk(header(1, "call_b", "get_time"))
		chunk(arg(0, `{"loc`))
		chunk(arg(1, `{"tz"`))
		chunk(arg(0, `ation": "Pa`), arg(1, `: "Europe/`))
		chunk(arg(1, `Paris"}`))
		chunk(arg(0, `ris"}`))
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		writeEvent(w, `{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}`)
		writeEvent(w, "[DONE]")
	}
}

// Bug: with both call headers first and interleaved argument fragments, call 0 got no
// function_call_arguments.delta and its .done events carried "arguments":"".
func TestResponsesStreamInterleavedToolCalls(t *testing.T) {
	want := []struct{ id, name, args string }{
		{"call_a", "get_weather", `{"location": "Paris"}`},
		{"call_b", "get_time", `{"tz": "Europe/Paris"}`},
	}
	for _, text := range []string{"", "Let me check."} {
		t.Run(fmt.Sprintf("text=%q", text), func(t *testing.T) {
			g, up := responsesGateway(t)
			up.on("m", interleavedCalls(text))
			evs := streamResponses(t, g, `{"model":"up/m","input":"Weather and time in Paris?","stream":true,
				"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}},
					{"type":"function","name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}]}`)
			first := 0 // output index of the first call
			if text != "" {
				first = 1
			}

			type perItem struct {
				id                     string
				deltas, argsDone       []string
				added, itemDone        map[string]any
				textDeltas, textDone   string
				addedSeq, closeItemSeq int
			}
			items := map[int]*perItem{}
			get := func(i int) *perItem {
				if items[i] == nil {
					items[i] = &perItem{}
				}
				return items[i]
			}
			for seq, ev := range evs {
				oi, ok := ev["output_index"].(float64)
				if !ok {
					continue
				}
				p := get(int(oi))
				switch ev["type"] {
				case "response.output_item.added":
					p.added, p.addedSeq = ev["item"].(map[string]any), seq
					p.id = p.added["id"].(string)
				case "response.function_call_arguments.delta":
					if ev["item_id"] != p.id {
						t.Fatalf("delta for output %v names item %v, want %s", oi, ev["item_id"], p.id)
					}
					p.deltas = append(p.deltas, ev["delta"].(string))
				case "response.function_call_arguments.done":
					if ev["item_id"] != p.id {
						t.Fatalf("arguments.done for output %v names item %v, want %s", oi, ev["item_id"], p.id)
					}
					p.argsDone = append(p.argsDone, ev["arguments"].(string))
				case "response.output_text.delta":
					p.textDeltas += ev["delta"].(string)
				case "response.output_text.done":
					p.textDone = ev["text"].(string)
				case "response.output_item.done":
					p.itemDone, p.closeItemSeq = ev["item"].(map[string]any), seq
				}
			}
			if len(items) != first+2 {
				t.Fatalf("%d output items, want %d", len(items), first+2)
			}
			if text != "" {
				m := items[0]
				if m.added["type"] != "message" || m.textDeltas != text || m.textDone != text || outputText(t, []any{m.itemDone}) != text {
					t.Fatalf("message item: %+v", m)
				}
				if m.closeItemSeq > items[1].addedSeq {
					t.Fatal("the message is closed after the first call started")
				}
			}
			for k, w := range want {
				p := items[first+k]
				if p.added["type"] != "function_call" || p.added["call_id"] != w.id || p.added["name"] != w.name || p.added["arguments"] != "" || !strings.HasPrefix(p.id, "fc_") || !strings.HasSuffix(p.id, "_"+strconv.Itoa(k)) {
					t.Fatalf("call %d added as %v", k, p.added)
				}
				if got := strings.Join(p.deltas, ""); got != w.args {
					t.Errorf("call %d: deltas %q join to %q, want %q", k, p.deltas, got, w.args)
				}
				if len(p.argsDone) != 1 || p.argsDone[0] != w.args {
					t.Errorf("call %d: function_call_arguments.done %q, want [%q]", k, p.argsDone, w.args)
				}
				if p.itemDone == nil || p.itemDone["arguments"] != w.args || p.itemDone["status"] != "completed" || p.itemDone["call_id"] != w.id {
					t.Errorf("call %d: output_item.done %v, want arguments %q", k, p.itemDone, w.args)
				}
				for _, it := range []map[string]any{p.added, p.itemDone} {
					if got, want := keys(it), []string{"arguments", "call_id", "id", "name", "status", "type"}; !reflect.DeepEqual(got, want) {
						t.Errorf("call %d: function_call item members %v, want %v", k, got, want)
					}
				}
			}

			acc, fromDeltas, completed := sdkReplay(t, evs)
			out := completed["output"].([]any)
			if len(out) != first+2 || !reflect.DeepEqual(anys(acc), out) {
				t.Fatalf("replayed output %v\n!= completed output %v", acc, out)
			}
			for k, w := range want {
				if got := out[first+k].(map[string]any)["arguments"]; got != w.args {
					t.Errorf("response.completed call %d arguments %v, want %q", k, got, w.args)
				}
				if got := fromDeltas[first+k]["arguments"]; got != w.args {
					t.Errorf("call %d arguments from the deltas alone %v, want %q", k, got, w.args)
				}
			}
			if got := outputText(t, out); got != text {
				t.Errorf("response.completed text %q, want %q", got, text)
			}
		})
	}
}

// The output items of a whole (not streamed) response have OpenAI's members: a message
// has content (an empty array when the answer is empty), a function_call has none.
func TestResponseObjectItemMembers(t *testing.T) {
	o := NewResponseObject(&ResponsesRequest{Model: "up/m"}, "resp_1", time.Now())
	o.Complete(&Response{Provider: "up", Model: "m", ResponseMessageID: "1", FinishReason: "tool_calls",
		ToolCalls: []providers.ToolCall{{ID: "call_a", Name: "f", Arguments: `{"a":1}`}}})
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Output []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Output) != 1 || !reflect.DeepEqual(keys(got.Output[0]), []string{"arguments", "call_id", "id", "name", "status", "type"}) {
		t.Fatalf("function_call output %v", got.Output)
	}
	item := ResponseOutputItem{ID: "msg_1", Type: "message", Status: "in_progress", Role: "assistant", Content: []ResponseOutputPart{}}
	if b, _ := json.Marshal(item); string(b) != `{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}` {
		t.Fatalf("message item %s", b)
	}
}
