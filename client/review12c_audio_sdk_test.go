package client_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
)

// TestReview12cTranscriptionIncludeAndChunking: the official SDK's include[]
// (logprobs) and chunking_strategy reach the upstream; the gateway drops them silently,
// so a gpt-4o-transcribe caller asking for logprobs never gets them.
func TestReview12cTranscriptionIncludeAndChunking(t *testing.T) {
	up := newAudioUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL + "/v1", "ANTHROPIC_API_KEY": "ak"}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	_, err := c.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader([]byte("ID3ID3")), "a.mp3", "audio/mpeg"), Model: openai.AudioModelGPT4oTranscribe,
		Include:          []openai.TranscriptionInclude{openai.TranscriptionIncludeLogprobs},
		ChunkingStrategy: openai.AudioTranscriptionNewParamsChunkingStrategyUnion{OfAuto: "auto"},
		ResponseFormat:   openai.AudioResponseFormatJSON,
	})
	if err != nil {
		t.Fatal(err)
	}
	up.mu.Lock()
	form := up.form
	up.mu.Unlock()
	if got := form["include[]"]; len(got) != 1 || got[0] != "logprobs" {
		t.Errorf("upstream include[] = %q, want [logprobs] (form %v)", got, form)
	}
	if got := form["chunking_strategy"]; len(got) != 1 || got[0] != "auto" {
		t.Errorf("upstream chunking_strategy = %q, want [auto]", got)
	}
}
