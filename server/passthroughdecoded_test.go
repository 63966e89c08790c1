package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPassThroughDecodedAnswerHeaders: a gzip answer handed on decoded loses the headers
// that describe its encoded bytes (Content-Length, digests, Accept-Ranges) and its strong
// ETag is made weak; a partial answer (206 with a Content-Range) is not decoded but relayed
// as it came, its Content-Encoding and Content-Range kept.
func TestPassThroughDecodedAnswerHeaders(t *testing.T) {
	const answer = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, answer)
	zw.Close()
	encoded := gz.Bytes()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Encoding", "gzip")
		h.Set("Etag", `"v1-abc"`)
		h.Set("Content-Md5", "bm90IHRoZSBkZWNvZGVkIGJvZHk=")
		h.Set("Content-Digest", "sha-256=:bm90IHRoZSBkZWNvZGVkIGJvZHk=:")
		h.Set("Repr-Digest", "sha-256=:bm90IHRoZSBkZWNvZGVkIGJvZHk=:")
		h.Set("Accept-Ranges", "bytes")
		if strings.Contains(string(b), "partial") {
			h.Set("Content-Range", "bytes 0-9/"+strconv.Itoa(len(encoded)))
			h.Set("Content-Length", "10")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(encoded[:10])
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(encoded)))
		w.Write(encoded)
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"hdr","models":["openai/gpt-4o-mini"],"max_budget_usd":5}`)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	send := func(content string) (*http.Response, []byte) {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + content + `"}]}`
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, got
	}

	resp, got := send("whole")
	if resp.StatusCode != 200 || string(got) != answer || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("whole: %d Content-Encoding %q %q, want the answer decoded", resp.StatusCode, resp.Header.Get("Content-Encoding"), got)
	}
	if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(answer)) {
		t.Errorf("whole: Content-Length %s, want none or the decoded body's %d (the upstream's was %d)", cl, len(answer), len(encoded))
	}
	if resp.ContentLength != -1 && resp.ContentLength != int64(len(answer)) {
		t.Errorf("whole: the client read a length of %d, want the decoded body's %d", resp.ContentLength, len(answer))
	}
	if et := resp.Header.Get("Etag"); et != `W/"v1-abc"` {
		t.Errorf("whole: ETag %q, want the upstream's made weak W/\"v1-abc\"", et)
	}
	for _, k := range []string{"Content-Md5", "Content-Digest", "Repr-Digest", "Accept-Ranges"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("whole: %s %q handed on; it describes the encoded body", k, v)
		}
	}

	resp, got = send("partial")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(got, encoded[:10]) {
		t.Fatalf("partial: %d %x, want 206 with the upstream's bytes %x", resp.StatusCode, got, encoded[:10])
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Range") == "" || resp.Header.Get("Etag") != `"v1-abc"` {
		t.Errorf("partial: Content-Encoding %q Content-Range %q ETag %q, want the upstream's as they came",
			resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Range"), resp.Header.Get("Etag"))
	}
}

// TestPassThroughMislabelledGzip: an answer labelled Content-Encoding: gzip whose body is
// not gzip is answered a 502 naming the problem (as a client decoding it would fail), not
// relayed as its status with an empty body; the request is recorded as an error, unbilled.
// An empty body labelled gzip is an empty answer, relayed as it came.
func TestPassThroughMislabelledGzip(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		switch {
		case strings.Contains(string(b), "empty"):
			w.WriteHeader(http.StatusNoContent)
		case strings.Contains(string(b), "short"):
			w.Write([]byte("{}"))
		default:
			w.Write([]byte(`{"id":"c1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`))
		}
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"mislabel","models":["openai/gpt-4o-mini"],"max_budget_usd":5}`)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for i, content := range []string{"plain", "short", "empty"} {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + content + `"}]}`
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", content, len(rows), i+1)
		}
		if content == "empty" {
			if resp.StatusCode != http.StatusNoContent || len(got) != 0 {
				t.Errorf("empty: %d %q, want the upstream's 204", resp.StatusCode, got)
			}
			continue
		}
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("%s: %d %q, want 502", content, resp.StatusCode, got)
		}
		msg := string(got)
		if !strings.Contains(msg, "Content-Encoding") || !strings.Contains(msg, "gzip") || !strings.Contains(msg, `openai`) || !strings.Contains(msg, "200") {
			t.Errorf("%s: 502 %s, want it to name the provider, its 200 and the gzip Content-Encoding the body is not in", content, msg)
		}
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("%s: the 502 carries Content-Encoding %q", content, ce)
		}
		if row := rows[0]; row.Outcome != "error" || row.CostUSD != 0 || row.PromptTokens != 0 {
			t.Errorf("%s: recorded %s at %v (%d prompt tokens), want an unbilled error", content, row.Outcome, row.CostUSD, row.PromptTokens)
		}
	}
}

// TestPassThroughStreamCutBeforeItsFirstBytes: a stream the provider accepted (200 and its
// headers) that ends before any of its body is not billed, as LiteLLM bills none of it
// and the gateway's own routes bill no attempt that failed before its first fragment (a
// provider does not bill a failed request): the request is recorded as an unbilled error.
func TestPassThroughStreamCutBeforeItsFirstBytes(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the upstream gone before its first event
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "k"})))
	vk := issue(t, s, `{"name":"cut","models":["anthropic/claude-haiku-4-5-20251001"],"max_budget_usd":5}`)
	body := `{"model":"claude-haiku-4-5-20251001","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"tell me a long story"}]}`
	req, _ := http.NewRequest("POST", hs.URL+"/anthropic/v1/messages", strings.NewReader(body))
	req.Header.Set("x-api-key", vk.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(got) != 0 {
		t.Fatalf("%d %q, want the provider's 200 with nothing after it", resp.StatusCode, got)
	}
	rows := passThroughHistory(t, s, vk.Key)
	if len(rows) != 1 {
		t.Fatalf("%d requests recorded, want 1", len(rows))
	}
	if row := rows[0]; row.Outcome == "ok" || row.PromptTokens != 0 || row.CompletionTokens != 0 || row.CostUSD != 0 || row.UsageEstimated {
		t.Errorf("recorded %s %d+%d tokens at %v (estimated %v), want an unbilled failure", row.Outcome, row.PromptTokens, row.CompletionTokens, row.CostUSD, row.UsageEstimated)
	}
}
