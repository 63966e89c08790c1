package completions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// The pieces of the spoken answer fakeAudioStreamUpstream streams, in order, as OpenAI
// streams them: the id with the transcript's first piece, the transcript, the audio (each
// piece base64 on its own: joined as text they are not one base64 document), expires_at.
var fakeAudioStreamPieces = []providers.AudioDelta{
	{ID: "audio_1", Transcript: "Hello"},
	{Transcript: " there."},
	{ID: "audio_1", Data: base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})},
	{Data: base64.StdEncoding.EncodeToString([]byte{10, 11, 12, 13, 14, 15})},
	{ID: "audio_1", ExpiresAt: 1767225600},
}

// fakeAudioStreamUpstream is a scripted OpenAI-format upstream answering aloud, streamed:
// the pieces above, the finish reason and a usage chunk with audio tokens. Cut after
// cutAfter pieces (0: never), it reasons first (delta.reasoning_content, as compatible
// servers show it) and ends the body without [DONE] or usage after those pieces, as a
// connection that broke mid-answer. It keeps the request bodies.
type fakeAudioStreamUpstream struct {
	cutAfter int
	mu       sync.Mutex
	bodies   []string
}

func (u *fakeAudioStreamUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, string(b))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(choice string) {
		fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-audio-preview","choices":[%s]}`+"\n\n", choice)
	}
	ev(`{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"finish_reason":null}`)
	if u.cutAfter > 0 {
		// An answer cut after reasoning (and no text) is one the gateway continues.
		ev(`{"index":0,"delta":{"reasoning_content":"The user wants a greeting."},"finish_reason":null}`)
	}
	for i, p := range fakeAudioStreamPieces {
		if u.cutAfter > 0 && i == u.cutAfter {
			return
		}
		a, _ := json.Marshal(p)
		ev(fmt.Sprintf(`{"index":0,"delta":{"content":null,"audio":%s},"finish_reason":null}`, a))
	}
	ev(`{"index":0,"delta":{},"finish_reason":"stop"}`)
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-audio-preview","choices":[],`+
		`"usage":{"prompt_tokens":12,"completion_tokens":80,"total_tokens":92,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":4},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":64}}}`+"\n\ndata: [DONE]\n\n")
}

func (u *fakeAudioStreamUpstream) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

// audioStreamHarness is a gateway whose "openai" provider (OpenAI's API) and "oa" (an
// OpenAI-compatible server) are up, priced by the catalogue, with a memory response cache.
func audioStreamHarness(t *testing.T, up *fakeAudioStreamUpstream) *harness {
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "k", HTTPClient: ups.Client()})
	oa := providers.NewOpenAI(providers.Config{Name: "oa", BaseURL: ups.URL + "/v1", APIKey: "k", HTTPClient: ups.Client()})
	return newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"a": o.Providers.(fakeRegistry)["a"], "openai": oai, "oa": oa}
		o.Prices = providers.DefaultCatalog()
		o.Cache = CacheOptions{Driver: &MemoryCache{}}
	})
}

const audioStreamAsk = `"stream":true,"stream_options":{"include_usage":true},"modalities":["text","audio"],"audio":{"voice":"alloy","format":"pcm16"},"messages":[{"role":"user","content":"Say hello."}]}`

