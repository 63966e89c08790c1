package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview10cVoyageKeyAloneStillWarns: Voyage serves embeddings only, yet a server whose
// only key is VOYAGE_API_KEY reports "LLM providers with a key: voyage" and drops the
// warning that completions (and optimization jobs) will fail.
func TestReview10cVoyageKeyAloneStillWarns(t *testing.T) {
	var logs bytes.Buffer
	env := map[string]string{"VOYAGE_API_KEY": "pa-x"}
	w := &wiring{cfg: &serveConfig{}, log: slog.New(slog.NewTextHandler(&logs, nil)),
		registry: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})}
	w.reportProviders(nil)
	if !strings.Contains(logs.String(), "no LLM provider has an API key") {
		t.Errorf("only an embeddings-only key: want the no-chat-provider warning, got:\n%s", logs.String())
	}
}
