package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// adminCall makes one request of hs with the operator key and returns its status and body.
func adminCall(t *testing.T, hs *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// modelInfoByID reads GET path (/model/info or /v1/model/info) into its deployments by id.
func modelInfoByID(t *testing.T, hs *httptest.Server, path string) map[string]litellmDeployment {
	t.Helper()
	code, out := adminCall(t, hs, "GET", path, "")
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, out)
	}
	var list litellmModelInfoList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%s: %v: %s", path, err, out)
	}
	byID := map[string]litellmDeployment{}
	for _, d := range list.Data {
		byID[d.ModelInfo.ID] = d
	}
	return byID
}

// TestConfigModelInfoIDKept: a config.yaml entry's model_info.id is the id /model/info
// shows (not the hash), litellm_model_id finds it, it stays after /model/new swaps the
// routes, and /model/new, /model/update, PATCH /model/{id}/update and /model/delete of it
// are refused as a deployment of the config file, the config's model still answering.
func TestConfigModelInfoIDKept(t *testing.T) {
	up, _ := deploymentUpstream(t, "file")
	config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: " + up.URL + "/v1\n      api_key: sk-file\n    model_info:\n      id: file-1\n")
	hs := deploymentServer(t, newTestStore(t), config)
	hash := completions.DeploymentID("from-file", "openai-from-file/gpt-4o-mini")

	check := func(when string) {
		t.Helper()
		byID := modelInfoByID(t, hs, "/model/info")
		if d, ok := byID["file-1"]; !ok || d.ModelName != "from-file" || d.ModelInfo.DBModel {
			t.Errorf("%s: /model/info has no config deployment file-1 (db_model false): %+v", when, byID)
		}
		if _, ok := byID[hash]; ok {
			t.Errorf("%s: /model/info shows the hashed id %s for the deployment whose config gives file-1", when, hash)
		}
		if code, out := adminCall(t, hs, "GET", "/model/info?litellm_model_id=file-1", ""); code != http.StatusOK || !strings.Contains(out, `"model_name":"from-file"`) {
			t.Errorf("%s: litellm_model_id=file-1: %d %s", when, code, out)
		}
	}
	check("at start")

	for _, c := range []struct{ method, path, body string }{
		{"POST", "/model/delete", `{"id":"file-1"}`},
		{"PATCH", "/model/file-1/update", `{"litellm_params":{"rpm":5}}`},
		{"POST", "/model/update", `{"model_info":{"id":"file-1"},"litellm_params":{"rpm":5}}`},
	} {
		if code, out := adminCall(t, hs, c.method, c.path, c.body); code != http.StatusBadRequest || !strings.Contains(out, "Model in config") {
			t.Errorf("%s %s of the config's id: %d %s, want LiteLLM's 400 \"Model in config\"", c.method, c.path, code, out)
		}
	}
	if code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"other","litellm_params":{"model":"openai/gpt-4o","api_base":"`+up.URL+`/v1"},"model_info":{"id":"file-1"}}`); code != http.StatusBadRequest || !strings.Contains(out, "model_info.id") {
		t.Errorf("/model/new taking the config's id: %d %s, want a 400 naming model_info.id", code, out)
	}

	// Another deployment stored swaps the routes: the config's id stays.
	if code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"other","litellm_params":{"model":"openai/gpt-4o","api_base":"`+up.URL+`/v1"},"model_info":{"id":"stored-1"}}`); code != http.StatusOK {
		t.Fatalf("/model/new: %d %s", code, out)
	}
	check("after /model/new")
	if code, _ := adminCall(t, hs, "POST", "/model/delete", `{"id":"file-1"}`); code != http.StatusBadRequest {
		t.Errorf("/model/delete of file-1 after the swap: %d, want 400", code)
	}
	if code, out := adminCall(t, hs, "POST", "/v1/chat/completions", `{"model":"from-file","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`); code != http.StatusOK || !strings.Contains(out, "from file") {
		t.Errorf("the config's model after the refusals: %d %s", code, out)
	}
}

// TestStoredDeploymentDBModelOnInfoRoutes: as LiteLLM's, /model/info and /v1/model/info
// (one handler there and here) carry model_info.db_model, true for a stored deployment
// and false for the config's; /model_group/info (LiteLLM's ModelGroupInfo has no
// per-deployment field) and /v1/models (OpenAI's list) carry none.
func TestStoredDeploymentDBModelOnInfoRoutes(t *testing.T) {
	up, _ := deploymentUpstream(t, "up")
	config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: " + up.URL + "/v1\n      api_key: sk-file\n")
	hs := deploymentServer(t, newTestStore(t), config)
	if code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"team","litellm_params":{"model":"openai/gpt-4o","api_key":"sk-x","api_base":"`+up.URL+`/v1"},"model_info":{"id":"team-1"}}`); code != http.StatusOK {
		t.Fatalf("/model/new: %d %s", code, out)
	}
	fileID := completions.DeploymentID("from-file", "openai-from-file/gpt-4o-mini")
	for _, path := range []string{"/model/info", "/v1/model/info"} {
		byID := modelInfoByID(t, hs, path)
		if d, ok := byID["team-1"]; !ok || !d.ModelInfo.DBModel {
			t.Errorf("%s: stored team-1 not shown with db_model true: %+v", path, byID["team-1"])
		}
		if d, ok := byID[fileID]; !ok || d.ModelInfo.DBModel {
			t.Errorf("%s: the config's deployment not shown with db_model false: %+v", path, byID[fileID])
		}
	}
	for _, path := range []string{"/model_group/info", "/v1/models"} {
		code, out := adminCall(t, hs, "GET", path, "")
		if code != http.StatusOK || !strings.Contains(out, `"team"`) || strings.Contains(out, "db_model") {
			t.Errorf("%s: %d %s, want team listed and no db_model (LiteLLM's has none)", path, code, out)
		}
	}
}
