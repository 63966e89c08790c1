package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview28rbMultipartHiddenModel: a form whose model part the gateway would not see but
// a provider's lenient parser could (a Content-Disposition Go cannot parse, one repeated,
// a file part named model, a delimiter behind a bare LF, an encoded model part) is not
// forwarded for a key held to models: only a form read unambiguously names the model
// checked. A clean form of an allowed model still goes. Two Content-Types (two
// boundaries) are a 400 naming Content-Type.
func TestReview28rbMultipartHiddenModel(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"hello"}`)
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"forms","models":["openai/whisper-1"],"max_budget_usd":5}`)
	const b = "XyZb0undary"
	allowed := "--" + b + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"
	file := "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\nID3 audio\r\n"
	end := "--" + b + "--\r\n"
	cases := []struct {
		name, body string
		ok         bool
	}{
		{"clean form", file + allowed + end, true},
		{"unparseable disposition", file + allowed + "--" + b + "\r\nContent-Disposition: form-data; name=\"model\"; foo\r\n\r\ngpt-4o-transcribe\r\n" + end, false},
		{"duplicate name parameter", file + allowed + "--" + b + "\r\nContent-Disposition: form-data; name=\"model\"; name=\"model\"\r\n\r\ngpt-4o-transcribe\r\n" + end, false},
		{"repeated disposition", file + allowed + "--" + b + "\r\nContent-Disposition: form-data; name=\"x\"\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-4o-transcribe\r\n" + end, false},
		{"file part named model", file + allowed + "--" + b + "\r\nContent-Disposition: form-data; name=\"model\"; filename=\"m.txt\"\r\n\r\ngpt-4o-transcribe\r\n" + end, false},
		{"delimiter behind a bare LF", allowed + "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\n\r\nID3\n--" + b + "\nContent-Disposition: form-data; name=\"model\"\n\ngpt-4o-transcribe\r\n" + end, false},
		{"encoded model part", file + "--" + b + "\r\nContent-Disposition: form-data; name=\"model\"\r\nContent-Transfer-Encoding: base64\r\n\r\nd2hpc3Blci0x\r\n" + end, false},
	}
	for _, c := range cases {
		before := calls.Load()
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/audio/transcriptions", bytes.NewReader([]byte(c.body)))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+b)
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		forwarded := calls.Load() > before
		if c.ok != forwarded || c.ok != (resp.StatusCode == 200) {
			t.Errorf("%s: %d %s, forwarded %v; want forwarded %v", c.name, resp.StatusCode, answer, forwarded, c.ok)
		}
		if !c.ok && resp.StatusCode != 400 && resp.StatusCode != 401 {
			t.Errorf("%s: %d, want a 400 or 401", c.name, resp.StatusCode)
		}
	}

	// Two Content-Types: the provider may read the form with the other boundary, whose
	// parts the gateway never looked at.
	const b2 = "OtherB0undary"
	body := "--" + b2 + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-4o-transcribe\r\n--" + b2 + "--\r\n" +
		"\r\n" + allowed + end
	before := calls.Load()
	req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/audio/transcriptions", strings.NewReader(body))
	req.Header.Add("Content-Type", "multipart/form-data; boundary="+b)
	req.Header.Add("Content-Type", "multipart/form-data; boundary="+b2)
	req.Header.Set("Authorization", "Bearer "+vk.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if calls.Load() > before || resp.StatusCode != 400 || !strings.Contains(string(answer), "Content-Type") {
		t.Errorf("two Content-Types: %d %s, forwarded %v; want a 400 naming Content-Type, not forwarded", resp.StatusCode, answer, calls.Load() > before)
	}
}
