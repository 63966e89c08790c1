package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// faultAnswer is what every scripted model answers, word by word.
const faultAnswer = "Paris is the capital of France."

// faultUpstream is a scripted OpenAI-format server: the model name picks the fault.
//
//	ok      answers properly            cut     2 words, then a TCP reset
//	stall   2 words, then silence       nodone  whole answer, finish and usage, no [DONE]
//	junk    one undecodable event        silent  no response at all
//	      without text mid-answer       cont    continues an assistant prefix (prefix: true)
//	refuse  400 to everything
//	huge    a non-streamed answer announcing one byte more than the 32 MiB an answer may be
type faultUpstream struct {
	mu    sync.Mutex
	calls map[string]int
}

func (u *faultUpstream) count(model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[model]
}

func (u *faultUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
			Prefix  bool   `json:"prefix"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.calls[body.Model]++
	u.mu.Unlock()
	words := strings.SplitAfter(faultAnswer, " ")
	event := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	text := func(s string) {
		b, _ := json.Marshal(s)
		event(fmt.Sprintf(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%s}}]}`, b))
	}
	end := func(n int, done bool) {
		event(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		event(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":%d}}`, n))
		if done {
			event("[DONE]")
		}
	}
	switch body.Model {
	case "silent":
		<-r.Context().Done()
		return
	case "refuse":
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"assistant prefill is not supported","type":"invalid_request_error"}}`)
		return
	case "huge":
		// Generated as it is sent (spaces, which JSON allows before its value), from one
		// small buffer; the gateway refuses it from its Content-Length and hangs up.
		const size = 32<<20 + 1
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		pad := []byte(strings.Repeat(" ", 64<<10))
		for left := size; left > 0; left -= len(pad) {
			if _, err := w.Write(pad[:min(len(pad), left)]); err != nil {
				return
			}
		}
		return
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":6}}`, faultAnswer)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	switch body.Model {
	case "ok", "nodone", "junk":
		for i, s := range words {
			if body.Model == "junk" && i == 3 {
				event(`{"id":"c","object":"chat.completion.chu`)
			}
			text(s)
		}
		end(len(words), body.Model != "nodone")
	case "cut", "stall":
		text(words[0])
		text(words[1])
		if body.Model == "stall" {
			<-r.Context().Done()
			return
		}
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	case "cont":
		last := body.Messages[len(body.Messages)-1]
		rest, ok := strings.CutPrefix(faultAnswer, last.Content)
		if last.Role != "assistant" || !last.Prefix || !ok {
			w.WriteHeader(400)
			return
		}
		rest = strings.TrimLeft(rest, " ")
		parts := strings.SplitAfter(rest, " ")
		text(" " + parts[0])
		for _, s := range parts[1:] {
			text(s)
		}
		end(len(parts), true)
	}
}

// faultServer is a server whose gateway calls faultUpstream through two providers: "up"
// (OpenAI's format, no prefill) and "pf" (an OpenAI-format server that continues a
// prefix), with millisecond timeouts.
func faultServer(t *testing.T) (*httptest.Server, *faultUpstream) {
	up := &faultUpstream{calls: map[string]int{}}
	ups := httptest.NewServer(up)
	t.Cleanup(func() { ups.CloseClientConnections(); ups.Close() })
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "k"}),
		providers.NewOpenAI(providers.Config{Name: "pf", BaseURL: ups.URL + "/v1", APIKey: "k", Prefill: providers.PrefillPrefix}),
	)
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Store: st, FirstTokenTimeout: 300 * time.Millisecond,
		StreamIdleTimeout: 100 * time.Millisecond, AttemptTimeout: 300 * time.Millisecond,
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
	return hs, up
}

