package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/trainer"
)

// TestTrainUploadOverDatasetLimit: a file within the server's body limit but over the
// trainer's dataset size limit is refused with 413 naming the route's file field, on both
// upload routes.
func TestTrainUploadOverDatasetLimit(t *testing.T) {
	e := routersServer(t, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true, MaxBytes: 2048}))
	data := ndJointCSV(t, 60, false)
	if len(data) <= 2048 {
		t.Fatalf("test data of %d bytes is within the limit", len(data))
	}
	ctype, body := multipartBody(t, [][2]string{{"prompt_column", "question"}}, "file", "big.csv", data)
	wantError(t, postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body), http.StatusRequestEntityTooLarge, KindTooLarge, "file: the dataset file big.csv is larger; at most 2048 bytes")
	ctype, body = multipartBody(t, sdkFields("True"), "dataset_file", "big.csv", data)
	wantError(t, postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body), http.StatusRequestEntityTooLarge, KindTooLarge, "dataset_file: the dataset file big.csv is larger")
}

// TestTrainUploadTooFewUsableRows: a file with fewer usable rows than a job trains on
// (trainer.MinRows) is refused at submit, naming the file field and both counts, and no
// job is queued; it was accepted and the job failed later.
func TestTrainUploadTooFewUsableRows(t *testing.T) {
	e := routersServer(t)
	want := fmt.Sprintf("has only 9 usable rows (9 rows read, 0 without any correct model); at least %d are needed", trainer.MinRows)
	ctype, body := multipartBody(t, [][2]string{{"prompt_column", "question"}}, "file", "few.csv", ndJointCSV(t, 9, false))
	wantError(t, postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body), http.StatusUnprocessableEntity, KindValidation, "file: the dataset file few.csv "+want)
	ctype, body = multipartBody(t, sdkFields("True"), "dataset_file", "few.csv", ndJointCSV(t, 9, false))
	wantError(t, postTrainForm(t, e.h, "/v2/pzn/trainCustomRouter", testKey, ctype, body), http.StatusBadRequest, KindBadRequest, "dataset_file: the dataset file few.csv "+want)

	// Rows without a correct model (all 0 in a records file) do not count.
	records := "problem,correct_models\n"
	for i := range 12 {
		if i < 3 {
			records += fmt.Sprintf("question %d,openai/gpt-4o\n", i)
		} else {
			records += fmt.Sprintf("question %d,\n", i)
		}
	}
	ctype, body = multipartBody(t, nil, "file", "sparse.csv", []byte(records))
	wantError(t, postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body), http.StatusUnprocessableEntity, KindValidation, "only 3 usable rows (12 rows read, 9 without any correct model)")

	if l := do(t, e.h, "GET", "/api/v1/routers/train/jobs", testKey, ""); strings.Contains(l.raw, "tj_") {
		t.Errorf("a refused upload queued a job: %s", l.raw)
	}
}

// TestTrainUploadJointOptionsOnRecords: prompt_column, maximize and llm_providers, options
// of Not Diamond's joint CSV, are refused naming the option on an upload read as a records
// file, rather than silently ignored; nothing is queued.
func TestTrainUploadJointOptionsOnRecords(t *testing.T) {
	e := routersServer(t)
	records, err := os.ReadFile(filepath.Join("..", "examples", "data", "routing_train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	jsonl := []byte(`{"problem":"p","correct_models":["openai/gpt-4o"]}` + "\n")
	for _, c := range []struct {
		name   string
		fields [][2]string
		data   []byte
		want   string
	}{
		{"prompt_column with format jsonl", [][2]string{{"format", "jsonl"}, {"prompt_column", "problem"}}, jsonl, "prompt_column applies only to Not Diamond's joint CSV (format=notdiamond, implied by prompt_column); this upload is read as a records file (format jsonl)"},
		{"maximize on a detected records file", [][2]string{{"maximize", "false"}}, records, "maximize applies only to Not Diamond's joint CSV"},
		{"maximize true too", [][2]string{{"format", "csv"}, {"maximize", "true"}}, records, "maximize applies only"},
		{"llm_providers", [][2]string{{"llm_providers", `["openai/gpt-4o"]`}}, records, "llm_providers applies only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctype, body := multipartBody(t, c.fields, "file", "data", c.data)
			wantError(t, postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body), http.StatusUnprocessableEntity, KindValidation, c.want)
		})
	}
	if l := do(t, e.h, "GET", "/api/v1/routers/train/jobs", testKey, ""); strings.Contains(l.raw, "tj_") {
		t.Errorf("a refused upload queued a job: %s", l.raw)
	}
}
