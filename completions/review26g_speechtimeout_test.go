package completions

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// lateSpeaker is a scripted speech upstream: model "late" sends its first audio just as
// the attempt's context ends (the bytes were on their way when the member's timeout fired),
// and can send nothing more after that, as an HTTP body cannot once its request's context
// ended; any other model answers "AUDIO:" and the input at once.
type lateSpeaker struct{ *fakeProvider }

func (l lateSpeaker) Speak(ctx context.Context, req *providers.SpeechRequest) (*providers.SpeechResponse, error) {
	if req.Model != "late" {
		return &providers.SpeechResponse{ContentType: "audio/mpeg", Body: io.NopCloser(strings.NewReader("AUDIO:" + req.Input))}, nil
	}
	return &providers.SpeechResponse{ContentType: "audio/mpeg", Body: &lateBody{ctx: ctx}}, nil
}

type lateBody struct {
	ctx  context.Context
	sent bool
}

func (b *lateBody) Read(p []byte) (int, error) {
	if !b.sent {
		<-b.ctx.Done() // the first audio comes as the timer fires
		b.sent = true
		return copy(p, "LATE"), nil
	}
	return 0, &providers.Error{Provider: "sp", Model: "late", Kind: providers.KindStreamBroken, Message: "read after the request's context ended: " + context.Cause(b.ctx).Error()}
}

func (b *lateBody) Close() error { return nil }

// Speech whose first audio comes only as the member's timeout ends its attempt's context
// is that member's timeout (the next member answers), not an answer handed to the caller
// on a dead context, to be cut right after its first bytes.
func TestSpeechFirstAudioAtTheTimeoutIsATimeout(t *testing.T) {
	g, err := New(Options{Providers: fakeRegistry{"sp": lateSpeaker{newFake("sp")}},
		ModelGroups:    map[string]ModelGroup{"voice": {Models: []string{"sp/late", "sp/fast"}, Timeouts: []MemberTimeouts{{Timeout: 0.05}, {}}}},
		AttemptTimeout: 3 * time.Second,
		Sleep:          func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	speakAfterATimeout(t, g, "sp/late", "sp/fast")
}