// TestFaultsThroughBothEndpoints runs upstream faults through POST /v1/chat/completions
// and POST /api/v1/completions, streaming and not, and checks what the client holds at the
// end: the whole text, how the body ends ([DONE], the native final event, or an error
// event without [DONE]) and the upstream calls made.
func TestFaultsThroughBothEndpoints(t *testing.T) {
	type want struct {
		text  string         // the client's text ("" for an error)
		tail  string         // "done" or "error" (streams); the status for non-streams
		calls map[string]int // upstream calls per model
	}
	cases := []struct {
		name     string
		primary  string
		fallback string
		stream   bool
		extra    string // more JSON members
		want     want
	}{
		{"clean end without [DONE]", "up/nodone", "up/ok", true, "", want{faultAnswer, "done", map[string]int{"nodone": 1, "ok": 0}}},
		{"one undecodable event without text", "up/junk", "up/ok", true, "", want{faultAnswer, "done", map[string]int{"junk": 1, "ok": 0}}},
		{"cut mid-answer, continued", "up/cut", "pf/cont", true, "", want{faultAnswer, "done", map[string]int{"cut": 1, "cont": 1}}},
		{"stall mid-answer, continued", "up/stall", "pf/cont", true, "", want{faultAnswer, "done", map[string]int{"stall": 1, "cont": 1}}},
		{"cut mid-answer, fallback refuses the prefill", "up/cut", "pf/refuse", true, "", want{"", "error", map[string]int{"cut": 1, "refuse": 1}}},
		{"cut mid-answer, fallback cannot take a prefill", "up/cut", "up/ok", true, "", want{"", "error", map[string]int{"cut": 1, "ok": 0}}},
		{"silent primary, streamed", "up/silent", "up/ok", true, "", want{faultAnswer, "done", map[string]int{"silent": 1, "ok": 1}}},
		{"silent primary", "up/silent", "up/ok", false, "", want{faultAnswer, "200", map[string]int{"silent": 1, "ok": 1}}},
		{"silent primary, request timeout", "up/silent", "", false, `"timeout":0.05,`, want{"", "502", map[string]int{"silent": 1}}},
		{"slow primary, hedged", "up/silent", "up/ok", true, `"hedge_after":0.02,`, want{faultAnswer, "done", map[string]int{"silent": 1, "ok": 1}}},
	}
	for _, c := range cases {
		for _, api := range []string{"openai", "native"} {
			t.Run(api+": "+c.name, func(t *testing.T) {
				hs, up := faultServer(t)
				var body, url string
				fallback := ""
				if c.fallback != "" {
					fallback = fmt.Sprintf(`"fallback_models":[%q],`, c.fallback)
				}
				if api == "openai" {
					url = hs.URL + "/v1/chat/completions"
					body = fmt.Sprintf(`{"model":%q,%s%s"stream":%v,"messages":[{"role":"user","content":"Capital of France?"}]}`, c.primary, fallback, c.extra, c.stream)
				} else {
					url = hs.URL + "/api/v1/completions"
					body = fmt.Sprintf(`{"models":[%q],%s%s"stream":%v,"messages":[{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}]}`, c.primary, fallback, c.extra, c.stream)
				}
				resp, b := post(t, url, testKey, body)
				text, tail := "", fmt.Sprint(resp.StatusCode)
				if c.stream {
					text, tail = streamEnd(t, api, string(b))
				} else if resp.StatusCode == 200 {
					m := decodeMap(t, b)
					if api == "openai" {
						text, _ = m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
					} else {
						text, _ = m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
					}
				}
				if tail != c.want.tail || (c.want.text != "" && text != c.want.text) {
					t.Fatalf("client got %q ending %q, want %q ending %q; body:\n%s", text, tail, c.want.text, c.want.tail, b)
				}
				for m, n := range c.want.calls {
					if got := up.count(m); got != n {
						t.Errorf("upstream calls to %s = %d, want %d", m, got, n)
					}
				}
			})
		}
	}
}

// streamEnd returns the text a streaming client assembled and how its body ended: "done"
// when the last event is [DONE] (after the native final event, whose text must match), or
// "error" when it is an error event and no [DONE] came.
func streamEnd(t *testing.T, api, body string) (text, tail string) {
	t.Helper()
	evs := readSSE(t, strings.NewReader(body))
	if len(evs) == 0 {
		return "", "empty"
	}
	var sb strings.Builder
	for _, e := range evs {
		if e[1] == "[DONE]" || e[0] == "error" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(e[1]), &m); err != nil {
			t.Fatalf("event %q: %v", e[1], err)
		}
		if _, isErr := m["error"]; isErr {
			continue
		}
		if api == "openai" {
			for _, ch := range m["choices"].([]any) {
				if c, ok := ch.(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
					sb.WriteString(c)
				}
			}
		} else if m["type"] == "text" && m["final"] != true {
			sb.WriteString(m["text"].(string))
		} else if m["final"] == true {
			if final := m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; final != sb.String() {
				t.Fatalf("final event text %q, streamed %q", final, sb.String())
			}
		}
	}
	last := evs[len(evs)-1]
	switch {
	case last[1] == "[DONE]":
		return sb.String(), "done"
	case strings.Contains(body, "[DONE]"):
		return sb.String(), "[DONE] before the end"
	case last[0] == "error" || strings.Contains(last[1], `"error"`):
		return sb.String(), "error"
	}
	return sb.String(), "no end"
}

// TestResponsesReportContinuation: a streamed Responses API answer that another model
// continued after the first one broke says so in its final response object, as the chat
// completions route says it in its finish chunk.
func TestResponsesReportContinuation(t *testing.T) {
	hs, up := faultServer(t)
	body := `{"model":"up/cut","fallback_models":["pf/cont"],"input":"Capital of France?","stream":true}`
	resp, b := post(t, hs.URL+"/v1/responses", testKey, body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var final map[string]any
	for _, e := range readSSE(t, strings.NewReader(string(b))) {
		var ev map[string]any
		if json.Unmarshal([]byte(e[1]), &ev) == nil && ev["type"] == "response.completed" {
			final, _ = ev["response"].(map[string]any)
		}
	}
	if final == nil {
		t.Fatalf("no response.completed event:\n%s", b)
	}
	text := final["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	sy, _ := final["switchyard"].(map[string]any)
	cont, _ := sy["continued"].(map[string]any)
	if text != faultAnswer || cont == nil || cont["model"] != "pf/cont" || cont["from_char"].(float64) <= 0 {
		t.Fatalf("final response text %q, switchyard %v", text, sy)
	}
	if up.count("cut") != 1 || up.count("cont") != 1 {
		t.Errorf("upstream calls: cut %d, cont %d", up.count("cut"), up.count("cont"))
	}
}
