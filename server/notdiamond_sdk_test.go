package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sdkCall sends method path with body (may be "") and the bearer key, decoding the answer.
func sdkCall(t *testing.T, ts *httptest.Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// Not Diamond's SDK (notdiamond 1.x) sends messages whose content may be an array of
// OpenAI content parts; they route as their texts joined by newlines. A non-text part is a
// 400 naming it.
func TestModelSelectNotDiamondMessageShapes(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	const cands = `"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"gpt-4o-mini"}]`
	code, parts := postSelect(t, ts, "/v2/modelRouter/modelSelect", testKey,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"What is 2+2?"},{"type":"text","text":"Answer briefly."}]}],`+cands+`}`)
	if code != http.StatusOK || parts["session_id"] == nil {
		t.Fatalf("content parts: %d %v, want 200 with a session", code, parts)
	}
	_, joined := postSelect(t, ts, "/v2/modelRouter/modelSelect", testKey,
		`{"messages":[{"role":"user","content":"What is 2+2?\nAnswer briefly."}],`+cands+`}`)
	if a, b := parts["providers"].([]any)[0], joined["providers"].([]any)[0]; a.(map[string]any)["score"] != b.(map[string]any)["score"] {
		t.Fatalf("content parts rank as %v, the joined text as %v", a, b)
	}
	code, body := postSelect(t, ts, "/v2/modelRouter/modelSelect", testKey,
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/y.png"}}]}],`+cands+`}`)
	if msg, _ := body["message"].(string); code != http.StatusBadRequest || !strings.HasPrefix(msg, "messages[0].content[0].type") {
		t.Fatalf("image part: %d %v, want 400 naming messages[0].content[0].type", code, body)
	}
	code, body = postSelect(t, ts, "/v2/modelRouter/modelSelect", testKey,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"  "}]}],`+cands+`}`)
	if msg, _ := body["message"].(string); code != http.StatusBadRequest || !strings.HasPrefix(msg, "messages[0].content") {
		t.Fatalf("blank text part: %d %v, want 400 naming messages[0].content", code, body)
	}
}

// Not Diamond's SDK renames a preference with PUT /v2/preferences/userPreferenceUpdate and
// deletes one with DELETE /v2/preferences/userPreferenceDelete/{id}; both were 404 "no
// route". The native PATCH /api/v1/preferences/{id} renames too; another key's is a 404.
func TestNotDiamondPreferenceUpdateAndDelete(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	code, p := sdkCall(t, ts, "POST", "/v2/preferences/userPreferenceCreate", testKey, `{"name":"first"}`)
	id, _ := p["preference_id"].(string)
	if code != http.StatusOK || id == "" {
		t.Fatalf("create: %d %v", code, p)
	}
	code, p = sdkCall(t, ts, "PUT", "/v2/preferences/userPreferenceUpdate", testKey, `{"preference_id":"`+id+`","name":"second"}`)
	if code != http.StatusOK || p["name"] != "second" {
		t.Fatalf("userPreferenceUpdate: %d %v, want 200 named second", code, p)
	}
	if code, p = sdkCall(t, ts, "GET", "/api/v1/preferences/"+id, testKey, ""); p["name"] != "second" {
		t.Fatalf("after the update: %d %v", code, p)
	}
	code, p = sdkCall(t, ts, "PATCH", "/api/v1/preferences/"+id, testKey, `{"name":"third"}`)
	if code != http.StatusOK || p["name"] != "third" {
		t.Fatalf("PATCH: %d %v, want 200 named third", code, p)
	}
	if code, p = sdkCall(t, ts, "PATCH", "/api/v1/preferences/"+id, testKey, `{"name":"`+strings.Repeat("n", 257)+`"}`); code != http.StatusBadRequest {
		t.Fatalf("long name: %d %v, want 400", code, p)
	}
	if code, p = sdkCall(t, ts, "PUT", "/v2/preferences/userPreferenceUpdate", testKey, `{"name":"x"}`); code != http.StatusBadRequest || !strings.HasPrefix(p["message"].(string), "preference_id") {
		t.Fatalf("update without preference_id: %d %v, want 400 naming it", code, p)
	}
	if code, p = sdkCall(t, ts, "PUT", "/v2/preferences/userPreferenceUpdate", otherKey, `{"preference_id":"`+id+`","name":"theirs"}`); code != http.StatusNotFound {
		t.Fatalf("another key's update: %d %v, want 404", code, p)
	}
	if code, p = sdkCall(t, ts, "DELETE", "/v2/preferences/userPreferenceDelete/"+id, otherKey, ""); code != http.StatusNotFound {
		t.Fatalf("another key's delete: %d %v, want 404", code, p)
	}
	if code, p = sdkCall(t, ts, "DELETE", "/v2/preferences/userPreferenceDelete/"+id, testKey, ""); code != http.StatusOK || p["deleted"] != true {
		t.Fatalf("userPreferenceDelete: %d %v, want 200 deleted", code, p)
	}
	if code, _ = sdkCall(t, ts, "GET", "/api/v1/preferences/"+id, testKey, ""); code != http.StatusNotFound {
		t.Fatalf("after the delete: %d, want 404", code)
	}
}

// A misspelt training form field (maximise for maximize) was silently ignored, training
// with the default (higher is better) on latency data; an unknown field is now refused
// naming it, on both upload routes, and nothing is queued. Not Diamond's SDK fields
// (language, preference_id, override) are accepted.
func TestTrainUploadUnknownFormField(t *testing.T) {
	e := routersServer(t)
	csv := ndJointCSV(t, 30, true)
	ctype, body := multipartBody(t, sdkFields("True", [2]string{"override", "false"}), "dataset_file", "joint.csv", csv)
	if r := postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body); r.status != http.StatusOK {
		t.Fatalf("the SDK's fields with override: %d %s, want 200", r.status, r.raw)
	}
	ctype, body = multipartBody(t, sdkFields("True", [2]string{"maximise", "false"}), "dataset_file", "joint.csv", csv)
	r := postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
	if msg, _ := r.body["message"].(string); r.status != http.StatusBadRequest || !strings.Contains(msg, `"maximise"`) {
		t.Fatalf("maximise on trainCustomRouter: %d %s, want 400 naming it", r.status, r.raw)
	}
	ctype, body = multipartBody(t, [][2]string{{"prompt_column", "question"}, {"maximise", "false"}}, "file", "joint.csv", csv)
	r = postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body)
	if msg, _ := r.body["message"].(string); r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, `"maximise"`) {
		t.Fatalf("maximise on the upload route: %d %s, want 422 naming it", r.status, r.raw)
	}
	ctype, body = multipartBody(t, [][2]string{{"prompt_column", "question"}}, "dataset_file", "joint.csv", csv)
	r = postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body)
	if msg, _ := r.body["message"].(string); r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, `"dataset_file"`) {
		t.Fatalf("dataset_file on the upload route: %d %s, want 422 naming it", r.status, r.raw)
	}
}
