package litellmconfig

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestReview26bSlashNamedTimeoutsWarning: the timeouts of a deployment whose model_name
// holds '/' are reported as not applied only when no model group deploys its upstream;
// when one does, they are merged into that member's timeouts (the longest holds), and the
// warning says so rather than that they are not applied.
func TestReview26bSlashNamedTimeoutsWarning(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - model_name: openai/gpt-4o
    litellm_params: {model: openai/gpt-4o, timeout: 60}
  - model_name: fast
    litellm_params: {model: openai/gpt-4o, timeout: 30}
  - model_name: openai/o1
    litellm_params: {model: openai/o1, timeout: 90}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []completions.MemberTimeouts{{Timeout: 60}}
	if got := cfg.ModelGroups["fast"].Timeouts; !slices.Equal(got, want) {
		t.Errorf("fast's timeouts %+v, want %+v (merged with the '/'-named deployment's)", got, want)
	}
	w := strings.Join(cfg.Warnings, "\n")
	if s := "model_list[0].litellm_params: timeout and stream_timeout are not applied"; strings.Contains(w, s) {
		t.Errorf("warnings %q say %q, but model_list[0]'s timeout holds for fast's member", w, s)
	}
	for _, s := range []string{
		"model_list[0].litellm_params: timeout and stream_timeout of a model_name with '/' are not its own: they are merged with those of openai/gpt-4o in model group fast",
		"model_list[2].litellm_params: timeout and stream_timeout are not applied to a model_name with '/'",
	} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}
}
