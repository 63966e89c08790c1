package routing

import "testing"

// TestReview10cRelativeAzureGPT35Turbo: Azure names GPT-3.5 Turbo "gpt-35-turbo". modelLine
// reads "35" as version [35] of line "gpt-#-turbo", above gpt-4-turbo's [4], so GPT-3.5
// Turbo is scored with GPT-4 Turbo's figure: a relative from a NEWER model.
func TestReview10cRelativeAzureGPT35Turbo(t *testing.T) {
	for _, name := range []string{"azure/gpt-35-turbo", "azure/gpt-35-turbo-0125", "gpt-35-turbo-1106"} {
		if rel, b, ok := LookupBenchmarkRelative(name); ok {
			t.Errorf("%s: relative %s (%.3f); gpt-4-turbo is newer than GPT-3.5", name, rel, b.Quality)
		}
	}
}

// TestReview10cRelativeReorderedClaudeNames: several hosts (Replicate, Snowflake, Vercel,
// DeepInfra, Heroku, and Anthropic's own claude-4-opus-20250514 alias in LiteLLM) spell
// Claude 4.x as "claude-4-sonnet" / "claude-4.5-haiku". The table has those very models as
// claude-sonnet-4 / claude-haiku-4-5 / claude-opus-4, but the line "claude-#-sonnet" only
// holds Claude 3.x, so they get a Claude 3.x figure.
func TestReview10cRelativeReorderedClaudeNames(t *testing.T) {
	for name, want := range map[string]string{
		"replicate/anthropic/claude-4-sonnet":   "claude-sonnet-4",
		"claude-4-opus-20250514":                "claude-opus-4",
		"replicate/anthropic/claude-4.5-haiku":  "claude-haiku-4-5",
		"replicate/anthropic/claude-4.5-sonnet": "claude-sonnet-4-5",
	} {
		wantB, _ := LookupBenchmark(want)
		if b, ok := LookupBenchmark(name); ok && b.Quality == wantB.Quality {
			continue
		}
		rel, b, ok := LookupBenchmarkRelative(name)
		if !ok || b.Quality != wantB.Quality {
			t.Errorf("%s: relative %q quality %.3f, want %s's %.3f", name, rel, b.Quality, want, wantB.Quality)
		}
	}
}

// TestReview10cRelativeSameVersionEntry: a name whose line and version equal a table entry
// (after the -exp/-preview suffix or a date is set aside) is that model, but
// LookupBenchmarkRelative takes only strictly older versions, so it gets the previous
// generation's figure: gemini-2.0-flash-exp (a Gemini API id) gets gemini-1.5-flash's 0.591,
// not gemini-2.0-flash's 0.764; OpenRouter's google/gemini-2.5-pro-preview gets
// gemini-1.5-pro's; mistral-small-3.2-24b-instruct (in the table dated -2506) gets 3.1's.
func TestReview10cRelativeSameVersionEntry(t *testing.T) {
	for name, own := range map[string]string{
		"gemini/gemini-2.0-flash-exp":                         "gemini-2.0-flash",
		"openrouter/google/gemini-2.5-pro-preview":            "gemini-2.5-pro",
		"openrouter/mistralai/mistral-small-3.2-24b-instruct": "mistral-small-3.2-24b-instruct-2506",
	} {
		want, _ := LookupBenchmark(own)
		if b, ok := LookupBenchmark(name); ok && b.Quality == want.Quality {
			continue
		}
		rel, b, ok := LookupBenchmarkRelative(name)
		if !ok || b.Quality != want.Quality {
			t.Errorf("%s: relative %q (%.3f), want %s's %.3f", name, rel, b.Quality, own, want.Quality)
		}
	}
}
