package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestServeRefusesEnvBaseURLFragment: serve does not start when a provider's base URL
// variable has a fragment (#...), which no HTTP client sends: the error names the variable
// and does not echo what follows '#'.
func TestServeRefusesEnvBaseURLFragment(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "https://proxy.example/v1#sk-secret")
	var logs bytes.Buffer
	w := &wiring{cfg: &serveConfig{}, store: memstore.New(), log: slog.New(slog.NewTextHandler(&logs, nil))}
	_, err := w.options(context.Background())
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") || !strings.Contains(err.Error(), "fragment") {
		t.Fatalf("options = %v, want a refusal naming OPENAI_BASE_URL's fragment", err)
	}
	if strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("the error echoes the fragment: %v", err)
	}
}
