package completions

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeAudioAPI is a scripted OpenAI-format audio endpoint. Transcriptions answer
// {"text":"heard <file>","usage":{"type":"duration","seconds":60}} (or the text alone for
// response_format text); speech answers "AUDIO:" and the input. fail holds the statuses
// of the next calls; cutAfterFirst makes the next speech answer break after its first
// bytes.
type fakeAudioAPI struct {
	srv           *httptest.Server
	mu            sync.Mutex
	fail          []int
	cutAfterFirst bool
	calls         int
	paths         []string
	models        []string
	formats       []string // the response_format of each transcription
}

func newFakeAudioAPI(t *testing.T) *fakeAudioAPI {
	u := &fakeAudioAPI{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.calls++
		u.paths = append(u.paths, r.URL.Path)
		fail := 0
		if len(u.fail) > 0 {
			fail, u.fail = u.fail[0], u.fail[1:]
		}
		cut := u.cutAfterFirst
		u.cutAfterFirst = false
		u.mu.Unlock()
		if fail != 0 {
			w.WriteHeader(fail)
			io.WriteString(w, `{"error":{"message":"scripted failure","type":"server_error"}}`)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"), strings.HasSuffix(r.URL.Path, "/audio/translations"):
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				w.WriteHeader(400)
				return
			}
			u.mu.Lock()
			u.models = append(u.models, r.FormValue("model"))
			u.formats = append(u.formats, r.FormValue("response_format"))
			u.mu.Unlock()
			f, _, _ := r.FormFile("file")
			b, _ := io.ReadAll(f)
			if r.FormValue("response_format") == "verbose_json" { // Groq's way to say the length
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"task": "transcribe", "duration": 60, "text": "heard " + string(b), "segments": []any{}})
				return
			}
			if r.FormValue("response_format") == "text" {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				io.WriteString(w, "heard "+string(b)+"\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"text": "heard " + string(b), "usage": map[string]any{"type": "duration", "seconds": 60}})
		case strings.HasSuffix(r.URL.Path, "/audio/speech"):
			var req struct{ Model, Input string }
			json.NewDecoder(r.Body).Decode(&req)
			u.mu.Lock()
			u.models = append(u.models, req.Model)
			u.mu.Unlock()
			w.Header().Set("Content-Type", "audio/mpeg")
			if cut {
				w.Header().Set("Content-Length", "1000")
			}
			io.WriteString(w, "AUDIO:"+req.Input)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeAudioAPI) script(statuses ...int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fail, u.calls, u.paths, u.models = statuses, 0, nil, nil
}

type audioHarness struct {
	g            *Gateway
	openai, groq *fakeAudioAPI
	ledger       *recordingLedger
	observed     *recordingObserver
}

func newAudioHarness(t *testing.T) *audioHarness {
	h := &audioHarness{openai: newFakeAudioAPI(t), groq: newFakeAudioAPI(t), ledger: &recordingLedger{}, observed: &recordingObserver{}}
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": h.openai.srv.URL + "/v1",
		"GROQ_API_KEY": "gk", "GROQ_BASE_URL": h.groq.srv.URL + "/openai/v1", "ANTHROPIC_API_KEY": "ak", "GEMINI_API_KEY": "gk"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Ledger: h.ledger, Observer: h.observed,
		ModelGroups: map[string]ModelGroup{"stt": {Models: []string{"openai/whisper-1", "groq/whisper-large-v3"}},
			"voice": {Models: []string{"openai/tts-1", "openai/gpt-4o-mini-tts"}}, "classic-voice": {Models: []string{"openai/tts-1", "openai/tts-1-hd"}}},
		Sleep: func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	return h
}

// TestTranscribeAnswersBilledAndRecorded: a bare whisper-1 reaches OpenAI; the answer comes
// back as the upstream sent it, its minute of audio priced at whisper-1's rate, billed to
// the budget, written to the ledger and observed as a transcription.
func TestTranscribeAnswersBilledAndRecorded(t *testing.T) {
	h := newAudioHarness(t)
	budget := NewBudget(BudgetLimits{})
	res, err := h.g.Transcribe(context.Background(), Scope{Owner: "k1", Budget: budget},
		&TranscriptionRequest{Model: "whisper-1", File: []byte("hello"), Filename: "a.wav", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Text string }
	if json.Unmarshal(res.Body, &body) != nil || body.Text != "heard hello" || res.ContentType != "application/json" || res.Model != "openai/whisper-1" {
		t.Fatalf("result %s %q %s", res.Body, res.ContentType, res.Model)
	}
	if !res.Costs.PriceKnown || math.Abs(res.Costs.TotalTokensCost-0.006) > 1e-12 || res.Usage.Seconds != 60 {
		t.Errorf("costs %+v usage %+v", res.Costs, res.Usage)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || math.Abs(used.CostUSD-0.006) > 1e-12 {
		t.Errorf("budget used %+v", used)
	}
	if e := h.ledger.all(); len(e) != 1 || e[0].Model != "openai/whisper-1" || !e[0].Complete || math.Abs(e[0].Cost.Spent()-0.006) > 1e-12 {
		t.Errorf("ledger %+v", e)
	}
	r := h.observed.take(t)
	if r.Operation != OperationTranscription || r.Outcome != RequestOK || r.Model != "openai/whisper-1" || len(r.Attempts) != 1 || !r.Usage.Costs.PriceKnown {
		t.Errorf("observed %+v", r)
	}
	if h.openai.paths[0] != "/v1/audio/transcriptions" {
		t.Errorf("paths %v", h.openai.paths)
	}

	// A translation, in text: its own path and operation; the text is asked as json, so its
	// minute is priced and charged like the json answer's.
	h.openai.script()
	res, err = h.g.Transcribe(context.Background(), Scope{Owner: "k1", Budget: budget},
		&TranscriptionRequest{Model: "openai/whisper-1", Translate: true, File: []byte("bonjour"), ResponseFormat: "text"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != "heard bonjour\n" || res.ContentType != "text/plain; charset=utf-8" || !res.Costs.PriceKnown || math.Abs(res.Costs.Spent()-0.006) > 1e-12 {
		t.Errorf("translation %q %q %+v", res.Body, res.ContentType, res.Costs)
	}
	if h.openai.paths[0] != "/v1/audio/translations" {
		t.Errorf("paths %v", h.openai.paths)
	}
	if r := h.observed.take(t); r.Operation != OperationTranslation {
		t.Errorf("observed %+v", r)
	}
	if used := budget.Used(context.Background()); used.Calls != 2 || math.Abs(used.CostUSD-0.012) > 1e-12 {
		t.Errorf("budget used %+v", used)
	}
}

// TestTranscribeModels: Groq's whisper by its bare name; a group's members in order (the
// second answers when the first fails for good); no fallback beyond the request's own
// models; models without an audio API refused by name; unknown models.
func TestTranscribeModels(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	res, err := h.g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: "whisper-large-v3", File: []byte("x")})
	if err != nil || res.Model != "groq/whisper-large-v3" || h.groq.paths[0] != "/openai/v1/audio/transcriptions" || h.groq.models[0] != "whisper-large-v3" {
		t.Fatalf("groq: %+v %v %v", res, err, h.groq.paths)
	}
	h.observed.take(t)

	h.openai.script(400)
	h.groq.script()
	res, err = h.g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: "stt", File: []byte("x")})
	if err != nil || res.Model != "groq/whisper-large-v3" || len(res.Attempts) != 2 || res.Attempts[0].Model != "openai/whisper-1" {
		t.Fatalf("group: %+v %v", res, err)
	}
	h.observed.take(t)

	h.openai.script(400)
	_, err = h.g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: "whisper-1", File: []byte("x")})
	var af *AllFailedError
	if !errors.As(err, &af) || len(af.Attempts) != 1 || h.groq.calls != 1 {
		t.Errorf("a failing model fell back on its own: %v (groq calls %d)", err, h.groq.calls)
	}
	if r := h.observed.take(t); r.Outcome != RequestFailed || r.Operation != OperationTranscription {
		t.Errorf("observed %+v", r)
	}

	for model, want := range map[string]string{
		"anthropic/claude-sonnet-4-5": "has no audio API here",
		"claude-sonnet-4-5":           "has no audio API here",
		"gemini/gemini-2.5-flash":     "has no audio API here",
		"nobody/whisper":              "unknown provider",
		"acme-stt":                    "does not exist",
	} {
		_, err := h.g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: model, File: []byte("x")})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "model" || !strings.Contains(ve.Error(), want) {
			t.Errorf("%s: %v, want a validation error of model saying %q", model, err, want)
		}
	}
	if _, err := h.g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: "acme-stt", File: []byte("x")}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := h.g.Speak(ctx, Scope{}, &SpeechRequest{Model: "claude-sonnet-4-5", Input: "hi", Voice: "alloy"}); err == nil || !strings.Contains(err.Error(), "has no audio API here") {
		t.Errorf("speech with a chat model: %v", err)
	}
}

