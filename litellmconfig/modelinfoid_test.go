package litellmconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestModelInfoIDKept: a model_list entry's model_info.id is its deployment's id (an
// integer as text, as LiteLLM reads one); an entry without one keeps the hash; ParseWith's
// entries are not the file's (DeploymentIDs leaves them to the store).
func TestModelInfoIDKept(t *testing.T) {
	c, err := ParseWith([]byte(`
model_list:
  - {model_name: prod, litellm_params: {model: openai/gpt-4o}, model_info: {id: prod-east}}
  - {model_name: prod, litellm_params: {model: anthropic/claude-sonnet-4-5}, model_info: {id: 42}}
  - {model_name: mini, litellm_params: {model: openai/gpt-4o-mini}}
`), []map[string]any{{"model_name": "team", "litellm_params": map[string]any{"model": "openai/gpt-4o"}, "model_info": map[string]any{"id": "stored-1"}}}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range c.Deployments {
		got = append(got, d.ModelName+"="+d.ID)
	}
	if want := "prod=prod-east prod=42 mini= team=stored-1"; strings.Join(got, " ") != want {
		t.Errorf("Deployments' ids: %q, want %q", strings.Join(got, " "), want)
	}
	ids := c.DeploymentIDs()
	want := map[string]string{
		completions.DeploymentID("prod", "openai/gpt-4o"):               "prod-east",
		completions.DeploymentID("prod", "anthropic/claude-sonnet-4-5"): "42",
	}
	if len(ids) != len(want) {
		t.Errorf("DeploymentIDs: %v, want %v", ids, want)
	}
	for k, v := range want {
		if ids[k] != v {
			t.Errorf("DeploymentIDs[%s] = %q, want %q", k, ids[k], v)
		}
	}
}

// TestModelInfoIDRefused: an id two entries of the file share, or one that is not text,
// is an *Error naming model_list[i].model_info.id.
func TestModelInfoIDRefused(t *testing.T) {
	for doc, path := range map[string]string{
		`
model_list:
  - {model_name: a, litellm_params: {model: openai/gpt-4o}, model_info: {id: same}}
  - {model_name: b, litellm_params: {model: openai/gpt-4o-mini}}
  - {model_name: c, litellm_params: {model: openai/gpt-4o-mini}, model_info: {id: same}}
`: "model_list[2].model_info.id",
		`
model_list:
  - {model_name: a, litellm_params: {model: openai/gpt-4o}, model_info: {id: [x]}}
`: "model_list[0].model_info.id",
		`
model_list:
  - {model_name: a, litellm_params: {model: openai/gpt-4o}, model_info: {id: " "}}
`: "model_list[0].model_info.id",
	} {
		_, err := Parse([]byte(doc), env(nil))
		var ce *Error
		if !errors.As(err, &ce) || ce.Path != path || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want an *Error at %s", doc, err, path)
		}
	}
	_, err := Parse([]byte(`
model_list:
  - {model_name: a, litellm_params: {model: openai/gpt-4o}, model_info: {id: same}}
  - {model_name: c, litellm_params: {model: openai/gpt-4o-mini}, model_info: {id: same}}
`), env(nil))
	if err == nil || !strings.Contains(err.Error(), "model_list[0]") {
		t.Errorf("duplicate id: %v, want it to name the first entry too", err)
	}
}
