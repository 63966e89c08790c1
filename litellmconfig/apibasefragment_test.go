package litellmconfig

import (
	"errors"
	"strings"
	"testing"
)

// TestAPIBaseFragmentRefused: an api_base with a fragment ("https://host/v1#x"), written in
// the file or read from os.environ/NAME, is refused naming litellm_params.api_base without
// echoing what follows '#': an HTTP client never sends a fragment (LiteLLM's OpenAI client,
// httpx, keeps it in the URL object and drops it on the wire), so the deployment would run
// without whatever the user put there. The same URL without the fragment is taken.
func TestAPIBaseFragmentRefused(t *testing.T) {
	vars := env(map[string]string{"FRAG_BASE": "https://llm.example/v1#SECRETfrag", "OK_BASE": "https://llm.example/v1"})
	for _, base := range []string{`"https://llm.example/v1#SECRETfrag"`, `"https://llm.example/v1#"`, `os.environ/FRAG_BASE`} {
		doc := `model_list: [{model_name: a, litellm_params: {model: openai/x, api_key: sk-a, api_base: ` + base + `}}]`
		_, err := Parse([]byte(doc), vars)
		var e *Error
		if !errors.As(err, &e) || e.Path != "model_list[0].litellm_params.api_base" || !strings.Contains(e.Message, "fragment") {
			t.Errorf("api_base %s: %v, want an error on model_list[0].litellm_params.api_base naming the fragment", base, err)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("api_base %s: the error echoes the fragment: %v", base, err)
		}
	}
	for _, base := range []string{`"https://llm.example/v1"`, `os.environ/OK_BASE`} {
		doc := `model_list: [{model_name: a, litellm_params: {model: openai/x, api_key: sk-a, api_base: ` + base + `}}]`
		if _, err := Parse([]byte(doc), vars); err != nil {
			t.Errorf("api_base %s without a fragment: %v", base, err)
		}
	}
}
