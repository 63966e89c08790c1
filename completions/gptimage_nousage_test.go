package completions

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestGPTImageWithoutUsageIsPriced: a gpt-image answer that reports no usage (a
// compatible server's, a proxy's that drops it) was priced at nothing when its quality
// was auto or absent; OpenAI bills it all the same. It is now priced per image, as the
// catalogue prices gpt-image-1's images, at the quality and size the answer says it drew
// (OpenAI's answers carry both) else, when it says neither, at medium and 1024x1024,
// marked estimated in the ledger and the record; an answer with usage is priced by its
// tokens as before, not estimated. Generations and edits alike.
func TestGPTImageWithoutUsageIsPriced(t *testing.T) {
	var mu sync.Mutex
	answer := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	ledger, obs := &recordingLedger{}, &recordingObserver{}
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": srv.URL + "/v1"}
	cat := providers.DefaultCatalog()
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: cat, Ledger: ledger, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	png := testPNG(t, 8, 8)
	for _, tc := range []struct {
		what, answer, quality string
		edit                  bool
		want                  float64
		estimated             bool
	}{
		// OpenAI's answer without usage: the quality and size it drew.
		{"generation, answer says high 1536x1024", `{"created":1,"data":[{"b64_json":"aQ=="}],"quality":"high","size":"1536x1024"}`, "auto", false, 0.25, true},
		{"edit, answer says low 1024x1024", `{"created":1,"data":[{"b64_json":"aQ=="},{"b64_json":"aQ=="}],"quality":"low","size":"1024x1024"}`, "", true, 2 * 0.011, true},
		// An answer saying neither: medium at 1024x1024.
		{"generation, answer says nothing, auto asked", `{"created":1,"data":[{"b64_json":"aQ=="},{"b64_json":"aQ=="}]}`, "auto", false, 2 * 0.042, true},
		{"edit, answer says nothing, none asked", `{"created":1,"data":[{"b64_json":"aQ=="}]}`, "", true, 0.042, true},
		// Usage reported: by its tokens.
		{"generation with usage", `{"created":1,"data":[{"b64_json":"aQ=="}],"quality":"high","usage":{"input_tokens":10,"output_tokens":100,"total_tokens":110}}`, "auto", false,
			cat.ImageCost("openai/gpt-image-1", providers.ImageUsage{InputTokens: 10, OutputTokens: 100}).TotalUSD, false},
	} {
		mu.Lock()
		answer = tc.answer
		mu.Unlock()
		b := NewBudget(BudgetLimits{})
		var resp *ImageGenerationResponse
		if tc.edit {
			resp, err = g.EditImages(ctx, Scope{Owner: "k", Budget: b}, &ImageEditRequest{Model: "openai/gpt-image-1", Prompt: "add a hat", Quality: tc.quality,
				Images: []ImageFile{{Filename: "cat.png", ContentType: "image/png", Data: png}}})
		} else {
			resp, err = g.GenerateImages(ctx, Scope{Owner: "k", Budget: b}, &ImageGenerationRequest{Model: "openai/gpt-image-1", Prompt: "a cat", Quality: tc.quality})
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if tc.want <= 0 {
			t.Fatalf("%s: expected price %v", tc.what, tc.want)
		}
		c := resp.Usage.Costs
		if c == nil || !c.PriceKnown || math.Abs(c.TotalTokensCost-tc.want) > 1e-12 {
			t.Errorf("%s: costs %+v, want $%v", tc.what, c, tc.want)
		}
		if used := b.Used(ctx).CostUSD; math.Abs(used-tc.want) > 1e-12 {
			t.Errorf("%s: budget charged $%v, want $%v", tc.what, used, tc.want)
		}
		e := ledger.all()
		if len(e) != 1 || e[0].Estimated != tc.estimated || !e[0].Complete {
			t.Errorf("%s: ledger %+v, want one answer estimated %v", tc.what, e, tc.estimated)
		}
		ledger.mu.Lock()
		ledger.entries = nil
		ledger.mu.Unlock()
		if r := obs.take(t); r.UsageEstimated != tc.estimated || math.Abs(r.Usage.Costs.TotalTokensCost-tc.want) > 1e-12 {
			t.Errorf("%s: record usage %+v estimated %v", tc.what, r.Usage, r.UsageEstimated)
		}
	}
}
