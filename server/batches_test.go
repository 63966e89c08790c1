package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
)

// batchServer is keysServerWith (the gateway over the scripted upstream up, priced, with
// its usage recorded) with the Files and Batch APIs, whose service runs lines conc at a
// time; the service is started unless noStart.
func batchServer(t *testing.T, up http.Handler, conc int, noStart bool) (*httptest.Server, *Server, *batch.Service) {
	t.Helper()
	hs, s := keysServerWith(t, nil, up, Config{APIKeys: []string{testKey, completionsOtherKey}})
	files, err := batch.NewFiles(s.Store(), batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := batch.New(s.Store(), files, batch.Options{Concurrency: conc, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := Batches(svc)(s); err != nil {
		t.Fatal(err)
	}
	if !noStart {
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return hs, s, svc
}

// uploadBatchFile posts content to /v1/files as purpose, returning the status and body.
func uploadBatchFile(t *testing.T, hs *httptest.Server, key, purpose string, content []byte) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "requests.jsonl")
	fw.Write(content)
	mw.WriteField("purpose", purpose)
	mw.Close()
	req, _ := http.NewRequest("POST", hs.URL+"/v1/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// call sends a request with key and decodes the JSON answer.
func call(t *testing.T, method, url, key, body string) (int, map[string]any, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp.StatusCode, m, b
}

// chatLines is a batch input of chat requests, one per model, custom ids c0, c1, ….
func chatLines(models ...string) []byte {
	var b bytes.Buffer
	for i, m := range models {
		fmt.Fprintf(&b, `{"custom_id":"c%d","method":"POST","url":"/v1/chat/completions","body":{"model":%q,"messages":[{"role":"user","content":"hi"}]}}`+"\n", i, m)
	}
	return b.Bytes()
}

// waitBatch polls the batch until it has ended (at most 10 s: a bound on a hang).
func waitBatch(t *testing.T, hs *httptest.Server, key, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, b, raw := call(t, "GET", hs.URL+"/v1/batches/"+id, key, "")
		if code != 200 {
			t.Fatalf("GET batch: %d %s", code, raw)
		}
		switch b["status"] {
		case "completed", "failed", "expired", "cancelled":
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch still %v: %s", b["status"], raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fileLines downloads a file's content as output lines.
func fileLines(t *testing.T, hs *httptest.Server, key string, id any) []batch.OutputLine {
	t.Helper()
	s, ok := id.(string)
	if !ok {
		t.Fatalf("file id %v", id)
	}
	req, _ := http.NewRequest("GET", hs.URL+"/v1/files/"+s+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jsonl" {
		t.Fatalf("content: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var out []batch.OutputLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ol batch.OutputLine
		if err := json.Unmarshal([]byte(l), &ol); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, ol)
	}
	return out
}

// TestBatchThroughTheGateway: a file uploaded over HTTP runs as a batch through the
// gateway's own chat route: the answers are the route's (the scripted upstream's text,
// usage, cost and attempts; a model the upstream does not know answered 404
// model_not_found in the error file, a streamed line refused naming stream), the usage log
// has each line that reached the gateway under the batch's tag, the batch reports usage and
// cost, and another key sees none of it. Bad uploads and batches are 400s in OpenAI's
// envelope naming the field.
func TestBatchThroughTheGateway(t *testing.T) {
	hs, _, _ := batchServer(t, &fakeOpenAIUpstream{}, 2, false)
	input := chatLines("openai/ok", "openai/nosuch", "openai/ok")
	input = append(input, []byte(`{"custom_id":"s","method":"POST","url":"/v1/chat/completions","body":{"model":"openai/ok","stream":true,"messages":[{"role":"user","content":"hi"}]}}`+"\n")...)
	code, f := uploadBatchFile(t, hs, testKey, "batch", input)
	if code != 200 || f["object"] != "file" || f["purpose"] != "batch" || f["status"] != "processed" || f["bytes"] != float64(len(input)) || f["filename"] != "requests.jsonl" {
		t.Fatalf("upload: %d %v", code, f)
	}
	fileID := f["id"].(string)

	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+fileID+`","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"run":"eval-7"}}`)
	if code != 200 || b["status"] != "validating" || b["object"] != "batch" {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := b["id"].(string)
	b = waitBatch(t, hs, testKey, id)
	counts := b["request_counts"].(map[string]any)
	if b["status"] != "completed" || counts["total"] != 4.0 || counts["completed"] != 2.0 || counts["failed"] != 2.0 ||
		b["metadata"].(map[string]any)["run"] != "eval-7" {
		t.Fatalf("ended: %v", b)
	}
	usage := b["usage"].(map[string]any)
	if usage["input_tokens"] != 14.0 || usage["output_tokens"] != 6.0 || usage["total_tokens"] != 20.0 {
		t.Fatalf("usage %v", usage)
	}
	if cost := b["switchyard"].(map[string]any)["cost_usd"].(float64); fmt.Sprintf("%.3f", cost) != "0.026" {
		t.Fatalf("cost %v", cost)
	}
	out := fileLines(t, hs, testKey, b["output_file_id"])
	if len(out) != 2 || out[0].CustomID != "c0" || out[1].CustomID != "c2" {
		t.Fatalf("output %+v", out)
	}
	var answer map[string]any
	json.Unmarshal(out[0].Response.Body, &answer)
	msg := answer["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if out[0].Response.StatusCode != 200 || msg["content"] != "Hello from ok" || answer["switchyard"] == nil || out[0].Response.RequestID != out[0].ID {
		t.Fatalf("output line %+v: %s", out[0], out[0].Response.Body)
	}
	errs := fileLines(t, hs, testKey, b["error_file_id"])
	if len(errs) != 2 || errs[0].CustomID != "c1" || errs[0].Response.StatusCode != 404 || !strings.Contains(string(errs[0].Response.Body), "model_not_found") ||
		errs[1].CustomID != "s" || errs[1].Response.StatusCode != 400 || !strings.Contains(string(errs[1].Response.Body), `"param":"stream"`) {
		t.Fatalf("error lines %+v / %s / %s", errs, errs[0].Response.Body, errs[1].Response.Body)
	}
	// The usage log: each line that reached the gateway, under the batch's tag.
	code, ur, raw := call(t, "GET", hs.URL+"/api/v1/usage/requests?request_tag=batch:"+id, testKey, "")
	if code != 200 {
		t.Fatalf("usage: %d %s", code, raw)
	}
	data := ur["data"].([]any)
	if len(data) != 3 {
		t.Fatalf("usage log of the batch: %s", raw)
	}
	// Listings; another key sees nothing.
	_, fl, raw := call(t, "GET", hs.URL+"/v1/files?purpose=batch_output", testKey, "")
	if len(fl["data"].([]any)) != 2 {
		t.Fatalf("output files: %s", raw)
	}
	_, bl, raw := call(t, "GET", hs.URL+"/v1/batches?limit=5", testKey, "")
	if len(bl["data"].([]any)) != 1 || bl["first_id"] != id || bl["has_more"] != false {
		t.Fatalf("batches: %s", raw)
	}
	for _, p := range []string{"/v1/batches/" + id, "/v1/files/" + fileID, "/v1/files/" + fileID + "/content", "/v1/files/" + b["output_file_id"].(string)} {
		if code, m, raw := call(t, "GET", hs.URL+p, completionsOtherKey, ""); code != 404 || m["error"].(map[string]any)["type"] != "invalid_request_error" {
			t.Fatalf("another key GET %s: %d %s", p, code, raw)
		}
	}
	if code, _, raw := call(t, "POST", hs.URL+"/v1/batches/"+id+"/cancel", testKey, ""); code != 409 {
		t.Fatalf("cancel a completed batch: %d %s", code, raw)
	}
	if code, m, raw := call(t, "DELETE", hs.URL+"/v1/files/"+fileID, testKey, ""); code != 200 || m["deleted"] != true || m["id"] != fileID {
		t.Fatalf("delete: %d %s", code, raw)
	}

	// Refusals, in OpenAI's envelope, naming the field.
	for _, c := range []struct {
		purpose string
		content []byte
		status  int
		param   string
		text    string
	}{
		{"fine-tune", chatLines("openai/ok"), 400, "purpose", `purpose "fine-tune" is not supported`},
		{"batch", []byte("{\"custom_id\":\"a\"}\n"), 400, "file", "line 1: method is required"},
		{"batch", append(chatLines("openai/ok"), chatLines("openai/ok")...), 400, "file", `line 2: custom_id "c0" is used again`},
	} {
		code, m := uploadBatchFile(t, hs, testKey, c.purpose, c.content)
		e, _ := m["error"].(map[string]any)
		if code != c.status || e == nil || e["param"] != c.param || !strings.Contains(fmt.Sprint(e["message"]), c.text) {
			t.Errorf("upload %s: %d %v", c.purpose, code, m)
		}
	}
	_, f2 := uploadBatchFile(t, hs, testKey, "batch", chatLines("openai/ok"))
	for body, param := range map[string]string{
		`{"input_file_id":"` + f2["id"].(string) + `","endpoint":"/v1/embeddings","completion_window":"24h"}`:       "input_file_id",
		`{"input_file_id":"` + f2["id"].(string) + `","endpoint":"/v1/chat/completions","completion_window":"48h"}`: "completion_window",
		`{"input_file_id":"` + f2["id"].(string) + `","endpoint":"/v1/audio/speech","completion_window":"24h"}`:     "endpoint",
		`{"input_file_id":"file-nope","endpoint":"/v1/chat/completions","completion_window":"24h"}`:                 "input_file_id",
	} {
		code, m, raw := call(t, "POST", hs.URL+"/v1/batches", testKey, body)
		if e, _ := m["error"].(map[string]any); code != 400 || e["param"] != param {
			t.Errorf("create %s: %d %s", body, code, raw)
		}
	}
}

// gatedUpstream is the scripted upstream whose model ok2 waits until open is closed (each
// such request sent on started first).
type gatedUpstream struct {
	fakeOpenAIUpstream
	started chan struct{}
	open    chan struct{}
}

func (u *gatedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if strings.Contains(string(b), `"ok2"`) {
		u.started <- struct{}{}
		<-u.open
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	u.fakeOpenAIUpstream.ServeHTTP(w, r)
}

// TestBatchOfAVirtualKey: a batch runs as the virtual key that created it: its model list
// refuses a line (403), its budget stops the lines once spent (429 budget_exceeded, in the
// error file), and the batch belongs to the key's issuer. When the key is revoked while
// its batch runs, the remaining lines fail with api_key_revoked and the batch fails saying
// so; the lines answered before are kept.
func TestBatchOfAVirtualKey(t *testing.T) {
	up := &gatedUpstream{started: make(chan struct{}, 4), open: make(chan struct{})}
	hs, s, _ := batchServer(t, up, 1, false)
	vk := issue(t, s, `{"name":"evals","models":["openai/ok","openai/ok2"],"max_budget_usd":0.02}`)
	_, f := uploadBatchFile(t, hs, vk.Key, "batch", chatLines("openai/ok", "openai/other", "openai/ok", "openai/ok", "openai/ok"))
	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", vk.Key, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	b = waitBatch(t, hs, vk.Key, b["id"].(string))
	counts := b["request_counts"].(map[string]any)
	if b["status"] != "completed" || counts["completed"] != 2.0 || counts["failed"] != 3.0 {
		t.Fatalf("ended: %v", b)
	}
	errs := fileLines(t, hs, vk.Key, b["error_file_id"])
	if errs[0].CustomID != "c1" || errs[0].Response.StatusCode != 401 ||
		errs[1].Response.StatusCode != 429 || !strings.Contains(string(errs[1].Response.Body), "budget_exceeded") ||
		errs[2].Response.StatusCode != 429 {
		t.Fatalf("error lines %s / %s / %s", errs[0].Response.Body, errs[1].Response.Body, errs[2].Response.Body)
	}
	// The issuer owns it.
	if code, _, raw := call(t, "GET", hs.URL+"/v1/batches/"+b["id"].(string), testKey, ""); code != 200 {
		t.Fatalf("the issuer reads its virtual key's batch: %d %s", code, raw)
	}

	// Revoked mid-batch.
	vk2 := issue(t, s, `{"name":"revoked"}`)
	_, f = uploadBatchFile(t, hs, vk2.Key, "batch", chatLines("openai/ok", "openai/ok2", "openai/ok", "openai/ok"))
	_, b, _ = call(t, "POST", hs.URL+"/v1/batches", vk2.Key, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	<-up.started // the second line is at the upstream
	if code, _, raw := call(t, "DELETE", hs.URL+"/api/v1/keys/"+vk2.ID, testKey, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	close(up.open)
	b = waitBatch(t, hs, testKey, b["id"].(string))
	counts = b["request_counts"].(map[string]any)
	errList, _ := b["errors"].(map[string]any)
	if b["status"] != "failed" || counts["completed"] != 2.0 || counts["failed"] != 2.0 || errList == nil ||
		!strings.Contains(fmt.Sprint(errList["data"]), "api_key_revoked") {
		t.Fatalf("ended: %v", b)
	}
	errs = fileLines(t, hs, testKey, b["error_file_id"])
	if len(errs) != 2 || errs[0].CustomID != "c2" || errs[0].Error == nil || errs[0].Error.Code != "api_key_revoked" || errs[0].Response != nil {
		t.Fatalf("error lines %+v", errs)
	}
}

// TestBatchCancelOverHTTP: cancel answers cancelling while a line is in flight, the line
// finishes and is kept, no further line is sent, and the batch ends cancelled.
func TestBatchCancelOverHTTP(t *testing.T) {
	up := &gatedUpstream{started: make(chan struct{}, 4), open: make(chan struct{})}
	hs, _, _ := batchServer(t, up, 1, false)
	_, f := uploadBatchFile(t, hs, testKey, "batch", chatLines("openai/ok2", "openai/ok", "openai/ok"))
	_, b, _ := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	<-up.started
	code, c, raw := call(t, "POST", hs.URL+"/v1/batches/"+b["id"].(string)+"/cancel", testKey, "")
	if code != 200 || c["status"] != "cancelling" || c["cancelling_at"] == nil {
		t.Fatalf("cancel: %d %s", code, raw)
	}
	close(up.open)
	b = waitBatch(t, hs, testKey, b["id"].(string))
	if b["status"] != "cancelled" || b["request_counts"].(map[string]any)["completed"] != 1.0 {
		t.Fatalf("ended: %v", b)
	}
	if out := fileLines(t, hs, testKey, b["output_file_id"]); len(out) != 1 || out[0].CustomID != "c0" {
		t.Fatalf("output %+v", out)
	}
	up.mu.Lock()
	sent := len(up.messages)
	up.mu.Unlock()
	if sent != 1 {
		t.Fatalf("%d requests reached the upstream, want the one in flight at the cancel", sent)
	}
}

// TestBatchRoutesDocumented: the OpenAPI document lists the files and batches routes.
func TestBatchRoutesDocumented(t *testing.T) {
	hs, _, _ := batchServer(t, &fakeOpenAIUpstream{}, 1, true)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for path, methods := range map[string][]string{
		"/v1/files": {"post", "get"}, "/v1/files/{file_id}": {"get", "delete"}, "/v1/files/{file_id}/content": {"get"},
		"/v1/batches": {"post", "get"}, "/v1/batches/{batch_id}": {"get"}, "/v1/batches/{batch_id}/cancel": {"post"},
	} {
		for _, m := range methods {
			if doc.Paths[path][m] == nil {
				t.Errorf("%s %s is not documented", m, path)
			}
		}
	}
}

var _ sync.Mutex

// TestFileUploadBounds: a file over the server's bound is a 413 naming the flag that sets
// it, whether the body is over the route's limit or only the file is over the bound.
func TestFileUploadBounds(t *testing.T) {
	st := newTestStore(t)
	files, _ := batch.NewFiles(st, batch.FilesOptions{MaxBytes: 2048})
	svc, _ := batch.New(st, files, batch.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	hs, _ := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}}, Batches(svc))
	for _, size := range []int{3000, 3 << 20} { // over the file bound; over the route's limit too
		line := chatLines("openai/ok")
		content := bytes.Repeat(line, size/len(line)+1)
		code, m := uploadBatchFile(t, hs, testKey, "batch", content)
		e, _ := m["error"].(map[string]any)
		if code != 413 || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "--files-max-bytes") {
			t.Errorf("%d bytes: %d %v", len(content), code, m)
		}
	}
}