// TestAudioOutputStream: a streamed spoken answer reaches the client as OpenAI's
// delta.audio pieces, in the upstream's order (the first chunk saying the role); the usage
// chunk carries the audio tokens, billed at the catalogue's audio rates; the whole answer
// (Response.Audio) has the pieces' audio decoded and joined; nothing is cached.
func TestAudioOutputStream(t *testing.T) {
	up := &fakeAudioStreamUpstream{}
	h := audioStreamHarness(t, up)
	for round := range 2 {
		st, err := h.g.Stream(context.Background(), Scope{}, audioChat(t, `{"model":"openai/gpt-4o-audio-preview",`+audioStreamAsk))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := WriteOpenAIStream(rec, st, true); err != nil {
			t.Fatal(err)
		}
		var pieces []providers.AudioDelta
		var usage *OpenAIUsage
		var costs *Costs
		evs := parseSSE(t, rec.Body.String())
		if evs[len(evs)-1].data != "[DONE]" {
			t.Fatalf("round %d: stream ended with %q", round, evs[len(evs)-1].data)
		}
		for i, ev := range evs[:len(evs)-1] {
			var ck OpenAIChunk
			if err := json.Unmarshal([]byte(ev.data), &ck); err != nil {
				t.Fatalf("event %q: %v", ev.data, err)
			}
			if ck.Usage != nil {
				usage, costs = ck.Usage, ck.Switchyard.Costs
			}
			if len(ck.Choices) == 0 {
				continue
			}
			d := ck.Choices[0].Delta
			if i == 0 && (d.Role != "assistant" || d.Audio == nil) {
				t.Errorf("first chunk %s, want the role with the first piece of audio", ev.data)
			}
			if d.Audio != nil {
				pieces = append(pieces, *d.Audio)
			}
		}
		if fmt.Sprint(pieces) != fmt.Sprint(fakeAudioStreamPieces) {
			t.Errorf("round %d: audio pieces %+v, want %+v", round, pieces, fakeAudioStreamPieces)
		}
		if usage == nil || usage.CompletionTokensDetails.AudioTokens != 64 || usage.PromptTokensDetails.AudioTokens != 4 || usage.CompletionTokens != 80 {
			t.Fatalf("round %d: usage %s, want 80 completion tokens (64 audio) and 4 prompt audio tokens", round, jsonText(usage))
		}
		// gpt-4o-audio-preview: text in 2.5e-6, audio in 4e-5, text out 1e-5, audio out 8e-5.
		wantIn, wantOut := 8*2.5e-6+4*4e-5, 16*1e-5+64*8e-5
		if math.Abs(costs.InputTokensCost-wantIn) > 1e-12 || math.Abs(costs.OutputTokensCost-wantOut) > 1e-12 {
			t.Errorf("round %d: costs %+v, want input %g and output %g", round, costs, wantIn, wantOut)
		}
		whole := st.Response().Audio
		wantData := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
		if whole == nil || *whole != (providers.AudioAnswer{ID: "audio_1", Data: wantData, ExpiresAt: 1767225600, Transcript: "Hello there."}) {
			t.Errorf("round %d: Response.Audio %+v, want the pieces assembled", round, whole)
		}
	}
	bodies := up.calls()
	if len(bodies) != 2 {
		t.Fatalf("upstream called %d times, want 2 (a spoken answer is not cached)", len(bodies))
	}
	for _, want := range []string{`"stream":true`, `"modalities":["text","audio"]`, `"audio":{"voice":"alloy","format":"pcm16"}`, `"include_usage":true`} {
		if !strings.Contains(bodies[0], want) {
			t.Errorf("upstream got %s, want %s in it", bodies[0], want)
		}
	}
	entries := h.ledger.all()
	if len(entries) != 2 || !entries[0].Complete || entries[0].Estimated || entries[0].Usage.CompletionAudioTokens != 64 || entries[0].Usage.PromptAudioTokens != 4 {
		t.Errorf("ledger %+v, want two complete entries with the upstream's audio tokens", entries)
	}
}

// TestAudioOutputStreamCut: a spoken answer whose stream breaks after the model reasoned
// is not continued on the next model, as an answer of reasoning alone would be (the next
// one would speak it again from its start): the client has the pieces relayed so far, then
// the error; the broken attempt is charged as other cut streams are (a local count).
func TestAudioOutputStreamCut(t *testing.T) {
	up := &fakeAudioStreamUpstream{cutAfter: 3}
	h := audioStreamHarness(t, up)
	st, err := h.g.Stream(context.Background(), Scope{}, audioChat(t, `{"model":"oa/gpt-4o-audio-preview","fallback_models":["openai/gpt-audio"],"reasoning_effort":"low",`+audioStreamAsk))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	err = WriteOpenAIStream(rec, st, true)
	if !errors.Is(err, ErrStreamFailed) {
		t.Fatalf("err = %v, want the stream failed", err)
	}
	var audio int
	evs := parseSSE(t, rec.Body.String())
	for _, ev := range evs[:len(evs)-1] {
		var ck OpenAIChunk
		json.Unmarshal([]byte(ev.data), &ck)
		if len(ck.Choices) > 0 && ck.Choices[0].Delta.Audio != nil {
			audio++
		}
	}
	if last := evs[len(evs)-1].data; audio != 3 || !strings.Contains(last, `"error"`) {
		t.Errorf("%d audio pieces then %s; want the 3 relayed, then an error", audio, last)
	}
	if n := len(up.calls()); n != 1 {
		t.Errorf("upstream called %d times, want once (a spoken answer is not continued)", n)
	}
	entries := h.ledger.all()
	if len(entries) != 1 || entries[0].Complete || !entries[0].Estimated || entries[0].Usage.PromptTokens == 0 || entries[0].Usage.CompletionTokens == 0 {
		t.Errorf("ledger %+v, want the broken attempt charged by a local count", entries)
	}
}

