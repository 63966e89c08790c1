package server

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// review20aMediaUpstream answers OpenAI's image and audio calls.
func review20aMediaUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/v1/images/generations", "/v1/images/edits":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"created":1,"data":[{"b64_json":"eA=="}],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}`)
		case "/v1/audio/speech":
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Write([]byte("ID3audio"))
		case "/v1/audio/transcriptions", "/v1/audio/translations":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"hello"}`)
		default:
			http.Error(w, `{"error":{"message":"no route"}}`, http.StatusNotFound)
		}
	})
}

// TestReview20aBlockedEndUserOnEverySurface: an end user is named by LiteLLM's headers on
// every gateway request, and by OpenAI's user wherever the request has one (an image
// generation's JSON, an image edit's form); a blocked end user is refused there as on
// chat — not served by image generations, image edits, transcriptions, translations or
// speech, whose answers would be paid for by the key and never by the end user's account.
func TestReview20aBlockedEndUserOnEverySurface(t *testing.T) {
	hs := review12cServer(t, review20aMediaUpstream(), Config{})
	if resp, b := do2(t, "POST", hs.URL+"/customer/block", testKey, `{"user_ids":["dave"]}`, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("/customer/block: %d %s", resp.StatusCode, b)
	}
	form := func(fields map[string]string, file, name string, data []byte) (string, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for k, v := range fields {
			w.WriteField(k, v)
		}
		fw, _ := w.CreateFormFile(file, name)
		fw.Write(data)
		w.Close()
		return b.String(), w.FormDataContentType()
	}
	header := map[string]string{"X-Litellm-End-User-Id": "dave"}
	editBody, editType := form(map[string]string{"model": "openai/dall-e-2", "prompt": "a hat"}, "image", "i.png", squarePNG(t, 8))
	editUserBody, editUserType := form(map[string]string{"model": "openai/dall-e-2", "prompt": "a hat", "user": "dave"}, "image", "i.png", squarePNG(t, 8))
	audioBody, audioType := form(map[string]string{"model": "openai/whisper-1"}, "file", "a.mp3", []byte("ID3audio"))
	for _, c := range []struct {
		name, path, body string
		headers          map[string]string
	}{
		{"image generation, header", "/v1/images/generations", `{"model":"openai/dall-e-2","prompt":"a hat"}`, header},
		{"image generation, user", "/v1/images/generations", `{"model":"openai/dall-e-2","prompt":"a hat","user":"dave"}`, nil},
		{"image edit, header", "/v1/images/edits", editBody, map[string]string{"Content-Type": editType, "X-Litellm-End-User-Id": "dave"}},
		{"image edit, user", "/v1/images/edits", editUserBody, map[string]string{"Content-Type": editUserType}},
		{"transcription, header", "/v1/audio/transcriptions", audioBody, map[string]string{"Content-Type": audioType, "X-Litellm-Customer-Id": "dave"}},
		{"translation, header", "/v1/audio/translations", audioBody, map[string]string{"Content-Type": audioType, "X-Litellm-End-User-Id": "dave"}},
		{"speech, header", "/v1/audio/speech", `{"model":"openai/tts-1","input":"hi","voice":"alloy"}`, header},
	} {
		resp, b := do2(t, "POST", hs.URL+c.path, testKey, c.body, c.headers)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "User blocked from making LLM API Calls. User=dave") {
			t.Errorf("%s for blocked dave: %d %.300s", c.name, resp.StatusCode, b)
		}
	}
	// Naming no end user, the same requests are answered.
	if resp, b := do2(t, "POST", hs.URL+"/v1/images/generations", testKey, `{"model":"openai/dall-e-2","prompt":"a hat"}`, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("image generation naming no end user: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "POST", hs.URL+"/v1/audio/speech", testKey, `{"model":"openai/tts-1","input":"hi","voice":"alloy"}`, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("speech naming no end user: %d %s", resp.StatusCode, b)
	}
}
