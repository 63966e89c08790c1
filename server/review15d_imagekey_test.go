package server

import (
	"testing"
)

// TestReview15dBareImageModelKey: a virtual key issued with a bare image model name
// (accepted at issue through ResolveImageModel) may call that model by the same name, as
// a key naming a bare chat, embedding, audio or rerank model may.
func TestReview15dBareImageModelKey(t *testing.T) {
	hs, s, _ := imagesServer(t)
	vk := issue(t, s, `{"name":"art","models":["dall-e-3"]}`)
	for _, model := range []string{"dall-e-3", "openai/dall-e-3"} {
		resp, b := do2(t, "POST", hs.URL+"/v1/images/generations", vk.Key, `{"model":"`+model+`","prompt":"a cat"}`, nil)
		if resp.StatusCode != 200 {
			t.Errorf("%s with a key for dall-e-3: %d %s", model, resp.StatusCode, b)
		}
	}
	resp, b := do2(t, "POST", hs.URL+"/v1/images/generations", vk.Key, `{"model":"gpt-image-1","prompt":"a cat"}`, nil)
	wantOpenAIError(t, "a model the key may not call", resp, b, 401, "key_model_access_denied", "401")
}