// TestAudioOutputStreamRefused: a streamed spoken answer is pcm16 (OpenAI streams no other
// format): another is a 400 naming audio.format; a model that cannot answer aloud is
// passed over, and alone is a 400 naming audio. Neither calls an upstream.
func TestAudioOutputStreamRefused(t *testing.T) {
	up := &fakeAudioStreamUpstream{}
	h := audioStreamHarness(t, up)
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"openai/gpt-4o-audio-preview","stream":true,"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"x"}]}`), &o)
	var ve *ValidationError
	if _, err := o.ToRequest(); !errors.As(err, &ve) || ve.Field != "audio.format" || !strings.Contains(ve.Message, "pcm16") {
		t.Errorf("wav streamed: err = %v, want a validation error naming audio.format and pcm16", err)
	}
	_, err := h.g.Stream(context.Background(), Scope{}, audioChat(t, `{"model":"a/m",`+audioStreamAsk))
	if !errors.As(err, &ve) || ve.Field != "audio" {
		t.Errorf("a/m alone: err = %v, want a validation error naming audio", err)
	}
	st, err := h.g.Stream(context.Background(), Scope{}, audioChat(t, `{"model":"a/m","fallback_models":["openai/gpt-4o-audio-preview"],`+audioStreamAsk))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		if _, err := st.Recv(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	if r := st.Response(); r.Provider != "openai" || r.Attempts[0].Outcome != OutcomeSkipped || r.Audio == nil {
		t.Errorf("answered by %s, attempts %+v, audio %v: want a/m skipped and openai answering aloud", r.Provider, r.Attempts, r.Audio)
	}
	if n := h.a.callCount("m"); n != 0 {
		t.Errorf("a/m called %d times", n)
	}
	if n := len(up.calls()); n != 1 {
		t.Errorf("openai called %d times, want once", n)
	}
}

// TestAudioOutputHedged: a non-streamed request with hedge_after is streamed from the
// upstreams, which OpenAI does for a spoken answer in pcm16 only: that one comes whole,
// its pieces assembled; one in wav is answered unhedged, by a whole call.
func TestAudioOutputHedged(t *testing.T) {
	up := &fakeAudioStreamUpstream{}
	h := audioStreamHarness(t, up)
	resp, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"openai/gpt-4o-audio-preview","hedge_after":5,"modalities":["text","audio"],"audio":{"voice":"alloy","format":"pcm16"},"messages":[{"role":"user","content":"Say hello."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	wantData := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	if a := resp.Audio; a == nil || a.Data != wantData || a.Transcript != "Hello there." || resp.Usage.CompletionAudioTokens != 64 {
		t.Errorf("pcm16 hedged: audio %+v, usage %+v; want the streamed pieces assembled and the audio tokens", a, resp.Usage)
	}

	whole, bodies := fakeOpenAIAudioUpstream(t)
	oai := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: whole.URL + "/v1", APIKey: "k", HTTPClient: whole.Client()})
	h = newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"openai": oai} })
	if _, err := h.g.Complete(context.Background(), Scope{}, audioChat(t, `{"model":"openai/gpt-4o-audio-preview","hedge_after":5,"modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"Say hello."}]}`)); err != nil {
		t.Fatalf("wav hedged: %v, want a whole call answering", err)
	}
	if len(*bodies) != 1 || strings.Contains((*bodies)[0], `"stream":true`) {
		t.Errorf("wav hedged: upstream got %q, want one unstreamed call", *bodies)
	}
}
