package server

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

const fuzzBoundary = "fuzzBOUNDARY"

// fuzzForm writes a multipart form of fields (name, value) and files (name, filename,
// content type, data) with the fuzz boundary.
func fuzzForm(fields [][2]string, files [][4]string) []byte {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.SetBoundary(fuzzBoundary)
	for _, f := range fields {
		mw.WriteField(f[0], f[1])
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+f[0]+`"; filename="`+f[1]+`"`)
		h.Set("Content-Type", f[2])
		w, _ := mw.CreatePart(h)
		w.Write([]byte(f[3]))
	}
	mw.Close()
	return b.Bytes()
}

// FuzzMultipartForms reads arbitrary bodies as the image edit and audio transcription
// routes read their forms (as they stream in, under a body limit). A refused form is an
// *APIError with a 400 or 413 naming its field where known; an accepted one keeps the
// routes' bounds (images, their sizes, text fields).
func FuzzMultipartForms(f *testing.F) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	f.Add(false, uint16(0), fuzzForm([][2]string{{"model", "gpt-image-1"}, {"prompt", "a cat"}, {"n", "2"}, {"size", "1024x1024"}, {"stream", "false"}, {"extra", "x"}},
		[][4]string{{"image[]", "a.png", "image/png", png}, {"image[1]", "b.png", "image/png", png}, {"mask", "m.png", "image/png", png}}))
	f.Add(true, uint16(0), fuzzForm([][2]string{{"model", "whisper-1"}, {"language", "en"}, {"temperature", "0.2"}, {"timestamp_granularities[]", "word"}, {"stream", "true"}, {"include[]", "logprobs"}},
		[][4]string{{"file", "a.mp3", "audio/mpeg", "ID3\x03\x00"}}))
	f.Add(false, uint16(40), fuzzForm(nil, [][4]string{{"other", "x.txt", "text/plain", "x"}}))
	f.Fuzz(func(t *testing.T, audio bool, limit uint16, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+fuzzBoundary)
		if limit > 0 {
			r.Body = http.MaxBytesReader(nil, r.Body, int64(limit))
		}
		var err error
		if audio {
			var req *completions.TranscriptionRequest
			req, err = readTranscriptionForm(r)
			if err == nil && len(req.File) > completions.MaxAudioFileBytes {
				t.Fatalf("audio file of %d bytes accepted", len(req.File))
			}
			if err == nil && (len(req.Model) > maxAudioFormField || len(req.Prompt) > maxAudioFormField) {
				t.Fatal("text field over its bound accepted")
			}
		} else {
			var req *completions.ImageEditRequest
			req, err = readImageEditForm(r)
			if err == nil {
				if len(req.Images) > completions.MaxImageEditImages {
					t.Fatalf("%d images accepted", len(req.Images))
				}
				if len(req.Prompt) > maxImageEditPrompt || len(req.Extra) > 32 {
					t.Fatal("prompt or extra fields over their bounds accepted")
				}
				for _, im := range req.Images {
					if len(im.Data) >= completions.MaxImageEditFileBytes {
						t.Fatalf("image of %d bytes accepted", len(im.Data))
					}
				}
			}
		}
		if err == nil {
			if limit > 0 && len(body) > int(limit) {
				t.Fatalf("a %d-byte body accepted under a %d-byte limit", len(body), limit)
			}
			return
		}
		var ae *APIError
		if !errors.As(err, &ae) {
			t.Fatalf("error %T is not an *APIError: %v", err, err)
		}
		switch ae.Status {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d: %v", ae.Status, err)
		}
		if ae.Status == http.StatusRequestEntityTooLarge && limit == 0 {
			t.Fatalf("413 without a body limit: %v", err)
		}
	})
}
