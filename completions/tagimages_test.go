package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagRoutingImagesFilterBeforeFamilyCheck: an image request's tags select the members
// before each is asked whether it takes the request, so a member the tags leave out (here
// dall-e-2, which refuses gpt-image's output_format) does not refuse it.
func TestTagRoutingImagesFilterBeforeFamilyCheck(t *testing.T) {
	api := newFakeImagesAPI(t)
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": api.srv.URL + "/v1"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		ModelGroups: map[string]ModelGroup{"painters": {Models: []string{"openai/dall-e-2", "openai/gpt-image-1"},
			Tags: [][]string{{"cheap"}, {"best"}}, TagFiltering: true}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.GenerateImages(context.Background(), Scope{}, &ImageGenerationRequest{Model: "painters", Prompt: "a cat", OutputFormat: "webp", Tags: []string{"best"}})
	if err != nil || len(resp.Data) != 1 || api.last["model"] != "gpt-image-1" {
		t.Fatalf("tagged best: got %+v, %v (sent %v); want gpt-image-1's image", resp, err, api.last["model"])
	}
	// The member the tags select still checks the request.
	_, err = g.GenerateImages(context.Background(), Scope{}, &ImageGenerationRequest{Model: "painters", Prompt: "a cat", OutputFormat: "webp", Tags: []string{"cheap"}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("tagged cheap: got %v; want dall-e-2's refusal", err)
	}
	_, err = g.GenerateImages(context.Background(), Scope{}, &ImageGenerationRequest{Model: "painters", Prompt: "a cat", Tags: []string{"other"}})
	if !errors.Is(err, ErrTagRouting) {
		t.Fatalf("tagged other: got %v; want the tag error", err)
	}
}
