package server

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"
)

// POST /v1/files with a bad query string: ParseMultipartForm reports it after spooling the
// file to disk, and the temporary file must still be removed (as on the training upload
// routes, TestReview20bUploadTempFilesOnQueryError).
func TestFilesUploadTempFilesOnQueryError(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	hs, _, _ := batchServer(t, nil, 1, true)
	line := `{"custom_id":"r","method":"POST","url":"/v1/chat/completions","body":{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}}` + "\n"
	data := []byte(strings.Repeat(line, uploadFormMemory/len(line)+100))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "requests.jsonl")
	fw.Write(data)
	mw.WriteField("purpose", "batch")
	mw.Close()
	req, _ := http.NewRequest("POST", hs.URL+"/v1/files?x=%zz", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+testKey)
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
		t.Errorf("POST /v1/files?x=%%zz (%d): temporary file %s left on disk", resp.StatusCode, ent.Name())
	}
}
