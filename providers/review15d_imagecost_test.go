package providers_test

import (
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview15dDallE3AutoQuality: dall-e-3 takes quality "auto" (the gateway lets it
// through), which OpenAI draws at its default, standard: a 1792x1024 image costs the
// standard rate ($0.08), not the model's bare 1024x1024 per-image price ($0.04).
func TestReview15dDallE3AutoQuality(t *testing.T) {
	c := providers.DefaultCatalog()
	for _, model := range []string{"openai/dall-e-3", "azure/dall-e-3"} {
		auto := c.ImageCost(model, providers.ImageUsage{Images: 1, Size: "1792x1024", Quality: "auto"})
		std := c.ImageCost(model, providers.ImageUsage{Images: 1, Size: "1792x1024", Quality: "standard"})
		if !auto.Known || math.Abs(auto.TotalUSD-std.TotalUSD) > 1e-12 || math.Abs(std.TotalUSD-0.08) > 1e-4 {
			t.Errorf("%s 1792x1024 auto: %+v, want standard's %+v", model, auto, std)
		}
	}
}
