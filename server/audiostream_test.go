package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestTranscriptionStream: stream=true on a gpt-4o transcription model relays OpenAI's
// transcript.text.delta/done events as they come and bills the done event's token usage
// to the key; whisper-1 (which ignores stream on OpenAI) answers whole; a translation
// refuses stream naming it; a stream failing after its first event ends with an OpenAI
// error event and is recorded as a failed stream; the openai-go SDK's NewStreaming reads
// the events.
func TestTranscriptionStream(t *testing.T) {
	hs, s, up := audioServer(t)
	url := hs.URL + "/v1/audio/transcriptions"
	vk := issue(t, s, `{"name":"dictation","models":["gpt-4o-mini-transcribe","whisper-1"],"max_budget_usd":1}`)

	body, ctype := audioForm(t, []byte("ID3audio"), "model", "gpt-4o-mini-transcribe", "stream", "true")
	resp, b := postForm(t, url, vk.Key, body, ctype, false)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || resp.Header.Get("X-Switchyard-Model") != "openai/gpt-4o-mini-transcribe" {
		t.Fatalf("stream: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var types []string
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct{ Type, Delta, Text string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		types = append(types, ev.Type+":"+ev.Delta+ev.Text)
	}
	if got := strings.Join(types, "|"); got != "transcript.text.delta:hello|transcript.text.delta: there|transcript.text.done:hello there" {
		t.Errorf("events %s\n%s", got, b)
	}
	up.mu.Lock()
	form := up.form
	up.mu.Unlock()
	if form["stream"] == nil || form["stream"][0] != "true" {
		t.Errorf("the upstream form %v lacks stream=true", form)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if info.Spend.Requests != 1 || info.Spend.CostUSD <= 0 || info.Spend.Tokens != 43 {
		t.Errorf("spend after the stream %+v, want one request of 43 tokens with a cost", info.Spend)
	}

	// whisper-1 answers whole, as OpenAI answers it with stream on; stream is not sent.
	body, ctype = audioForm(t, []byte("ID3"), "model", "whisper-1", "stream", "true")
	resp, b = postForm(t, url, vk.Key, body, ctype, false)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), `"text":"hello there"`) {
		t.Errorf("whisper-1 with stream: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	up.mu.Lock()
	form = up.form
	up.mu.Unlock()
	if form["stream"] != nil {
		t.Errorf("whisper-1 was sent stream: %v", form)
	}

	body, ctype = audioForm(t, []byte("ID3"), "model", "gpt-4o-mini-transcribe", "stream", "true")
	resp, b = postForm(t, hs.URL+"/v1/audio/translations", vk.Key, body, ctype, false)
	if e := wantOpenAIError(t, "translation stream", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "stream" {
		t.Errorf("translation with stream: %s", b)
	}

	// Cut after the first event: the client gets it, then an error event.
	up.mu.Lock()
	up.cutStream = true
	up.mu.Unlock()
	body, ctype = audioForm(t, []byte("ID3"), "model", "gpt-4o-mini-transcribe", "stream", "true")
	resp, b = postForm(t, url, vk.Key, body, ctype, false)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"delta":"hello"`) || !strings.Contains(string(b), `"error":{"message":`) || !strings.Contains(string(b), "overloaded") {
		t.Errorf("cut stream: %d %s", resp.StatusCode, b)
	}
	r := do(t, s, "GET", "/api/v1/usage/requests", vk.Key, "")
	var usage struct {
		Data []usagelog.Request `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &usage); err != nil || r.status != 200 {
		t.Fatalf("usage: %d %s", r.status, r.raw)
	}
	outcomes := map[string]int{}
	for _, q := range usage.Data {
		if q.Operation == "transcription" {
			outcomes[q.Model+" "+q.Outcome]++
		}
		if q.Operation == "transcription" && q.Outcome == "stream_error" && (!q.UsageEstimated || q.CostUSD <= 0) {
			t.Errorf("the cut stream is billed %v (estimated %v): want the audio sent, estimated", q.CostUSD, q.UsageEstimated)
		}
	}
	if outcomes["openai/gpt-4o-mini-transcribe ok"] != 1 || outcomes["openai/gpt-4o-mini-transcribe stream_error"] != 1 || outcomes["openai/whisper-1 ok"] != 1 {
		t.Errorf("usage log transcriptions %v", outcomes)
	}
	up.mu.Lock()
	up.cutStream = false
	up.mu.Unlock()

	// The official Go SDK's streaming transcription reads the events.
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey(vk.Key), option.WithMaxRetries(0))
	stream := client.Audio.Transcriptions.NewStreaming(t.Context(), openai.AudioTranscriptionNewParams{
		Model: "gpt-4o-mini-transcribe", File: strings.NewReader("ID3audio")})
	var text string
	var total int64
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "transcript.text.delta":
			text += ev.Delta
		case "transcript.text.done":
			total = ev.Usage.TotalTokens
		}
	}
	if err := stream.Err(); err != nil || text != "hello there" || total != 43 {
		t.Errorf("SDK stream: text %q, total tokens %d, err %v", text, total, err)
	}
}

// TestSpeechSSE: stream_format sse on gpt-4o-mini-tts reaches the upstream and its
// server-sent events come back as they are; the speech.audio.done event's usage (input
// tokens and the audio tokens made, which an audio answer never says) is what the key is
// charged, at the catalogue's input and audio output rates; tts-1 refuses sse naming
// stream_format, as OpenAI does; stream_format audio sends none.
func TestSpeechSSE(t *testing.T) {
	hs, s, up := audioServer(t)
	vk := issue(t, s, `{"name":"voice","models":["gpt-4o-mini-tts","tts-1"],"max_budget_usd":1}`)
	resp, b := do2(t, "POST", hs.URL+"/v1/audio/speech", vk.Key, `{"model":"gpt-4o-mini-tts","voice":"alloy","input":"Hello there","stream_format":"sse"}`, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(string(b), `"type":"speech.audio.delta","audio":"SUQz"`) || !strings.Contains(string(b), `"type":"speech.audio.done"`) {
		t.Fatalf("sse speech: %d %q %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	up.mu.Lock()
	sent := up.speech
	up.mu.Unlock()
	if sent["stream_format"] != "sse" {
		t.Errorf("the upstream got %v, want stream_format sse", sent)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	want := 7*2.5e-06 + 100*1.2e-05
	if d := info.Spend.CostUSD - want; d > 1e-12 || d < -1e-12 || info.Spend.Tokens != 107 {
		t.Errorf("spend %+v, want %v (7 input tokens, 100 audio tokens)", info.Spend, want)
	}

	resp, b = do2(t, "POST", hs.URL+"/v1/audio/speech", vk.Key, `{"model":"tts-1","voice":"alloy","input":"Hi","stream_format":"sse"}`, nil)
	if e := wantOpenAIError(t, "tts-1 sse", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "stream_format" {
		t.Errorf("tts-1 with sse: %s", b)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/audio/speech", vk.Key, `{"model":"tts-1","voice":"alloy","input":"Hi","stream_format":"audio"}`, nil)
	up.mu.Lock()
	sent = up.speech
	up.mu.Unlock()
	if resp.StatusCode != 200 || string(b) != "ID3Hi|end\n" || sent["stream_format"] != nil {
		t.Errorf("stream_format audio: %d %q, upstream got %v", resp.StatusCode, b, sent)
	}
}
