package completions

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// behaviour scripts how the fake upstream answers one call.
type behaviour func(w http.ResponseWriter, r *http.Request, body upstreamRequest)

// upstreamRequest is the part of an OpenAI chat request the fake upstream reads.
type upstreamRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Prefix  bool   `json:"prefix"`
	} `json:"messages"`
}

// scriptedUpstream is a fake OpenAI-format server for tests: each model answers with its
// scripted behaviours in order, the last one repeating.
type scriptedUpstream struct {
	srv *httptest.Server

	mu     sync.Mutex
	script map[string][]behaviour
	calls  map[string]int
}

func newScriptedUpstream(t *testing.T) *scriptedUpstream {
	u := &scriptedUpstream{script: map[string][]behaviour{}, calls: map[string]int{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(func() {
		u.srv.CloseClientConnections()
		u.srv.Close()
	})
	return u
}

func (u *scriptedUpstream) on(model string, bs ...behaviour) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.script[model] = bs
	u.calls[model] = 0
}

func (u *scriptedUpstream) callCount(model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[model]
}

func (u *scriptedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
		http.Error(w, `{"error":{"message":"wrong path or key","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body upstreamRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	bs := u.script[body.Model]
	n := u.calls[body.Model]
	u.calls[body.Model]++
	u.mu.Unlock()
	if len(bs) == 0 {
		answer("answer from "+body.Model)(w, r, body)
		return
	}
	bs[min(n, len(bs)-1)](w, r, body)
}

// answer replies properly: a chat.completion, or a stream of word deltas with usage and
// [DONE], as the request asks.
func answer(text string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":%d,"total_tokens":%d}}`,
				body.Model, text, len(words(text)), 11+len(words(text)))
			return
		}
		streamWords(w, body, words(text))
		writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
		writeEvent(w, fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":%d,"total_tokens":%d}}`, len(words(text)), 11+len(words(text))))
		writeEvent(w, "[DONE]")
	}
}

// slowAnswer streams text with a pause before each word, then finishes properly.
func slowAnswer(text string, pause time.Duration) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		startStream(w)
		for _, f := range words(text) {
			time.Sleep(pause)
			b, _ := json.Marshal(f)
			writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, b))
		}
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		writeEvent(w, fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":%d,"total_tokens":%d}}`, len(words(text)), 11+len(words(text))))
		writeEvent(w, "[DONE]")
	}
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func writeEvent(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func streamWords(w http.ResponseWriter, body upstreamRequest, frags []string) {
	startStream(w)
	writeEvent(w, fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, body.Model))
	for _, f := range frags {
		b, _ := json.Marshal(f)
		writeEvent(w, fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, body.Model, b))
	}
}

// status replies with an HTTP error status, an OpenAI error body and optional headers.
func status(code int, errCode, msg string, header ...string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","code":%q}}`, msg, errCode)
	}
}

// reset closes the connection with a TCP RST before any response.
func reset() behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		conn.Close()
	}
}

// hang never answers; it returns when the client gives up.
func hang() behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		<-r.Context().Done()
	}
}

// slowFirstToken sends the stream headers, then waits for the client to give up.
func slowFirstToken() behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		startStream(w)
		<-r.Context().Done()
	}
}

// cutAfter streams the first n words of text, then drops the connection.
func cutAfter(text string, n int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		streamWords(w, body, words(text)[:n])
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			conn.Close()
		}
	}
}

// stallAfter streams the first n words of text, then goes silent until the client gives up.
func stallAfter(text string, n int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		streamWords(w, body, words(text)[:n])
		<-r.Context().Done()
	}
}

// malformedAfter streams the first n words of text, then a chunk that is not JSON.
func malformedAfter(text string, n int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		streamWords(w, body, words(text)[:n])
		writeEvent(w, `{"choices":[{"index":0,"delta":{"content":"oops`)
	}
}

// noDone streams the whole answer with its finish reason and usage, but ends the body
// without data: [DONE].
func noDone(text string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		streamWords(w, body, words(text))
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		writeEvent(w, fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":%d,"total_tokens":%d}}`, len(words(text)), 11+len(words(text))))
	}
}

// cutNoFinish streams the first n words of text and ends the body cleanly, without a
// finish reason or [DONE]: a truncated answer.
func cutNoFinish(text string, n int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		streamWords(w, body, words(text)[:n])
	}
}

// junkAfter streams text with one undecodable event that carries no text after the n-th
// word, then ends properly.
func junkAfter(text string, n int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		ws := words(text)
		streamWords(w, body, ws[:n])
		writeEvent(w, `{"id":"c","object":"chat.completion.chu`)
		for _, f := range ws[n:] {
			b, _ := json.Marshal(f)
			writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, b))
		}
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		writeEvent(w, fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":%d,"total_tokens":%d}}`, len(ws), 11+len(ws)))
		writeEvent(w, "[DONE]")
	}
}

// continueFrom answers a request whose last message is an assistant prefill of text
// ("prefix": true, without trailing whitespace): it streams the rest of text, starting
// with the whitespace the prefill dropped, as a model continuing it would. A request
// without a prefill that is a beginning of text gets a 400.
func continueFrom(text string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		last := body.Messages[len(body.Messages)-1]
		if last.Role != "assistant" || !last.Prefix || !strings.HasPrefix(text, last.Content) {
			status(400, "invalid_request", "expected an assistant prefix")(w, r, body)
			return
		}
		rest := text[len(last.Content):]
		streamWords(w, body, words(rest))
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		writeEvent(w, fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":19,"completion_tokens":%d,"total_tokens":%d}}`, len(words(rest)), 19+len(words(rest))))
		writeEvent(w, "[DONE]")
	}
}

// filteredStream starts answering, then stops with finish_reason content_filter.
func filteredStream(text string, n int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}`)
			return
		}
		streamWords(w, body, words(text)[:n])
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`)
		writeEvent(w, "[DONE]")
	}
}

func join(frags []string) string { return strings.Join(frags, "") }
