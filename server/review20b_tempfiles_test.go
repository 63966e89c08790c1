package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// TestReview20bUploadTempFilesOnQueryError: a form whose file is larger than the form's
// memory is spooled to a temporary file; when ParseMultipartForm reports an error after
// it parsed the form (a bad query string: ParseForm's error is returned last, with
// r.MultipartForm set), the route must still remove that file. The handler sees a copy of
// the request (r.WithContext), so net/http's own clean-up of the original does not reach
// it.
func TestReview20bUploadTempFilesOnQueryError(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := routersServer(t)
	hs := httptest.NewServer(e.h)
	defer hs.Close()
	data := ndJointCSV(t, 12000, false)
	if len(data) <= uploadFormMemory {
		t.Fatalf("the file (%d bytes) must be larger than the form's memory", len(data))
	}
	for _, path := range []string{"/api/v1/routers/train/upload?x=%zz", "/v2/pzn/trainCustomRouter?a=1;b=2"} {
		fileField := "file"
		if path[1] == 'v' {
			fileField = "dataset_file"
		}
		ctype, body := multipartBody(t, sdkFields("True"), fileField, "big.csv", data)
		req, _ := http.NewRequest("POST", hs.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ents, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range ents {
			t.Errorf("POST %s (%d): temporary file %s left on disk", path, resp.StatusCode, ent.Name())
			os.Remove(tmp + "/" + ent.Name())
		}
	}
}
