package completions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func TestGatewayModels(t *testing.T) {
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}),
		providers.NewOpenAI(providers.Config{Name: "mylab", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}),
		// Registered as the environment's presets are, without its key: listed nowhere.
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: "http://127.0.0.1:1"}))
	g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	ms := g.Models()
	if !slices.Contains(ms, "openai/gpt-4o") || !slices.Contains(ms, "openai/gpt-4o-mini") || !slices.IsSorted(ms) {
		t.Fatalf("models %d, first %v", len(ms), ms[:min(5, len(ms))])
	}
	for _, m := range ms {
		if m[:7] != "openai/" {
			t.Fatalf("model %q of a provider without a key", m)
		}
	}
	for id, want := range map[string]bool{"openai/gpt-4o": true, "openai/no-such-model": false, "mylab/anything": true, "anthropic/claude-3-haiku-20240307": false, "bad": false} {
		if got := g.HasModel(id); got != want {
			t.Errorf("HasModel(%q) = %v, want %v", id, got, want)
		}
	}
}

// Models lists only what a chat request can name: no fine-tuning price templates, no
// realtime models, no transcription or speech models; OpenAI's chat-mode audio models
// (which answer aloud) are listed.
func TestGatewayModelsAreCallable(t *testing.T) {
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}))
	g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	ms := g.Models()
	for _, m := range ms {
		if strings.Contains(m, "ft:") || strings.Contains(m, "realtime") || strings.Contains(m, "whisper") || strings.Contains(m, "tts") || strings.Contains(m, "transcribe") {
			t.Errorf("Models lists %q", m)
		}
	}
	for _, m := range []string{"openai/gpt-4o-audio-preview", "openai/gpt-4o-mini-audio-preview", "openai/gpt-audio"} {
		if !slices.Contains(ms, m) {
			t.Errorf("Models lacks %q", m)
		}
	}
}

// On the OpenAI-compatible surface a model name without a provider is the configured
// provider's that serves it; ambiguous and unknown names are refused naming the field.
func TestBareModelNames(t *testing.T) {
	a, b := newFake("a"), newFake("b")
	g, err := New(Options{Providers: fakeRegistry{"a": a, "b": b}, Prices: listingPrices{
		"a": {"a/only-a", "a/both"}, "b": {"b/both", "b/vendor/nested"}}})
	if err != nil {
		t.Fatal(err)
	}
	openAI := func(model string) *Request { return openAIRequestFor(t, model) }
	a.on("only-a", step{text: "hello"})
	resp, err := g.Complete(context.Background(), Scope{}, openAI("only-a"))
	if err != nil || resp.Provider != "a" || resp.Model != "only-a" {
		t.Fatalf("bare only-a: %+v, %v", resp, err)
	}
	for _, c := range []struct{ model, msg string }{
		{"both", "several providers"},
		{"nowhere", "provider/model"},
		{"nested", "provider/model"},
	} {
		var ve *ValidationError
		if _, err := g.Complete(context.Background(), Scope{}, openAI(c.model)); !errors.As(err, &ve) || ve.Field != "model" || !strings.Contains(ve.Message, c.msg) {
			t.Errorf("%s: err = %v, want a validation error on model saying %q", c.model, err, c.msg)
		}
	}
	// GET /v1/models/{id} resolves the same way.
	for name, want := range map[string]string{"only-a": "a/only-a", "a/only-a": "a/only-a", "both": "", "nowhere": ""} {
		got, ok := g.ResolveModel(name)
		if ok != (want != "") || ok && got != want {
			t.Errorf("ResolveModel(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	// The native API keeps the spec's provider/model rule.
	if _, err := g.Complete(context.Background(), Scope{}, userReq("x", "only-a")); !errors.Is(err, ErrInvalid) {
		t.Errorf("native bare model: err = %v, want ErrInvalid", err)
	}
}

// listingPrices is a catalogue that lists given models per provider and prices none.
type listingPrices map[string][]string

func (l listingPrices) Cost(string, providers.Usage) providers.Cost { return providers.Cost{} }
func (l listingPrices) ChatModels(provider string) []string         { return l[provider] }

// A bare name the catalogue does not list (a model newer than it; Claude Code's names) goes
// to the configured maker of its family, which answers for it; a family whose maker is not
// configured, or no family, stays refused.
func TestBareNamesReachTheirMaker(t *testing.T) {
	anthropic, openai := newFake("anthropic"), newFake("openai")
	g, err := New(Options{Providers: fakeRegistry{"anthropic": anthropic, "openai": openai}, Prices: listingPrices{"anthropic": {"anthropic/claude-3-haiku"}}})
	if err != nil {
		t.Fatal(err)
	}
	openAI := func(model string) *Request { return openAIRequestFor(t, model) }
	anthropic.on("claude-opus-4-8", step{text: "hi"})
	openai.on("gpt-9-mini", step{text: "hi"})
	for name, want := range map[string]string{"claude-opus-4-8": "anthropic", "gpt-9-mini": "openai"} {
		resp, err := g.Complete(context.Background(), Scope{}, openAI(name))
		if err != nil || resp.Provider != want || resp.Model != name {
			t.Errorf("%s: %+v, %v; want %s to answer", name, resp, err, want)
		}
	}
	for _, name := range []string{"gemini-9-pro", "llama-9"} { // gemini is not configured here; llama has no maker
		var ve *ValidationError
		if _, err := g.Complete(context.Background(), Scope{}, openAI(name)); !errors.As(err, &ve) || ve.Field != "model" {
			t.Errorf("%s: err = %v, want a validation error on model", name, err)
		}
	}
}

// openAIRequestFor is an OpenAI-compatible request for model of one user message.
func openAIRequestFor(t *testing.T, model string) *Request {
	t.Helper()
	o := OpenAIChatRequest{Model: model, Messages: []OpenAIMessage{{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: "x"}}}}}}
	r, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
