package completions

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// BenchmarkModerate is a moderation of one short text through the adapter alone (the HTTP
// call and decoding OpenAI's answer, 13 categories) and through Gateway.Moderate
// (validation, resolution, the attempt's bookkeeping, the ledger, the answer encoded as the
// server writes it).
func BenchmarkModerate(b *testing.B) {
	cats := []string{"harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent", "self-harm",
		"self-harm/intent", "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic"}
	var c, s, a []string
	for _, k := range cats {
		c = append(c, `"`+k+`":false`)
		s = append(s, `"`+k+`":0.00012`)
		a = append(a, `"`+k+`":["text"]`)
	}
	body := []byte(`{"id":"modr-1","model":"omni-moderation-2024-09-26","results":[{"flagged":false,"categories":{` + strings.Join(c, ",") +
		`},"category_scores":{` + strings.Join(s, ",") + `},"category_applied_input_types":{` + strings.Join(a, ",") + `}}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}
	reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
	input := ModerationInput(`"Is it safe to mix bleach and ammonia when cleaning the bathroom?"`)
	b.Run("adapter", func(b *testing.B) {
		p, _ := reg.Lookup("openai")
		req := &providers.ModerationRequest{Model: DefaultModerationModel, Input: json.RawMessage(input), Results: 1}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.(providers.Moderator).Moderate(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), Ledger: &recordingLedger{}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := g.Moderate(context.Background(), Scope{Owner: "k"}, &ModerationRequest{Input: input})
			if err != nil {
				b.Fatal(err)
			}
			if err := json.NewEncoder(io.Discard).Encode(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
