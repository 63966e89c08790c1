package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// Each attempt records the max_tokens its call was sent (Attempt.MaxTokens, what traces
// show), not the request's: with max_tokens fitted to each model's output limit (the
// Messages and Gemini surfaces), a model whose limit is lower than the request's 30000 is
// sent its limit, one whose limit is higher the request's; checked against what each
// upstream call got, on the plain path, the stream and the hedged one.
func TestAttemptsRecordTheMaxTokensTheyWereSent(t *testing.T) {
	for _, mode := range []string{"complete", "stream", "hedged"} {
		t.Run(mode, func(t *testing.T) {
			fake := newFake("openai")
			fake.on("gpt-4o-mini", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
			fake.on("gpt-4.1", step{text: "answer"})
			h := newHarness(t, func(o *Options) {
				o.Providers = fakeRegistry{"openai": fake}
				o.Prices = providers.DefaultCatalog()
			})
			req := userReq("hi", "openai/gpt-4o-mini", "openai/gpt-4.1")
			req.ephemeral, req.MaxRetries, req.MaxTokens, req.fitMaxTokens = true, intp(0), 30000, true
			var attempts []Attempt
			switch mode {
			case "stream":
				req.Stream = true
				st, err := h.g.Stream(context.Background(), Scope{}, req)
				if err != nil {
					t.Fatal(err)
				}
				for {
					if _, err := st.Recv(); err != nil {
						break
					}
				}
				attempts = st.Response().Attempts
				st.Close()
			default:
				if mode == "hedged" {
					req.FaultPolicy.HedgeAfter = ptr(60.0)
				}
				resp, err := h.g.Complete(context.Background(), Scope{}, req)
				if err != nil {
					t.Fatal(err)
				}
				attempts = resp.Attempts
			}
			fake.mu.Lock()
			sent := append([]providers.Request(nil), fake.requests...)
			fake.mu.Unlock()
			if len(attempts) != 2 || len(sent) != 2 {
				t.Fatalf("%d attempts, %d calls; want 2 each: %+v", len(attempts), len(sent), attempts)
			}
			for i, want := range []int{16384, 30000} { // gpt-4o-mini's limit; gpt-4.1's is 32768
				if sent[i].MaxTokens != want || attempts[i].MaxTokens != sent[i].MaxTokens {
					t.Errorf("attempt %d (%s): recorded max_tokens %d, the upstream got %d; want both %d",
						i+1, attempts[i].Model, attempts[i].MaxTokens, sent[i].MaxTokens, want)
				}
			}
		})
	}
}
