package server

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"testing"
)

// The audio routes and image edits refuse requests before the gateway (a form or body that
// does not decode, a model not named): like chat, embeddings, rerank, moderation and image
// generation, each refused request is in the usage history under its x-request-id, with its
// operation.
func TestReview24kAudioAndImageEditRefusalsRecorded(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	form := func(fields map[string]string) (string, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for k, v := range fields {
			_ = mw.WriteField(k, v)
		}
		_ = mw.Close()
		return b.String(), mw.FormDataContentType()
	}
	post := func(path, ctype, body, rid string) int {
		req, _ := http.NewRequest("POST", hs.URL+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("X-Request-Id", rid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("X-Request-Id") != rid {
			t.Fatalf("%s: answered with x-request-id %q, want %q", path, resp.Header.Get("X-Request-Id"), rid)
		}
		return resp.StatusCode
	}
	noFile, noFileType := form(map[string]string{"model": "openai/whisper-1"})
	editNoImage, editType := form(map[string]string{"model": "openai/gpt-image-1", "prompt": "a hat"})
	cases := []struct{ rid, path, ctype, body, op string }{
		{"r24k-transcription", "/v1/audio/transcriptions", noFileType, noFile, "transcription"},
		{"r24k-translation", "/v1/audio/translations", noFileType, noFile, "translation"},
		{"r24k-speech", "/v1/audio/speech", "application/json", `{"model":"openai/tts-1","input":5}`, "speech"},
		{"r24k-image-edit", "/v1/images/edits", editType, editNoImage, "image_edit"},
	}
	for _, c := range cases {
		if status := post(c.path, c.ctype, c.body, c.rid); status < 400 || status >= 500 {
			t.Fatalf("%s: %d, want a refusal", c.path, status)
		}
	}
	history := usageRequestsByID(t, s, testKey)
	for _, c := range cases {
		h := history[c.rid]
		if h == nil {
			t.Errorf("%s: the refused request %s is not in the usage history", c.path, c.rid)
			continue
		}
		if h["outcome"] != "error" || h["operation"] != c.op {
			t.Errorf("%s: outcome %v operation %v, want error %s", c.path, h["outcome"], h["operation"], c.op)
		}
	}
}
