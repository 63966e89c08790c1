package litellmconfig

import (
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// num_retries above what a request may ask for (completions.MaxRetriesLimit) was taken as
// the server's default, so every request retried each model more often than any client
// could ask; it is held to the limit, with a warning.
func TestReview25aNumRetriesHeldToTheRequestLimit(t *testing.T) {
	c, err := Parse([]byte(`
model_list: [{model_name: a, litellm_params: {model: openai/x}}]
router_settings: {num_retries: 50}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.NumRetries == nil || *c.NumRetries != completions.MaxRetriesLimit {
		t.Errorf("num_retries %v, want %d", c.NumRetries, completions.MaxRetriesLimit)
	}
	if w := strings.Join(c.Warnings, "\n"); !strings.Contains(w, "router_settings.num_retries 50") {
		t.Errorf("warnings %q: want one naming router_settings.num_retries", c.Warnings)
	}
}
