package modelid

import (
	"slices"
	"testing"
)

func TestKey(t *testing.T) {
	for in, want := range map[string]string{
		"openai/gpt-4o":                         "gpt-4o",
		"openai/gpt-4o-2024-08-06":              "gpt-4o",
		"gpt-4o-mini-2024-07-18":                "gpt-4o-mini",
		"anthropic/claude-3-5-sonnet-20241022":  "claude-3-5-sonnet",
		"anthropic/claude-3.5-sonnet-latest":    "claude-3-5-sonnet",
		"google/gemini-1.5-pro-002":             "gemini-1.5-pro",
		"meta/llama-3.1-8b-instruct":            "llama-3.1-8b-instruct",
		"meta-llama/Meta-Llama-3.1-8B-Instruct": "llama-3.1-8b-instruct",
		"mistralai/mistral-large-2407":          "mistral-large",
		"openai/o1-mini-2024-09-12":             "o1-mini",
		"nvidia/llama3-chatqa-1.5-8b":           "llama-3-chatqa-1.5-8b",
		"deepseek/deepseek-v2.5-0908":           "deepseek-v2.5",
	} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRelatives(t *testing.T) {
	r := Relatives(Key("together/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo"))
	if len(r) < 2 || r[0] != "llama-3.1-70b-instruct" || r[1] != "llama-3.1-70b" {
		t.Errorf("relatives = %v", r)
	}
	if r := Relatives("llama-3.1-70b"); !slices.Contains(r, "llama-3.1-70b-instruct") {
		t.Errorf("relatives of a bare name = %v", r)
	}
	if r := Relatives("gpt-4o-mini"); slices.Contains(r, "gpt-4o") {
		t.Errorf("mini must not borrow from the full model: %v", r)
	}
}
