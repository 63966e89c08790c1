package server

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPassThroughAnswerEncoding: the gateway asks the upstream for gzip itself; an answer
// in gzip or deflate (zlib-wrapped or raw) comes to the client decoded, without its
// Content-Encoding, and its reported usage is billed; an answer in an encoding the
// gateway cannot decode (br) comes as it is with its Content-Encoding kept, and the
// prompt's estimate is billed, marked estimated.
func TestPassThroughAnswerEncoding(t *testing.T) {
	const answer = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`
	brBytes := []byte{0x1b, 0x2a, 0x00, 0xf8, 0x8d, 0xd4, 0x6d, 0x3e, 0x0a}
	encode := func(enc string) []byte {
		var b bytes.Buffer
		var w io.WriteCloser
		switch enc {
		case "gzip":
			w = gzip.NewWriter(&b)
		case "deflate":
			w = zlib.NewWriter(&b)
		case "raw deflate":
			w, _ = flate.NewWriter(&b, flate.DefaultCompression)
		}
		io.WriteString(w, answer)
		w.Close()
		return b.Bytes()
	}
	var acceptEncoding []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		acceptEncoding = append(acceptEncoding, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		switch _, enc, _ := strings.Cut(string(b), `"content":"`); {
		case strings.HasPrefix(enc, "br"):
			w.Header().Set("Content-Encoding", "br")
			w.Write(brBytes)
		case strings.HasPrefix(enc, "raw deflate"):
			w.Header().Set("Content-Encoding", "deflate")
			w.Write(encode("raw deflate"))
		default:
			e, _, _ := strings.Cut(enc, " ")
			w.Header().Set("Content-Encoding", e)
			w.Write(encode(e))
		}
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"enc","models":["openai/gpt-4o-mini"],"max_budget_usd":5}`)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for i, enc := range []string{"gzip", "deflate", "raw deflate", "br"} {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + enc + ` please"}]}`
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		req.Header.Set("Accept-Encoding", "br, zstd")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if acceptEncoding[i] != "gzip" {
			t.Errorf("%s: the upstream was asked for Accept-Encoding %q, want gzip", enc, acceptEncoding[i])
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", enc, len(rows), i+1)
		}
		row := rows[0]
		if enc == "br" {
			if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "br" || !bytes.Equal(got, brBytes) {
				t.Errorf("%s: %d Content-Encoding %q %x, want the upstream's bytes with their encoding", enc, resp.StatusCode, resp.Header.Get("Content-Encoding"), got)
			}
			want := expectedPassThroughPrompt(t, "openai/gpt-4o-mini", body)
			if row.PromptTokens != want || row.CompletionTokens != 0 || !row.UsageEstimated || row.CostUSD <= 0 {
				t.Errorf("%s: recorded %d+%d tokens (estimated %v) at %v, want the prompt's %d estimated", enc, row.PromptTokens, row.CompletionTokens, row.UsageEstimated, row.CostUSD, want)
			}
			continue
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || string(got) != answer {
			t.Errorf("%s: %d Content-Encoding %q %q, want the answer decoded", enc, resp.StatusCode, resp.Header.Get("Content-Encoding"), got)
		}
		if row.PromptTokens != 7 || row.CompletionTokens != 3 || row.UsageEstimated {
			t.Errorf("%s: recorded %d+%d tokens (estimated %v), want the 7+3 reported", enc, row.PromptTokens, row.CompletionTokens, row.UsageEstimated)
		}
	}
}

// TestPassThroughMislabelledDeflate: an answer labelled Content-Encoding: deflate whose
// body is neither zlib nor raw deflate (plain JSON) is answered the 502 a mislabelled gzip
// answer gets, naming the provider, its 200 and the encoding, before anything of it is
// relayed, and recorded as an unbilled error — not decoded into bytes that are not the
// answer, nor cut once its 200 has gone to the client.
func TestPassThroughMislabelledDeflate(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "deflate")
		if strings.Contains(string(b), "short") {
			w.Write([]byte(`{"a":1}`))
			return
		}
		w.Write([]byte(`{"id":"c1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`))
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"mislabel-deflate","models":["openai/gpt-4o-mini"],"max_budget_usd":5}`)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for i, content := range []string{"plain", "short"} {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + content + `"}]}`
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("%s: %d %q, want 502", content, resp.StatusCode, got)
		}
		msg := string(got)
		if !strings.Contains(msg, "Content-Encoding") || !strings.Contains(msg, "deflate") || !strings.Contains(msg, "openai") || !strings.Contains(msg, "200") {
			t.Errorf("%s: 502 %s, want it to name the provider, its 200 and the deflate Content-Encoding the body is not in", content, msg)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", content, len(rows), i+1)
		}
		if row := rows[0]; row.Outcome != "error" || row.CostUSD != 0 || row.PromptTokens != 0 {
			t.Errorf("%s: recorded %s at %v (%d prompt tokens), want an unbilled error", content, row.Outcome, row.CostUSD, row.PromptTokens)
		}
	}
}
