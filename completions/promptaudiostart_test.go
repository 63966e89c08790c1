package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeAudioClaude is the Anthropic adapter claiming to take audio input (Claude takes none
// today): an upstream that counts the prompt at its stream's start (PromptUsageReporter)
// for a prompt with a recording.
type fakeAudioClaude struct{ providers.Provider }

func (fakeAudioClaude) SupportsAudioInput(string, *providers.Request) (bool, string) { return true, "" }

// TestStreamPromptCountedAtStartDropsAudioEstimate: a stream (Claude's) cut after message_start
// counted the prompt (and some text) is billed the prompt as Claude counted it; the local
// estimate of the recording's audio tokens made for the same prompt is dropped with the
// estimated prompt count it belonged to, so the record does not show (nor price at the
// audio rate) audio tokens Claude never reported.
func TestStreamPromptCountedAtStartDropsAudioEstimate(t *testing.T) {
	claude := claudeEvents(
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":42,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi there, how are"}}`)
	defer claude.Close()
	obs := &recordingObserver{}
	reg := fakeRegistry{"anthropic": fakeAudioClaude{providers.NewAnthropic(providers.Config{BaseURL: claude.URL, APIKey: "k", HTTPClient: claude.Client()})}}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	req := audioChat(t, `{"model":"anthropic/claude-sonnet-4-5",`+audioMessages+`}`)
	req.MaxRetries = intp(0)
	st, err := g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	var rerr error
	for rerr == nil {
		_, rerr = st.Recv()
	}
	st.Close()
	if !errors.Is(rerr, ErrStreamFailed) {
		t.Fatalf("stream ended with %v, want a stream failure", rerr)
	}
	r := obs.take(t)
	if r.Usage.PromptTokens != 42 || r.Usage.PromptAudioTokens != 0 || r.Usage.CompletionTokens == 0 || !r.UsageEstimated {
		t.Errorf("recorded %+v (estimated %v), want message_start's 42 prompt tokens, no audio tokens, the text's estimate", r.Usage, r.UsageEstimated)
	}
}
