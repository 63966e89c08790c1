package completions

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// sseSummary reduces an SSE body to its event types (consecutive repeats collapsed) and the
// text of every delta/argument concatenated, ids and times blanked.
func sseSummary(body string) (types []string, content string) {
	var b strings.Builder
	idRe := regexp.MustCompile(`"(id|item_id|created|created_at|latency|ttft|latency_ms|age_seconds|key|cache|response_message_id|ResponseMessageID|input_tokens)":("[^"]*"|[0-9.]+|\{[^}]*\})`)
	for _, block := range strings.Split(body, "\n\n") {
		var ev, data string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			}
		}
		if data == "" {
			continue
		}
		var m map[string]any
		if ev == "" && json.Unmarshal([]byte(data), &m) == nil {
			if t, ok := m["type"].(string); ok {
				ev = t
			} else {
				ev = "data"
			}
		}
		if len(types) == 0 || types[len(types)-1] != ev {
			types = append(types, ev)
		}
		b.WriteString(idRe.ReplaceAllString(data, `"$1":_`))
		b.WriteString("\n")
	}
	return types, b.String()
}

func TestReview12aReplayedStreamsMatchLiveOnes(t *testing.T) {
	call := providers.ToolCall{ID: "toolu_1", Name: "weather", Arguments: `{"city":"Paris"}`}
	thought := []providers.ReasoningBlock{{Text: "The user wants the weather.", Signature: "sig-1"}}
	writers := map[string]func(rec *httptest.ResponseRecorder, st *ResponseStream) error{
		"chat": func(rec *httptest.ResponseRecorder, st *ResponseStream) error {
			return WriteOpenAIStream(rec, st, true)
		},
		"messages": func(rec *httptest.ResponseRecorder, st *ResponseStream) error {
			return WriteAnthropicStream(rec, st, "a/m")
		},
		"native": func(rec *httptest.ResponseRecorder, st *ResponseStream) error { return WriteStream(rec, st) },
		"responses": func(rec *httptest.ResponseRecorder, st *ResponseStream) error {
			return WriteResponsesStream(rec, st, NewResponseObject(&ResponsesRequest{Model: "a/m"}, "resp_1", time.Unix(0, 0)))
		},
	}
	for _, sc := range []struct {
		name string
		s    step
	}{
		{"text", step{text: "It is sunny in Paris today, with a light breeze from the west and no rain expected.", reasoning: thought, usage: providers.Usage{PromptTokens: 40, CompletionTokens: 12}}},
		{"redacted", step{text: "Sunny.", reasoning: []providers.ReasoningBlock{{Redacted: "opaque"}, {Text: "second thought", Signature: "sig-2"}}, usage: providers.Usage{PromptTokens: 40, CompletionTokens: 12}}},
		{"tool", step{call: &call, argPieces: []string{`{"city":`, `"Paris"}`}, reasoning: thought, usage: providers.Usage{PromptTokens: 40, CompletionTokens: 9}}},
	} {
		for name, write := range writers {
			t.Run(sc.name+"/"+name, func(t *testing.T) {
				h := newCacheHarness(t, nil)
				h.a.on("m", sc.s)
				run := func() (string, *Response) {
					req := chat("weather in Paris?", "a/m")
					req.Thinking = &providers.Thinking{Effort: "low"}
					req.Tools = []providers.Tool{{Name: "weather", Parameters: []byte(`{"type":"object"}`)}}
					st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, req)
					if err != nil {
						t.Fatal(err)
					}
					rec := httptest.NewRecorder()
					if err := write(rec, st); err != nil {
						t.Fatal(err)
					}
					h.settle()
					return rec.Body.String(), st.Response()
				}
				live, lr := run()
				replayed, rr := run()
				if rr.Cache == nil || rr.Cache.Result != CacheHit {
					t.Fatalf("second run: %+v, want a hit", rr.Cache)
				}
				lt, _ := sseSummary(live)
				rt, _ := sseSummary(replayed)
				if strings.Join(lt, " ") != strings.Join(rt, " ") {
					t.Errorf("event sequence differs:\nlive:     %v\nreplayed: %v", lt, rt)
				}
				if lr.Usage.PromptTokens != rr.Usage.PromptTokens || lr.Text() != rr.Text() || len(lr.ToolCalls) != len(rr.ToolCalls) || len(lr.Reasoning) != len(rr.Reasoning) {
					t.Errorf("final responses differ: live %+v\nreplayed %+v", lr, rr)
				}
				if name == "messages" {
					// message_start's usage: live from the model (here estimated), replayed? print both.
					li := regexp.MustCompile(`"input_tokens":\d+`).FindAllString(live, -1)
					ri := regexp.MustCompile(`"input_tokens":\d+`).FindAllString(replayed, -1)
					if strings.Join(li, ",") != strings.Join(ri, ",") {
						t.Logf("input_tokens live %v replayed %v", li, ri)
					}
				}
			})
		}
	}
}

// A live Claude stream's message_start carries the prompt's real input tokens (the
// Anthropic adapter's PromptUsageReporter); a replayed hit knows them (the cached usage)
// but its message_start carries a local estimate instead.
func TestReview12aReplayedMessagesStartHasTheCachedInputTokens(t *testing.T) {
	h := newCacheHarness(t, nil)
	h.a.on("m", step{text: "Sunny.", usage: providers.Usage{PromptTokens: 1234, CompletionTokens: 3}})
	run := func() string {
		st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, chat("weather in Paris?", "a/m"))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := WriteAnthropicStream(rec, st, "a/m"); err != nil {
			t.Fatal(err)
		}
		h.settle()
		return rec.Body.String()
	}
	run()
	replayed := run()
	start := regexp.MustCompile(`event: message_start\ndata: .*"input_tokens":(\d+)`).FindStringSubmatch(replayed)
	if start == nil || start[1] != "1234" {
		t.Fatalf("replayed message_start input_tokens = %v, want the cached answer's 1234", start)
	}
}
