package litellmconfig

import (
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestReview26bMergedStreamTimeout: two deployments of one upstream, one waiting its
// timeout (5s) for a stream's first chunk and one its stream_timeout (30s): the longest
// wait for the first chunk (30s) holds, as for the whole call, not the 5s of the one that
// set no stream_timeout (whose first-chunk wait is its timeout).
func TestReview26bMergedStreamTimeout(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - model_name: a
    litellm_params: {model: openai/gpt-4o, timeout: 5}
  - model_name: b
    litellm_params: {model: openai/gpt-4o, timeout: 5, stream_timeout: 30}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []completions.MemberTimeouts{{Timeout: 5, StreamTimeout: 30}}
	if got := cfg.ModelGroups["a"].Timeouts; !slices.Equal(got, want) {
		t.Errorf("timeouts %+v, want %+v (b's first chunk may take 30s)", got, want)
	}
}
