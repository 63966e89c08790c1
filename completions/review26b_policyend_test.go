package completions

import (
	"errors"
	"testing"
)

// TestReview26bRefusalStandsWhenNoPolicyFallbackLeft: a group with content policy
// fallbacks whose refused member is its only model left to try (its content policy
// fallbacks already tried) ends with the content filter's refusal, as without them, not
// with every model failing.
func TestReview26bRefusalStandsWhenNoPolicyFallbackLeft(t *testing.T) {
	g, up, _ := faultGatewayWith(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"G": {Models: []string{"up/a"}, ContentPolicyFallbacks: []string{"up/a"}}}
	})
	up.on("a", filtered)
	for _, stream := range []bool{false, true} {
		_, attempts, err := askGroup(t, g, "G", stream)
		var cf *ContentFilterError
		if !errors.As(err, &cf) {
			t.Errorf("stream %v: err %v (attempts %v): want the content filter's refusal", stream, err, attempts)
		}
	}
}
