package litellmconfig

import (
	"strings"
	"testing"
)

// A key YAML reads as a number (an unquoted all-digit key or master_key) is refused without
// printing it: the error goes to logs and terminals.
func TestReview25aWrongTypeKeyNotEchoed(t *testing.T) {
	for doc, path := range map[string]string{
		`{model_list: [{model_name: a, litellm_params: {model: openai/x, api_key: 8675309867530986}}]}`:                        "model_list[0].litellm_params.api_key",
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], general_settings: {master_key: 8675309867530986}}`: "general_settings.master_key",
	} {
		_, err := Parse([]byte(doc), env(nil))
		if err == nil || !strings.Contains(err.Error(), path+": must be a string") {
			t.Errorf("%s: %v, want an error naming %s", doc, err, path)
		}
		if err != nil && strings.Contains(err.Error(), "8675309867530986") {
			t.Errorf("the key is in the error: %v", err)
		}
	}
}
