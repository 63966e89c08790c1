package server

import (
	"net/http"
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
