package litellmconfig

import (
	"errors"
	"strings"
	"testing"
)

// TestRejectClientSideMetadataTags: general_settings.reject_clientside_metadata_tags is read
// (no longer reported as ignored); a value that is not a boolean is refused naming it.
func TestRejectClientSideMetadataTags(t *testing.T) {
	cfg, err := Parse([]byte("model_list:\n  - model_name: m\n    litellm_params: {model: openai/gpt-4o}\ngeneral_settings:\n  reject_clientside_metadata_tags: true\n"), func(string) (string, bool) { return "", false })
	if err != nil || !cfg.RejectClientTags {
		t.Fatalf("parsed %+v %v", cfg, err)
	}
	for _, w := range cfg.Warnings {
		if strings.Contains(w, "reject_clientside_metadata_tags") {
			t.Fatalf("reported as ignored: %v", cfg.Warnings)
		}
	}
	_, err = Parse([]byte("model_list:\n  - model_name: m\n    litellm_params: {model: openai/gpt-4o}\ngeneral_settings:\n  reject_clientside_metadata_tags: \"yes\"\n"), func(string) (string, bool) { return "", false })
	var ce *Error
	if !errors.As(err, &ce) || ce.Path != "general_settings.reject_clientside_metadata_tags" {
		t.Fatalf("a string: %v", err)
	}
}
