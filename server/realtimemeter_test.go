package server

import (
	"math"
	"net/http"
	"testing"

	"github.com/coder/websocket"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestRealtimeBillsInputTranscription: a realtime session with input transcription on is
// billed each transcription of its audio at the transcription model's own rates (the one
// the session's latest session.updated names: GA audio.input.transcription or the beta
// input_audio_transcription; tokens for gpt-4o-mini-transcribe, seconds for whisper-1),
// besides its responses, and the session's record sums them.
func TestRealtimeBillsInputTranscription(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_budget_usd":5}`)
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + vk.Key}}, "realtime")
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if typ, _ := readEvent(t, c); typ != "session.created" {
		t.Fatalf("first event %q", typ)
	}
	cat := providers.DefaultCatalog()
	mini := cat.AudioCost("openai/gpt-4o-mini-transcribe", providers.AudioUsage{InputTokens: 25, InputAudioTokens: 25, OutputTokens: 8}).TotalUSD
	whisper := cat.AudioCost("openai/whisper-1", providers.AudioUsage{Seconds: 3}).TotalUSD
	if mini <= 0 || whisper <= 0 {
		t.Fatalf("the catalogue prices gpt-4o-mini-transcribe at %v and whisper-1 at %v", mini, whisper)
	}
	spend := func() float64 { return keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.CostUSD }
	transcribe := func(commit string) {
		t.Helper()
		send(t, c, commit)
		if typ, _ := readEvent(t, c); typ != "input_audio_buffer.committed" {
			t.Fatalf("after commit: %q", typ)
		}
		if typ, _ := readEvent(t, c); typ != "conversation.item.input_audio_transcription.completed" {
			t.Fatalf("transcription: %q", typ)
		}
	}

	send(t, c, `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}}}}}`)
	if typ, _ := readEvent(t, c); typ != "session.updated" {
		t.Fatalf("update: %q", typ)
	}
	transcribe(`{"type":"input_audio_buffer.commit"}`)
	if got := spend(); math.Abs(got-mini) > 1e-12 {
		t.Fatalf("after a gpt-4o-mini-transcribe transcription: spend %v, want %v", got, mini)
	}
	// The beta protocol's field; a duration-priced model.
	send(t, c, `{"type":"session.update","session":{"input_audio_transcription":{"model":"whisper-1"}}}`)
	if typ, _ := readEvent(t, c); typ != "session.updated" {
		t.Fatalf("update: %q", typ)
	}
	transcribe(`{"type":"input_audio_buffer.commit","event_id":"whisper"}`)
	if got := spend(); math.Abs(got-mini-whisper) > 1e-12 {
		t.Fatalf("after a whisper-1 transcription: spend %v, want %v", got, mini+whisper)
	}
	send(t, c, `{"type":"response.create"}`)
	readEvent(t, c)
	readEvent(t, c)
	want := mini + whisper + realtimeResponseCost()
	if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
		t.Errorf("closing: %v", err)
	}
	<-up.endedCh
	q := realtimeRecords(t, s, vk.Key, 1)[0]
	if q.Outcome != "ok" || q.PromptTokens != 125 || q.CompletionTokens != 58 || math.Abs(q.CostUSD-want) > 1e-12 {
		t.Errorf("recorded %+v, want 125+58 tokens at %v", q, want)
	}
}

// TestRealtimeTranscriptionChargesItsOwnModelBudget: a key's model_max_budget entry of the
// transcription model is charged each transcription of the input audio (the model the
// provider ran and bills, which the ledger names), not the realtime model's entry.
func TestRealtimeTranscriptionChargesItsOwnModelBudget(t *testing.T) {
	hs, s, _ := realtimeServer(t)
	vk := issue(t, s, `{"name":"voice","model_max_budget":{"openai/gpt-realtime":{"max_budget_usd":5},"openai/gpt-4o-mini-transcribe":{"max_budget_usd":5}}}`)
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + vk.Key}}, "realtime")
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if typ, _ := readEvent(t, c); typ != "session.created" {
		t.Fatalf("first event %q", typ)
	}
	send(t, c, `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe"}}}}}`)
	if typ, _ := readEvent(t, c); typ != "session.updated" {
		t.Fatalf("update: %q", typ)
	}
	send(t, c, `{"type":"input_audio_buffer.commit"}`)
	readEvent(t, c)
	if typ, _ := readEvent(t, c); typ != "conversation.item.input_audio_transcription.completed" {
		t.Fatalf("transcription: %q", typ)
	}
	mini := providers.DefaultCatalog().AudioCost("openai/gpt-4o-mini-transcribe", providers.AudioUsage{InputTokens: 25, InputAudioTokens: 25, OutputTokens: 8}).TotalUSD
	models := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.Models
	if got := models["openai/gpt-4o-mini-transcribe"].CostUSD; math.Abs(got-mini) > 1e-12 {
		t.Errorf("the transcription model's entry spent %v, want %v (%+v)", got, mini, models)
	}
	if got := models["openai/gpt-realtime"].CostUSD; got != 0 {
		t.Errorf("the realtime model's entry was charged %v for the transcription", got)
	}
}
