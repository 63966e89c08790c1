package completions

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// What guardrails add to a typical chat request: a system prompt and three turns, about
// 1.3 KB of text, answered at once by an in-memory provider (no network), so that the
// difference between the benchmarks is the guardrails' own cost.

var benchGuardrailMessages = []Message{
	TextMessage("system", strings.Repeat("You are a helpful assistant for an online shop. Answer briefly and politely. ", 8)),
	TextMessage("user", "Hi, I ordered a blue jacket last week (order 48213) and it has not arrived yet. Can you check where it is?"),
	TextMessage("assistant", strings.Repeat("I checked your order: it left the warehouse on Monday and the carrier expects to deliver it within two days. ", 4)),
	TextMessage("user", "Thanks. If it does not come by Friday, can I get a refund instead? You can reach me at jane.doe@example.com."),
}

func benchGuardedGateway(b *testing.B, gs ...GuardrailConfig) *Gateway {
	p := newFake("openai").on("gpt-4o-mini", step{text: "Yes, you can ask for a refund after Friday.", usage: providers.Usage{PromptTokens: 400, CompletionTokens: 10}})
	g, err := New(Options{Providers: fakeRegistry{"openai": p}, Prices: providers.DefaultCatalog(), Store: memstore.New(), Guardrails: gs})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func benchGuarded(b *testing.B, gs ...GuardrailConfig) {
	g := benchGuardedGateway(b, gs...)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := &Request{Models: []string{"openai/gpt-4o-mini"}, Messages: benchGuardrailMessages, ephemeral: true}
		if _, err := g.Complete(ctx, Scope{Owner: "k"}, req); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	benchBannedWords = GuardrailConfig{Name: "words", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, DefaultOn: true,
		Words: []string{"project x", "confidential", "internal only", "password", "jailbreak"}}
	benchRegex = GuardrailConfig{Name: "regex", Kind: GuardrailRegex, Mode: GuardrailPreCall, DefaultOn: true,
		Patterns: []string{`(?i)ignore (all )?previous instructions`, `\bSSN:? ?\d{3}-\d{2}-\d{4}\b`}}
	benchPII     = GuardrailConfig{Name: "pii", Kind: GuardrailPII, Mode: GuardrailPreCall, DefaultOn: true}
	benchSecrets = GuardrailConfig{Name: "secrets", Kind: GuardrailSecrets, Mode: GuardrailPreCall, DefaultOn: true}
)

// BenchmarkGuardrailsNone is the request without guardrails (the baseline).
func BenchmarkGuardrailsNone(b *testing.B) { benchGuarded(b) }

// BenchmarkGuardrailsBannedWords adds a banned_words guardrail (5 words) that does not
// match: every text is scanned in full.
func BenchmarkGuardrailsBannedWords(b *testing.B) { benchGuarded(b, benchBannedWords) }

// BenchmarkGuardrailsRegex adds a regex guardrail (2 patterns, one case-insensitive) that
// does not match.
func BenchmarkGuardrailsRegex(b *testing.B) { benchGuarded(b, benchRegex) }

// BenchmarkGuardrailsPIIMask adds the pii and secrets guardrails, masking the email.
func BenchmarkGuardrailsPIIMask(b *testing.B) { benchGuarded(b, benchPII, benchSecrets) }
