package providers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview12cFileTypeCannotInjectPartHeaders: the file's name is escaped into the
// part's Content-Disposition, but its media type (TranscriptionRequest.FileType, from a
// library caller) is written raw into the part's headers by multipart.Writer.CreatePart:
// a CR LF in it adds headers of the caller's choosing to the upstream form.
func TestReview12cFileTypeCannotInjectPartHeaders(t *testing.T) {
	var mu sync.Mutex
	var raw string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		raw = string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"ok"}`)
	}))
	defer srv.Close()
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL, APIKey: "sk"})
	_, err := o.Transcribe(context.Background(), &providers.TranscriptionRequest{Model: "whisper-1", File: []byte("ID3"),
		Filename: "a.mp3", FileType: "audio/mpeg\r\nX-Injected: yes"})
	mu.Lock()
	defer mu.Unlock()
	if err == nil && strings.Contains(raw, "\r\nX-Injected: yes\r\n") {
		t.Errorf("the file type's CR LF reached the upstream form as a header:\n%q", raw[:min(len(raw), 400)])
	}
}

// TestReview12cNonASCIIFilenameAsFormData: a file name outside ASCII (a French or
// Japanese recording, as the SDKs send it: raw UTF-8 in filename="…") reaches the
// upstream only as RFC 2231's filename*= (utf-8, percent-encoded), which RFC 7578 §4.2 says
// multipart/form-data MUST NOT use; a server that reads filename= alone sees a file part
// without a name (and OpenAI tells the format by the name's extension).
func TestReview12cNonASCIIFilenameAsFormData(t *testing.T) {
	var mu sync.Mutex
	var raw string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		raw = string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"ok"}`)
	}))
	defer srv.Close()
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL, APIKey: "sk"})
	if _, err := o.Transcribe(context.Background(), &providers.TranscriptionRequest{Model: "whisper-1", File: []byte("ID3"),
		Filename: "réunion.mp3", FileType: "audio/mpeg"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(raw, `filename="réunion.mp3"`) {
		i := strings.Index(raw, "Content-Disposition: form-data; filename")
		t.Errorf("the file part's disposition is %q, want filename=\"réunion.mp3\" (RFC 7578 §4.2)", raw[max(i, 0):min(len(raw), max(i, 0)+90)])
	}
}
