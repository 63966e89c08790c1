package providers

import (
	"math"
	"testing"
)

// TestLookupImageCanonical: an image model's dated name or a name with a vendor prefix
// finds the undated entry of its own provider (or of the vendor it names) by canonical
// form, priced as that entry; no other provider's entry of the same form is taken.
func TestLookupImageCanonical(t *testing.T) {
	cat := DefaultCatalog()
	for _, tc := range []struct {
		provider, key, want string
	}{
		{"openai", "gpt-image-1-2025-04-15", "gpt-image-1"},
		{"openai", "openai/gpt-image-1", "gpt-image-1"},
		{"openai", "openai/gpt-image-1-2025-04-15", "gpt-image-1"},
		{"azure", "gpt-image-1-2025-04-15", "azure/gpt-image-1"}, // Azure's own, not OpenAI's
		{"openai", "low/1024-x-1024/gpt-image-1.5-2026-01-30", "low/1024-x-1024/gpt-image-1.5"},
		{"openai", "medium/1024-x-1024/GPT-Image-1-2025-04-15", "medium/1024-x-1024/gpt-image-1"},
		{"myproxy", "openai/gpt-image-1", "gpt-image-1"}, // the vendor the id names
		{"openai", "gpt-image-1", "gpt-image-1"},         // exact, as before
	} {
		p, ok := cat.LookupImage(tc.provider, tc.key)
		if !ok || p.Key != tc.want {
			t.Errorf("LookupImage(%q, %q) = %q %v, want %q", tc.provider, tc.key, p.Key, ok, tc.want)
		}
	}
	for _, tc := range []struct{ provider, key string }{
		{"together", "gpt-image-1-2025-04-15"}, // only OpenAI and Azure list it
		{"myproxy", "gpt-image-1-2025-04-15"},  // no vendor named
		{"openai", "gpt-image-3-2027-01-01"},   // another model
		{"openai", "gpt-image-1-mini-2025-10-06x"},
		{"openai", "ultra/1024-x-1024/gpt-image-1-2025-04-15"}, // a quality nobody lists
	} {
		if p, ok := cat.LookupImage(tc.provider, tc.key); ok {
			t.Errorf("LookupImage(%q, %q) = %q, want no entry", tc.provider, tc.key, p.Key)
		}
	}

	// Priced end to end: by tokens, and per image without them.
	tokens := ImageUsage{InputTokens: 100, OutputTokens: 1000}
	if got, want := cat.ImageCost("openai/gpt-image-1-2025-04-15", tokens), cat.ImageCost("openai/gpt-image-1", tokens); !got.Known || got != want {
		t.Errorf("dated gpt-image-1 by tokens: %+v, want %+v", got, want)
	}
	if c := cat.ImageCost("openai/gpt-image-1.5-2026-01-30", ImageUsage{Images: 2, Quality: "low"}); !c.Known || math.Abs(c.TotalUSD-2*0.009) > 1e-9 {
		t.Errorf("dated gpt-image-1.5 per image: %+v, want $0.018", c)
	}
	if c := cat.ImageCost("together/gpt-image-1-2025-04-15", ImageUsage{Images: 1}); c.Known {
		t.Errorf("another provider's dated gpt-image-1 priced: %+v", c)
	}
}
