package completions

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestOversizedOpAnswersAreCharged: an answer over the size cap of a rerank, image,
// moderation or transcription call fails the request as a chat answer's does, and is
// charged as one is: to the budget and the ledger as a part (not the answer), at the
// operation's own estimate of the call (marked estimated) since the answer's usage was
// never read — rerank by Cohere's search units or by its tokens, images per image of the
// size and quality asked (a gpt-image model's quality absent at medium), a transcription
// by its audio's length (a WAV header's, else the file's size) or, for a model priced by
// its tokens, that audio's input tokens (audio tokens, as the history shows them), moderation at no cost — and the request's record
// carries that usage with the attempt's answer_bytes.
func TestOversizedOpAnswersAreCharged(t *testing.T) {
	const announced = 200 << 20 // past every operation's cap
	url := fakeOversizedAPI(t, announced).URL
	ledger, obs := &recordingLedger{}, &recordingObserver{}
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": url + "/v1",
		"COHERE_API_KEY": "co", "COHERE_BASE_URL": url, "JINA_API_KEY": "ji", "JINA_BASE_URL": url + "/v1"}
	cat := providers.DefaultCatalog()
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: cat, Ledger: ledger, Observer: obs, DefaultMaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(what string, err error, budget *Budget, wantUSD float64, estimated bool) RequestRecord {
		t.Helper()
		if !errors.Is(err, providers.ErrResponseTooLarge) {
			t.Fatalf("%s: err %v, want the answer refused as too large", what, err)
		}
		if wantUSD < 0 || math.IsNaN(wantUSD) {
			t.Fatalf("%s: bad expected cost %v", what, wantUSD)
		}
		if used := budget.Used(ctx); math.Abs(used.CostUSD-wantUSD) > 1e-12 {
			t.Errorf("%s: budget charged $%v, want $%v", what, used.CostUSD, wantUSD)
		}
		e := ledger.all()
		if len(e) != 1 || e[0].Complete || e[0].Estimated != estimated || !e[0].Cost.PriceKnown || math.Abs(e[0].Cost.TotalTokensCost-wantUSD) > 1e-12 {
			t.Errorf("%s: ledger %+v, want one part at $%v estimated %v", what, e, wantUSD, estimated)
		}
		ledger.mu.Lock()
		ledger.entries = nil
		ledger.mu.Unlock()
		r := obs.take(t)
		if r.Outcome != RequestFailed || r.UsageEstimated != estimated || math.Abs(r.Usage.Costs.TotalTokensCost-wantUSD) > 1e-12 {
			t.Errorf("%s: record usage %+v estimated %v outcome %s", what, r.Usage, r.UsageEstimated, r.Outcome)
		}
		if len(r.Attempts) != 1 || r.Attempts[0].AnswerBytes != announced || r.Attempts[0].Usage == nil || r.Attempts[0].Estimated != estimated ||
			r.Attempts[0].Usage.Costs != r.Usage.Costs {
			t.Errorf("%s: attempts %+v", what, r.Attempts)
		}
		return r
	}

	// Rerank: Cohere's one search unit (a query of under 100 documents); Jina's tokens.
	docs := []RerankDocument{"Mars has two moons.", "Saturn has the most known moons.", "Venus has none."}
	b := NewBudget(BudgetLimits{})
	_, err = g.Rerank(ctx, Scope{Owner: "k", Budget: b}, &RerankRequest{Model: "cohere/rerank-v3.5", Query: "most moons", Documents: docs})
	check("cohere rerank", err, b, cat.RerankCost("cohere/rerank-v3.5", providers.RerankUsage{SearchUnits: 1}).TotalUSD, true)
	if c := cat.RerankCost("cohere/rerank-v3.5", providers.RerankUsage{SearchUnits: 1}); !c.Known || c.TotalUSD <= 0 {
		t.Fatalf("the catalogue prices cohere/rerank-v3.5 at %+v", c)
	}
	b = NewBudget(BudgetLimits{})
	_, err = g.Rerank(ctx, Scope{Owner: "k", Budget: b}, &RerankRequest{Model: "jina/jina-reranker-v2-base-multilingual", Query: "most moons", Documents: docs})
	tokens := 3 * ((len("most moons") + 3) / 4)
	for _, d := range docs {
		tokens += (len(d) + 3) / 4
	}
	jina := cat.RerankCost("jina/jina-reranker-v2-base-multilingual", providers.RerankUsage{Tokens: tokens}).TotalUSD
	if jina <= 0 {
		t.Fatalf("jina's rerank priced at %v", jina)
	}
	check("jina rerank", err, b, jina, true)

	// Images: per image of the size and quality asked.
	b = NewBudget(BudgetLimits{})
	_, err = g.GenerateImages(ctx, Scope{Owner: "k", Budget: b}, &ImageGenerationRequest{Model: "openai/dall-e-3", Prompt: "a lighthouse", Size: "1024x1792", Quality: "hd"})
	hd := cat.ImageCost("openai/dall-e-3", providers.ImageUsage{Images: 1, Size: "1024x1792", Quality: "hd"}).TotalUSD
	if hd <= 0 {
		t.Fatalf("dall-e-3 hd priced at %v", hd)
	}
	check("dall-e-3", err, b, hd, true)
	b = NewBudget(BudgetLimits{})
	_, err = g.GenerateImages(ctx, Scope{Owner: "k", Budget: b}, &ImageGenerationRequest{Model: "openai/gpt-image-1", Prompt: "a lighthouse", N: intp(2)})
	check("gpt-image-1", err, b, 2*0.042, true) // medium/1024-x-1024/gpt-image-1: $0.042 an image

	// Moderation: free, the call recorded all the same.
	b = NewBudget(BudgetLimits{})
	_, err = g.Moderate(ctx, Scope{Owner: "k", Budget: b}, &ModerationRequest{Model: "openai/omni-moderation-latest", Input: ModerationInput(`"hello"`)})
	check("moderation", err, b, 0, false)

	// Transcriptions: a WAV file's length by the second (whisper-1); a file of another
	// format by its size at 128 kbit/s, and a token-priced model by that audio's tokens.
	b = NewBudget(BudgetLimits{})
	_, err = g.Transcribe(ctx, Scope{Owner: "k", Budget: b}, &TranscriptionRequest{Model: "openai/whisper-1", File: wavFile(8000, 30), Filename: "a.wav"})
	whisper := cat.AudioCost("openai/whisper-1", providers.AudioUsage{Seconds: 30}).TotalUSD
	if whisper <= 0 {
		t.Fatalf("whisper-1 priced at %v", whisper)
	}
	check("whisper-1", err, b, whisper, true)
	b = NewBudget(BudgetLimits{})
	mp3 := []byte(strings.Repeat("\xff\xfb\x90\x00", 40000)) // 160,000 bytes: 10 s at 128 kbit/s
	_, err = g.Transcribe(ctx, Scope{Owner: "k", Budget: b}, &TranscriptionRequest{Model: "openai/gpt-4o-transcribe", File: mp3, Filename: "a.mp3"})
	gpt4o := cat.AudioCost("openai/gpt-4o-transcribe", providers.AudioUsage{InputTokens: 100, InputAudioTokens: 100}).TotalUSD
	if gpt4o <= 0 {
		t.Fatalf("gpt-4o-transcribe priced at %v", gpt4o)
	}
	r := check("gpt-4o-transcribe", err, b, gpt4o, true)
	if r.Usage.PromptTokens != 100 || r.Usage.PromptAudioTokens != 100 || r.Attempts[0].Usage.PromptAudioTokens != 100 {
		t.Errorf("gpt-4o-transcribe: recorded %+v (attempt %+v), want the audio's 100 prompt tokens, all audio", r.Usage, r.Attempts[0].Usage)
	}
	if used := b.Used(ctx); used.Tokens != 100 {
		t.Errorf("gpt-4o-transcribe: %d tokens charged, want the audio's 100", used.Tokens)
	}
}
