package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestModelInfoUnsealableDeployment: a stored deployment whose api_key the server cannot
// unseal (LITELLM_SALT_KEY changed) does not stop the server: /model/info shows it with
// db_model and model_info.error saying why, litellm_model_id finds it, the other
// deployments serve, and POST /model/update with a new api_key mends it (no error then).
func TestModelInfoUnsealableDeployment(t *testing.T) {
	st := newTestStore(t)
	hs := deploymentServer(t, st, nil)
	for _, body := range []string{
		`{"model_name":"sealed","litellm_params":{"model":"openai/gpt-4o","api_key":"sk-sealed"},"model_info":{"id":"broken-1"}}`,
		`{"model_name":"open","litellm_params":{"model":"openai/gpt-4o","api_base":"https://open.example/v1"},"model_info":{"id":"fine-1"}}`,
	} {
		if code, out := adminCall(t, hs, "POST", "/model/new", body); code != http.StatusOK {
			t.Fatalf("/model/new: %d %s", code, out)
		}
	}
	restarted := deploymentServerSalted(t, st, nil, "another salt")
	byID := modelInfoByID(t, restarted, "/model/info")
	broken, fine := byID["broken-1"], byID["fine-1"]
	if !broken.ModelInfo.DBModel || !strings.Contains(broken.ModelInfo.Error, "LITELLM_SALT_KEY") || broken.LiteLLMParams.Model != "openai/gpt-4o" || broken.ModelName != "sealed" {
		t.Errorf("/model/info of the unsealable deployment: %+v, want db_model and an error naming LITELLM_SALT_KEY", broken)
	}
	if fine.ModelInfo.ID != "fine-1" || fine.ModelInfo.Error != "" {
		t.Errorf("/model/info of the served deployment: %+v", fine)
	}
	if code, out := adminCall(t, restarted, "GET", "/model/info?litellm_model_id=broken-1", ""); code != http.StatusOK || !strings.Contains(out, `"error"`) {
		t.Errorf("litellm_model_id=broken-1: %d %s", code, out)
	}
	if code, out := adminCall(t, restarted, "POST", "/model/update", `{"model_info":{"id":"broken-1"},"litellm_params":{"api_key":"sk-new"}}`); code != http.StatusOK {
		t.Fatalf("/model/update with a new api_key: %d %s", code, out)
	}
	if d := modelInfoByID(t, restarted, "/model/info")["broken-1"]; d.ModelInfo.Error != "" || d.ModelInfo.ID != "broken-1" || !d.ModelInfo.DBModel {
		t.Errorf("after the update: %+v, want it served without error", d)
	}
}
