package completions

import (
	"context"
	"errors"
	"testing"
)

// TestReview15dGPTImageQuality: gpt-image models take quality low, medium, high or auto;
// OpenAI answers standard with a 400 ("Invalid value: 'standard'. Supported values are:
// 'low', 'medium', 'high', and 'auto'."), so the gateway refuses it naming quality before
// any call, as it refuses hd.
func TestReview15dGPTImageQuality(t *testing.T) {
	api := newFakeImagesAPI(t)
	g := newImagesGateway(t, api, &recordingObserver{})
	for _, q := range []string{"standard", "hd"} {
		_, err := g.GenerateImages(context.Background(), Scope{}, &ImageGenerationRequest{Model: "gpt-image-1", Prompt: "x", Quality: q})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "quality" {
			t.Errorf("gpt-image-1 quality %s: %v, want a refusal naming quality", q, err)
		}
	}
	if api.calls != 0 {
		t.Errorf("%d calls for refused requests", api.calls)
	}
	for _, q := range []string{"low", "medium", "high", "auto"} {
		if _, err := g.GenerateImages(context.Background(), Scope{}, &ImageGenerationRequest{Model: "gpt-image-1", Prompt: "x", Quality: q}); err != nil {
			t.Errorf("gpt-image-1 quality %s: %v", q, err)
		}
	}
}
