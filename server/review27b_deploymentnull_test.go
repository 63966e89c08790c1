package server

import (
	"strings"
	"testing"
)

// TestReview27bDeploymentNullBody: a JSON null body on a deployment route is a body without
// a model, for which the path's model stands: the refusal names what is really missing
// (messages), not the model the path gave.
func TestReview27bDeploymentNullBody(t *testing.T) {
	hs, _, _ := deploymentsServer(t)
	resp, b := do2(t, "POST", hs.URL+"/openai/deployments/chat/chat/completions?api-version=2024-10-21", "", `null`, map[string]string{"api-key": testKey})
	e := wantOpenAIError(t, "null body", resp, b, 400, "invalid_request_error", "")
	if (e.Param != nil && *e.Param == "model") || strings.Contains(e.Message, "model") {
		t.Errorf("null body: %s (the path names the model)", b)
	} else if !strings.Contains(e.Message, "messages") {
		t.Errorf("null body: %s, want the missing messages named", b)
	}
}
