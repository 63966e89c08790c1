package providers

import (
	"math"
	"testing"
)

// TestImageCostGPTImageDefaultQuality: the catalogue prices a gpt-image call without
// tokens per image: at the quality given, else (none, or auto) at medium; Azure's
// gpt-image-1 by its per-pixel entries alike. dall-e-3's default stays standard.
func TestImageCostGPTImageDefaultQuality(t *testing.T) {
	cat := DefaultCatalog()
	for _, tc := range []struct {
		model string
		u     ImageUsage
		want  float64
	}{
		{"openai/gpt-image-1", ImageUsage{Images: 1}, 0.042},
		{"openai/gpt-image-1", ImageUsage{Images: 3, Quality: "auto", Size: "auto"}, 3 * 0.042},
		{"openai/gpt-image-1", ImageUsage{Images: 1, Quality: "high", Size: "1024x1536"}, 0.25},
		{"openai/gpt-image-1-mini", ImageUsage{Images: 1, Quality: "auto"}, 0.011},
		{"azure/gpt-image-1", ImageUsage{Images: 1}, 1024 * 1024 * 4.0054321e-08},
		{"openai/dall-e-3", ImageUsage{Images: 1, Quality: "auto"}, 0.04},
	} {
		c := cat.ImageCost(tc.model, tc.u)
		if !c.Known || math.Abs(c.TotalUSD-tc.want) > 1e-6 {
			t.Errorf("%s %+v: %+v, want $%v", tc.model, tc.u, c, tc.want)
		}
	}
}