// TestTranscribeRetries: a 503 is retried on the same model under the breakers' rules.
func TestTranscribeRetries(t *testing.T) {
	h := newAudioHarness(t)
	h.openai.script(503, 503)
	res, err := h.g.Transcribe(context.Background(), Scope{}, &TranscriptionRequest{Model: "whisper-1", File: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 3 || res.Attempts[0].Outcome != OutcomeError || res.Attempts[2].Outcome != OutcomeOK || h.openai.calls != 3 {
		t.Errorf("attempts %+v, calls %d", res.Attempts, h.openai.calls)
	}
}

// TestAudioValidation: each refusal names its field.
func TestAudioValidation(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	f := func(v float64) *float64 { return &v }
	for field, req := range map[string]*TranscriptionRequest{
		"stream":                     {Model: "whisper-1", File: []byte("x"), Stream: true},
		"model":                      {File: []byte("x")},
		"file":                       {Model: "whisper-1"},
		"response_format":            {Model: "whisper-1", File: []byte("x"), ResponseFormat: "mp3"},
		"temperature":                {Model: "whisper-1", File: []byte("x"), Temperature: f(1.5)},
		"timestamp_granularities[1]": {Model: "whisper-1", File: []byte("x"), TimestampGranularities: []string{"word", "char"}},
	} {
		_, err := h.g.Transcribe(ctx, Scope{}, req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	for field, req := range map[string]*SpeechRequest{
		"model":           {Input: "hi", Voice: "alloy"},
		"input":           {Model: "tts-1", Input: strings.Repeat("é", MaxSpeechInput+1), Voice: "alloy"},
		"voice":           {Model: "tts-1", Input: "hi"},
		"response_format": {Model: "tts-1", Input: "hi", Voice: "alloy", ResponseFormat: "ogg"},
		"speed":           {Model: "tts-1", Input: "hi", Voice: "alloy", Speed: f(5)},
		"stream_format":   {Model: "tts-1", Input: "hi", Voice: "alloy", StreamFormat: "sse"},
	} {
		_, err := h.g.Speak(ctx, Scope{}, req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := h.g.Speak(ctx, Scope{}, &SpeechRequest{Model: "tts-1", Input: strings.Repeat("é", MaxSpeechInput), Voice: "alloy"}); err != nil {
		t.Errorf("4096 characters (8192 bytes) refused: %v", err)
	}
	if h.openai.calls != 1 {
		t.Errorf("%d upstream calls, want only the valid request's", h.openai.calls)
	}
}

// TestAudioModelRestrictions: a scoped key held to some models may call them by their bare
// names and is refused the others before any call.
func TestAudioModelRestrictions(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	scope := Scope{Budget: NewBudget(BudgetLimits{AllowedModels: []string{"whisper-1", "openai/tts-1"}})}
	if _, err := h.g.Transcribe(ctx, scope, &TranscriptionRequest{Model: "openai/whisper-1", File: []byte("x")}); err != nil {
		t.Errorf("allowed by its bare name: %v", err)
	}
	if _, err := h.g.Transcribe(ctx, scope, &TranscriptionRequest{Model: "whisper-large-v3", File: []byte("x")}); !errors.Is(err, ErrModelNotAllowed) {
		t.Errorf("groq: %v", err)
	}
	if _, err := h.g.Transcribe(ctx, scope, &TranscriptionRequest{Model: "stt", File: []byte("x")}); !errors.Is(err, ErrModelNotAllowed) {
		t.Errorf("a group with a member not allowed: %v", err)
	}
	if _, err := h.g.Speak(ctx, scope, &SpeechRequest{Model: "tts-1-hd", Input: "hi", Voice: "alloy"}); !errors.Is(err, ErrModelNotAllowed) {
		t.Errorf("tts-1-hd: %v", err)
	}
	if h.groq.calls != 0 || h.openai.calls != 1 {
		t.Errorf("calls: openai %d groq %d", h.openai.calls, h.groq.calls)
	}
	if !h.g.Allows(scope, "whisper-1") || h.g.Allows(scope, "whisper-large-v3") {
		t.Error("Allows disagrees")
	}
	// A spent budget refuses before any call.
	spent := Scope{Budget: NewBudget(BudgetLimits{MaxCalls: 1})}
	if _, err := h.g.Transcribe(ctx, spent, &TranscriptionRequest{Model: "whisper-1", File: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Transcribe(ctx, spent, &TranscriptionRequest{Model: "whisper-1", File: []byte("x")}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("spent budget: %v", err)
	}
	if full, ok := h.g.ResolveAudioModel("whisper-1"); !ok || full != "openai/whisper-1" {
		t.Errorf("ResolveAudioModel(whisper-1) = %s %v", full, ok)
	}
	if _, ok := h.g.ResolveAudioModel("openai/whisper-9"); ok {
		t.Error("ResolveAudioModel took a model the catalogue does not list")
	}
	for _, m := range h.g.Models() {
		if strings.Contains(m, "whisper") || strings.Contains(m, "tts-1") {
			t.Errorf("chat models list %s", m)
		}
	}
}

// TestSpeakStreamsBillsAndRecords: the audio is read as it comes with the upstream's
// Content-Type; Close bills tts-1's characters and records a speech request.
func TestSpeakStreamsBillsAndRecords(t *testing.T) {
	h := newAudioHarness(t)
	budget := NewBudget(BudgetLimits{})
	s, err := h.g.Speak(context.Background(), Scope{Owner: "k1", Budget: budget}, &SpeechRequest{Model: "tts-1", Input: "Hello world", Voice: "alloy"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "AUDIO:Hello world" || s.ContentType != "audio/mpeg" || s.Model != "openai/tts-1" {
		t.Fatalf("audio %q %v %q %s", b, err, s.ContentType, s.Model)
	}
	want := 11 * 1.5e-05
	if !s.Costs.PriceKnown || math.Abs(s.Costs.TotalTokensCost-want) > 1e-12 {
		t.Errorf("costs %+v", s.Costs)
	}
	if used := budget.Used(context.Background()); used.CostUSD != 0 {
		t.Errorf("billed before Close: %+v", used)
	}
	s.Close()
	s.Close()
	if used := budget.Used(context.Background()); used.Calls != 1 || math.Abs(used.CostUSD-want) > 1e-12 {
		t.Errorf("budget used %+v", used)
	}
	if e := h.ledger.all(); len(e) != 1 || !e[0].Complete || e[0].Model != "openai/tts-1" {
		t.Errorf("ledger %+v", e)
	}
	r := h.observed.take(t)
	if r.Operation != OperationSpeech || r.Outcome != RequestOK || !r.Stream || r.Model != "openai/tts-1" || math.Abs(r.Usage.Costs.Spent()-want) > 1e-12 {
		t.Errorf("observed %+v", r)
	}

	// gpt-4o-mini-tts: its text input priced (tokens counted locally), its audio out
	// unknown.
	s, err = h.g.Speak(context.Background(), Scope{}, &SpeechRequest{Model: "gpt-4o-mini-tts", Input: "Hello world", Voice: "coral", Instructions: "Cheerful."})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(s)
	s.Close()
	if s.Costs.PriceKnown || s.Costs.TotalTokensCost <= 0 {
		t.Errorf("gpt-4o-mini-tts costs %+v", s.Costs)
	}
	if r := h.observed.take(t); !r.UsageEstimated || r.Usage.PromptTokens == 0 {
		t.Errorf("observed %+v", r)
	}
}

// TestSpeakRetriesOnlyBeforeTheFirstByte: a failure before any audio is retried; one after
// the first bytes ends the answer (Read fails, nothing is asked again) and is recorded as
// a broken stream, still billed.
func TestSpeakRetriesOnlyBeforeTheFirstByte(t *testing.T) {
	h := newAudioHarness(t)
	h.openai.script(503)
	s, err := h.g.Speak(context.Background(), Scope{}, &SpeechRequest{Model: "tts-1", Input: "Hi", Voice: "alloy"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(s); err != nil || string(b) != "AUDIO:Hi" || len(s.Attempts) != 2 || h.openai.calls != 2 {
		t.Errorf("retried: %q %v attempts %+v", b, err, s.Attempts)
	}
	s.Close()
	h.observed.take(t)

	h.openai.script()
	h.openai.mu.Lock()
	h.openai.cutAfterFirst = true
	h.openai.mu.Unlock()
	budget := NewBudget(BudgetLimits{})
	s, err = h.g.Speak(context.Background(), Scope{Budget: budget}, &SpeechRequest{Model: "tts-1", Input: "Hi", Voice: "alloy"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(s)
	var pe *providers.Error
	if string(b) != "AUDIO:Hi" || !errors.As(err, &pe) || pe.Kind != providers.KindStreamBroken {
		t.Errorf("cut: %q %v", b, err)
	}
	s.Close()
	if h.openai.calls != 1 {
		t.Errorf("asked again after audio had come: %d calls", h.openai.calls)
	}
	if r := h.observed.take(t); r.Outcome != RequestStreamFailed || r.Operation != OperationSpeech {
		t.Errorf("observed %+v", r)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || used.CostUSD <= 0 {
		t.Errorf("budget used %+v", used)
	}

	// Every attempt failing before any audio: the caller gets the failure, no Speech.
	h.openai.script(503, 503, 503)
	if _, err := h.g.Speak(context.Background(), Scope{}, &SpeechRequest{Model: "tts-1", Input: "Hi", Voice: "alloy"}); !errors.Is(err, ErrAllFailed) {
		t.Errorf("all failed: %v", err)
	}
	if r := h.observed.take(t); r.Outcome != RequestFailed || r.Operation != OperationSpeech {
		t.Errorf("observed %+v", r)
	}
}

// A key with a USD bound is charged by the audio's length: a json answer is asked of Groq
// as verbose_json and answered as json, its minute charged.
func TestUSDBoundKeysTranscribeOnlyWhatTheyCanBeChargedFor(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
	scope := Scope{Owner: "k1", Budget: budget}
	res, err := h.g.Transcribe(ctx, scope, &TranscriptionRequest{Model: "groq/whisper-large-v3", File: []byte("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != `{"text":"heard hi"}` || h.groq.formats[len(h.groq.formats)-1] != "verbose_json" {
		t.Fatalf("answered %s after asking Groq %v", res.Body, h.groq.formats)
	}
	if used := budget.Used(ctx); used.CostUSD <= 0 || !res.Costs.PriceKnown {
		t.Fatalf("Groq's minute charged $%v (price known %v)", used.CostUSD, res.Costs.PriceKnown)
	}
}

// Text, srt and vtt answers, which do not say how long the audio was, are billed to a key
// with a USD budget as LiteLLM bills them: text is asked of the upstream as json (Groq's
// as verbose_json) and answered as its text, its minute charged; srt and vtt are measured
// by the uploaded WAV file's header or, for another file, by the answer's last cue.
func TestUSDBoundKeysAreChargedForTextSRTAndVTT(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	minute := 0.006 // whisper-1's price of a minute
	for _, tc := range []struct {
		model, asked string
		api          *fakeAudioAPI
		upstream     string
	}{
		{"whisper-1", "text", h.openai, "json"},
		{"groq/whisper-large-v3", "text", h.groq, "verbose_json"},
	} {
		budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
		res, err := h.g.Transcribe(ctx, Scope{Owner: "k1", Budget: budget}, &TranscriptionRequest{Model: tc.model, File: []byte("hi"), ResponseFormat: tc.asked})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.model, tc.asked, err)
		}
		if string(res.Body) != "heard hi\n" || res.ContentType != "text/plain; charset=utf-8" || tc.api.formats[len(tc.api.formats)-1] != tc.upstream {
			t.Errorf("%s: answered %q (%s) after asking %v", tc.model, res.Body, res.ContentType, tc.api.formats)
		}
		if used := budget.Used(ctx); used.CostUSD <= 0 || !res.Costs.PriceKnown {
			t.Errorf("%s: charged $%v (price known %v)", tc.model, used.CostUSD, res.Costs.PriceKnown)
		}
	}
	if got := h.openai.formats[0]; got != "json" {
		t.Fatalf("text asked of OpenAI as %q", got)
	}

	// A 30-second WAV file (8 kHz, 16-bit mono: 16,000 bytes a second) and a file whose
	// length only the answer's last cue (00:00:45.500) tells.
	wav := wavFile(8000, 30)
	srt := "1\n00:00:00,000 --> 00:00:02,000\nhello\n\n2\n00:00:40,000 --> 00:00:45,500\nbye\n"
	vtt := "WEBVTT\n\n00:40.000 --> 00:45.500\nbye\n"
	for _, tc := range []struct {
		what, format, answer string
		file                 []byte
		seconds              float64
	}{
		{"srt of a WAV file", "srt", "1\n00:00:00,000 --> 00:00:29,000\nhello\n", wav, 30},
		// A header whose byte rate says less than the cues heard (a hand-made header) is
		// not taken at its word: the last cue's end is the least the audio lasted.
		{"srt of a WAV file whose header says less", "srt", srt, wavFile(8000, 1), 45.5},
		{"srt of another file", "srt", srt, []byte("ID3"), 45.5},
		{"vtt of another file", "vtt", vtt, []byte("ID3"), 45.5},
	} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, tc.answer)
		}))
		env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": up.URL + "/v1"}
		g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog()})
		if err != nil {
			t.Fatal(err)
		}
		budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
		res, err := g.Transcribe(ctx, Scope{Owner: "k1", Budget: budget}, &TranscriptionRequest{Model: "whisper-1", File: tc.file, Filename: "a.wav", ResponseFormat: tc.format})
		up.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if string(res.Body) != tc.answer || res.Usage.Seconds != tc.seconds || !res.Costs.PriceKnown {
			t.Errorf("%s: answered %q, %v seconds (price known %v), want %v", tc.what, res.Body, res.Usage.Seconds, res.Costs.PriceKnown, tc.seconds)
		}
		if want := tc.seconds / 60 * minute; math.Abs(budget.Used(ctx).CostUSD-want) > 1e-9 {
			t.Errorf("%s: charged $%v, want $%v", tc.what, budget.Used(ctx).CostUSD, want)
		}
	}
}

// wavFile is a silent 16-bit mono PCM WAV file of the given rate and length.
func wavFile(rate, seconds int) []byte {
	data := rate * 2 * seconds
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

func TestAudioRequestsCarryTags(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	if _, err := h.g.Transcribe(ctx, Scope{Owner: "k"}, &TranscriptionRequest{Model: "whisper-1", File: []byte("x"), Tags: []string{"feature:notes"}}); err != nil {
		t.Fatal(err)
	}
	if r := h.observed.take(t); len(r.Tags) != 1 || r.Tags[0] != "feature:notes" {
		t.Fatalf("observed tags %v", r.Tags)
	}
	var ve *ValidationError
	if _, err := h.g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: "whisper-1", File: []byte("x"), Tags: []string{"no spaces please"}}); !errors.As(err, &ve) || ve.Field != "tags" {
		t.Fatalf("a bad tag: %v", err)
	}
}

// TestTextTranscriptionOfGPT4oTranscribeIsAskedAsJSON: a text transcription of
// gpt-4o-transcribe (or gpt-4o-mini-transcribe), which refuses verbose_json and says its
// usage in json, is asked of the upstream as json also when the provider is not the openai
// preset (a --litellm-config deployment with a key of its own, Azure).
func TestTextTranscriptionOfGPT4oTranscribeIsAskedAsJSON(t *testing.T) {
	up := newFakeAudioAPI(t)
	reg := fakeRegistry{"openai-mine": providers.NewOpenAI(providers.Config{Name: "openai-mine", BaseURL: up.srv.URL + "/v1", APIKey: "k"})}
	g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"openai-mine/gpt-4o-transcribe", "openai-mine/gpt-4o-mini-transcribe"} {
		res, err := g.Transcribe(context.Background(), Scope{Owner: "k1"}, &TranscriptionRequest{Model: m, File: []byte("hi"), ResponseFormat: "text"})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if got := up.formats[len(up.formats)-1]; got != "json" || string(res.Body) != "heard hi\n" {
			t.Errorf("%s: asked upstream as %q, answered %q; want json and the text", m, got, res.Body)
		}
	}
}

// TestSpeechSSEPassesOverTTS1: stream_format sse asked of a group passes over its tts-1
// members (OpenAI refuses sse for them) and calls the first that streams events; a group
// of tts-1 models only is a 400 naming stream_format, nothing called.
func TestSpeechSSEPassesOverTTS1(t *testing.T) {
	h := newAudioHarness(t)
	sp, err := h.g.Speak(context.Background(), Scope{Owner: "k"}, &SpeechRequest{Model: "voice", Voice: "alloy", Input: "Hi", StreamFormat: "sse"})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, sp)
	sp.Close()
	if sp.Model != "openai/gpt-4o-mini-tts" || slices.Contains(h.openai.models, "tts-1") {
		t.Errorf("answered by %s after calling %v: want gpt-4o-mini-tts, tts-1 passed over", sp.Model, h.openai.models)
	}
	h.openai.script()
	_, err = h.g.Speak(context.Background(), Scope{Owner: "k"}, &SpeechRequest{Model: "classic-voice", Voice: "alloy", Input: "Hi", StreamFormat: "sse"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "stream_format" || len(h.openai.models) != 0 {
		t.Errorf("a tts-1 group with sse: %v (called %v), want a 400 naming stream_format", err, h.openai.models)
	}
}
