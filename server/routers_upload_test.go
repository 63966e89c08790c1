package server

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// ndTopics: each model answers the prompts of its topic best.
var ndTopics = []struct{ model, words string }{
	{"openai/gpt-4o", "integral derivative equation algebra matrix prime polynomial"},
	{"anthropic/claude-3-5-sonnet-20240620", "python function compile bug golang loop recursion"},
	{"mistral/mistral-large-latest", "poem sonnet rhyme verse haiku stanza ballad"},
}

// ndJointCSV is Not Diamond's joint CSV as the Python SDK writes it (pandas to_csv,
// index=False): a prompt column, then per model <model>/response and <model>/score
// (0-10 ratings, or latency in ms, lower better, with latency).
func ndJointCSV(t *testing.T, rows int, latency bool) []byte {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	header := []string{"question"}
	for _, m := range ndTopics {
		header = append(header, m.model+"/response", m.model+"/score")
	}
	w.Write(header)
	for i := range rows {
		k := i % len(ndTopics)
		words := strings.Fields(ndTopics[k].words)
		prompt := fmt.Sprintf("please %s and %s, then %s (case %d)", words[i%len(words)], words[(i+2)%len(words)], words[(i+4)%len(words)], i)
		row := []string{prompt}
		for j, m := range ndTopics {
			score := "3.5"
			if latency {
				score = "900"
			}
			if j == k {
				score = "9"
				if latency {
					score = "120.5"
				}
			}
			row = append(row, "an answer from "+m.model, score)
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// multipartBody builds a form as Python's requests does (data=…, files=…): the fields,
// then the file.
func multipartBody(t *testing.T, fields [][2]string, fileField, filename string, content []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := mw.CreateFormFile(fileField, filename)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func postTrainForm(t *testing.T, h http.Handler, path, key, ctype string, body []byte) reply {
	t.Helper()
	req := httptest.NewRequest("POST", path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ctype)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := reply{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	json.Unmarshal(rec.Body.Bytes(), &out.body)
	return out
}

// sdkFields are the form fields CustomRouter.fit sends (preference_id None is left out by
// requests; maximize is str(True)).
func sdkFields(maximize string, extra ...[2]string) [][2]string {
	providers, _ := json.Marshal([]map[string]string{
		{"provider": "openai", "model": "gpt-4o"},
		{"provider": "anthropic", "model": "claude-3-5-sonnet-20240620"},
		{"provider": "mistral", "model": "mistral-large-latest"},
	})
	return append([][2]string{{"language", "english"}, {"llm_providers", string(providers)}, {"prompt_column", "question"}, {"maximize", maximize}}, extra...)
}

func TestNotDiamondTrainCustomRouter(t *testing.T) {
	e := routersServer(t)
	for _, c := range []struct {
		name, maximize string
		latency        bool
	}{{"scores, higher better", "True", false}, {"latency, lower better", "False", true}} {
		t.Run(c.name, func(t *testing.T) {
			ctype, body := multipartBody(t, sdkFields(c.maximize), "dataset_file", "tmpa1b2c3.csv", ndJointCSV(t, 60, c.latency))
			r := postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
			if r.status != http.StatusOK {
				t.Fatalf("trainCustomRouter: %d %s", r.status, r.raw)
			}
			jobID, _ := r.body["training_job_id"].(string)
			if !strings.HasPrefix(jobID, "tj_") || r.body["preference_id"] != jobID || r.body["status"] != "queued" {
				t.Fatalf("answer %s: want preference_id = training_job_id for now", r.raw)
			}
			st := e.waitJob(t, testKey, jobID)
			if st.body["status"] != "completed" {
				t.Fatalf("job: %s", st.raw)
			}
			up, _ := st.body["upload"].(map[string]any)
			if up["filename"] != "tmpa1b2c3.csv" || up["format"] != "notdiamond" || up["bytes"] == nil {
				t.Errorf("status upload = %v", st.body["upload"])
			}
			modelID, _ := st.body["model_id"].(string)
			p := do(t, e.h, "POST", "/api/v1/routers/predict", testKey,
				fmt.Sprintf(`{"model_id": %q, "inputs": ["solve the integral of this polynomial", "write a haiku with rhyme"]}`, modelID))
			var pr trainer.PredictResponse
			if p.status != http.StatusOK || json.Unmarshal([]byte(p.raw), &pr) != nil {
				t.Fatalf("predict: %d %s", p.status, p.raw)
			}
			if pr.Predictions[0].TopModel != ndTopics[0].model || pr.Predictions[1].TopModel != ndTopics[2].model {
				t.Errorf("predictions %+v: the best-scored model of each topic should win", pr.Predictions)
			}
		})
	}

	// Refusals: 400 naming the field, the line and the column.
	good := ndJointCSV(t, 20, false)
	for _, c := range []struct {
		name   string
		fields [][2]string
		file   string
		data   []byte
		want   string
	}{
		{"no dataset_file", sdkFields("True"), "", nil, "dataset_file is required"},
		{"file in another field", sdkFields("True"), "file", good, "dataset_file"},
		{"listed model without a score column", append(sdkFields("True")[:1], [2]string{"llm_providers", `[{"provider":"openai","model":"gpt-4o"},{"provider":"google","model":"gemini-1.5-pro"}]`}, [2]string{"prompt_column", "question"}),
			"dataset_file", good, `"google/gemini-1.5-pro/score"`},
		{"prompt column absent", append(sdkFields("True")[:2], [2]string{"prompt_column", "prompt"}), "dataset_file", good, `prompt_column: column "prompt" is not in the header`},
		{"bad maximize", sdkFields("perhaps"), "dataset_file", good, "maximize"},
		{"bad llm_providers", append(sdkFields("True")[:1], [2]string{"llm_providers", `{"provider":"openai"}`}, [2]string{"prompt_column", "question"}), "dataset_file", good, "llm_providers"},
		{"non-numeric score", sdkFields("True"), "dataset_file", bytes.Replace(good, []byte(",9\n"), []byte(",nine\n"), 1), `dataset_file: tmp.csv: line 4: column "mistral/mistral-large-latest/score": the score "nine" is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctype, body := multipartBody(t, c.fields, c.file, "tmp.csv", c.data)
			wantError(t, postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body), http.StatusBadRequest, KindBadRequest, c.want)
		})
	}
	wantError(t, do(t, e.h, "POST", "/v2/pzn/trainCustomRouter", testKey, `{"prompt_column":"q"}`), http.StatusBadRequest, KindBadRequest, "multipart/form-data")
	ctype, body := multipartBody(t, sdkFields("True"), "dataset_file", "tmp.csv", good)
	wantError(t, postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", "", ctype, body), http.StatusUnauthorized, KindUnauthorized, "API key")
}

func TestTrainUploadNative(t *testing.T) {
	e := routersServer(t)
	records, err := os.ReadFile(filepath.Join("..", "examples", "data", "routing_train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// A records file, its format detected; model_prices as in the JSON route.
	ctype, body := multipartBody(t, [][2]string{{"model_prices", `{"openai/gpt-4o": 5}`}}, "file", "routing_train.csv", records)
	r := postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body)
	if r.status != http.StatusAccepted || r.body["status"] != "queued" {
		t.Fatalf("upload: %d %s", r.status, r.raw)
	}
	st := e.waitJob(t, testKey, r.body["training_job_id"].(string))
	if st.body["status"] != "completed" {
		t.Fatalf("job: %s", st.raw)
	}
	if up, _ := st.body["upload"].(map[string]any); up["format"] != "csv" || up["filename"] != "routing_train.csv" {
		t.Errorf("upload = %v", st.body["upload"])
	}

	// Not Diamond's joint CSV: prompt_column selects it.
	ctype, body = multipartBody(t, [][2]string{{"prompt_column", "question"}, {"maximize", "false"}}, "file", "latency.csv", ndJointCSV(t, 30, true))
	r = postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body)
	if r.status != http.StatusAccepted {
		t.Fatalf("upload: %d %s", r.status, r.raw)
	}
	if st := e.waitJob(t, testKey, r.body["training_job_id"].(string)); st.body["status"] != "completed" {
		t.Fatalf("job: %s", st.raw)
	}

	for _, c := range []struct {
		name   string
		fields [][2]string
		file   string
		data   []byte
		status int
		want   string
	}{
		{"no file", nil, "", nil, 400, "file is required"},
		{"bad row", nil, "file", []byte("problem,correct_models\nhi,openai/x\n,openai/y\n"), 422, "file: a.csv: line 3: problem is empty"},
		{"unknown format", [][2]string{{"format", "xml"}}, "file", records, 422, "format"},
		{"notdiamond without prompt_column", [][2]string{{"format", "notdiamond"}}, "file", records, 422, "prompt_column"},
		{"bad model_prices", [][2]string{{"model_prices", `{"openai/gpt-4o": "cheap"}`}}, "file", records, 422, `model_prices["openai/gpt-4o"] must be a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctype, body := multipartBody(t, c.fields, c.file, "a.csv", c.data)
			kind := KindValidation
			if c.status == 400 {
				kind = KindBadRequest
			}
			wantError(t, postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body), c.status, kind, c.want)
		})
	}
}

// TestTrainUploadBodyLimitAndStorage: the server's body limit bounds the form (413), and an
// accepted upload is in the store until its job is deleted.
func TestTrainUploadBodyLimitAndStorage(t *testing.T) {
	st := newTestStore(t)
	quiet := slog.New(slog.DiscardHandler)
	svc, err := trainer.New(st, trainer.WithLogger(quiet)) // never started: jobs stay queued
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, APIKeys: []string{testKey}, Logger: quiet, MaxBodyBytes: 4096}, CustomRouters(svc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })

	ctype, body := multipartBody(t, sdkFields("True"), "dataset_file", "big.csv", ndJointCSV(t, 200, false))
	wantError(t, postTrainForm(t, srv, "/v2/pzn/trainCustomRouter", testKey, ctype, body), http.StatusRequestEntityTooLarge, KindTooLarge, "--max-body-bytes")

	ctype, body = multipartBody(t, sdkFields("True"), "dataset_file", "small.csv", ndJointCSV(t, 12, false))
	r := postTrainForm(t, srv, "/v2/pzn/trainCustomRouter", testKey, ctype, body)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	id := r.body["training_job_id"].(string)
	pieces := func() int {
		es, _ := st.List(context.Background(), store.TrainingUploads, store.ListOptions{Prefix: id + "/"})
		return len(es)
	}
	if pieces() != 1 {
		t.Fatalf("%d pieces stored", pieces())
	}
	if d := do(t, srv, "DELETE", "/api/v1/routers/train/jobs/"+id, testKey, ""); d.status != http.StatusOK {
		t.Fatalf("delete: %d %s", d.status, d.raw)
	}
	if pieces() != 0 {
		t.Errorf("the upload outlived its deleted job")
	}
}

// TestTrainUploadRoutesKeysAndOpenAPI: the upload routes admit the keys the JSON training
// route admits (no virtual keys), and the document describes their forms.
func TestTrainUploadRoutesKeysAndOpenAPI(t *testing.T) {
	e := routersServer(t)
	s := e.h.(*Server)
	for _, p := range []string{"POST /api/v1/routers/train/upload", "POST /v2/pzn/trainCustomRouter"} {
		if s.virtual[p] != s.virtual["POST /api/v1/routers/train"] || s.scoped[p] != s.scoped["POST /api/v1/routers/train"] {
			t.Errorf("%s: key kinds differ from POST /api/v1/routers/train", p)
		}
	}
	r := do(t, e.h, "GET", "/api/v1/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{
		"/api/v1/routers/train/upload": {"multipart/form-data", "file", "prompt_column", "maximize", "llm_providers", "model_prices", "202"},
		"/v2/pzn/trainCustomRouter":    {"multipart/form-data", "dataset_file", "prompt_column", "llm_providers", "preference_id", "language"},
	} {
		op, ok := doc.Paths[path]["post"]
		if !ok {
			t.Fatalf("OpenAPI lacks POST %s", path)
		}
		for _, w := range want {
			if !strings.Contains(string(op), w) && !strings.Contains(r.raw, w) {
				t.Errorf("POST %s: document lacks %q", path, w)
			}
		}
	}
}
