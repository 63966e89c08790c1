package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPartFieldNames: a part's names are Go's reading (name* decoded in place of name)
// and, when name and name* differ, the plain name too; a semicolon in a quoted value does
// not split it.
func TestPartFieldNames(t *testing.T) {
	for _, c := range []struct {
		cd   string
		want []string
	}{
		{`form-data; name="model"`, []string{"model"}},
		{`form-data; NAME="Model"`, []string{"Model"}},
		{`form-data; name*=UTF-8''model`, []string{"model", ""}},
		{`form-data; name="prompt"; name*=UTF-8''model`, []string{"model", "prompt"}},
		{`form-data; name*=UTF-8''%6Dodel; name="model"`, []string{"model"}},
		{`form-data; name*0="mo"; name*1="del"`, []string{"model", ""}},
		{`form-data; filename="a;name*=x"; name="file"`, []string{"file"}},
	} {
		got, err := partFieldNames(c.cd)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q %v, want %q", c.cd, got, err, c.want)
		}
	}
}

// TestPassThroughFormFieldNames: a pass-through form's model part is found whatever the
// case of its name and whether it is named by name or by RFC 2231/5987 name* (a provider's
// parser may read either): a model part the gateway used to pass over (Model beside
// model, name="model" behind a name* saying otherwise) is checked, two of them a 400 naming
// model, a disallowed one a 401 (LiteLLM's key_model_access_denied), neither forwarded; an allowed model so named goes.
func TestPassThroughFormFieldNames(t *testing.T) {
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
	vk := issue(t, s, `{"name":"names","models":["openai/whisper-1"],"max_budget_usd":5}`)
	const b = "XyZb0undary"
	part := func(cd, v string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; " + cd + "\r\n\r\n" + v + "\r\n"
	}
	file := "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\nID3 audio\r\n"
	end := "--" + b + "--\r\n"
	allowed := part(`name="model"`, "whisper-1")
	cases := []struct {
		name, body string
		status     int
		says       string
	}{
		{"Model in capitals, allowed", file + part(`name="MODEL"`, "whisper-1") + end, 200, ""},
		{"name* of an allowed model", file + part(`name*=UTF-8''model`, "whisper-1") + end, 200, ""},
		{"Model in capitals, not allowed", file + part(`name="Model"`, "gpt-4o-transcribe") + end, 401, "gpt-4o-transcribe"},
		{"Model beside model", file + allowed + part(`name="Model"`, "gpt-4o-transcribe") + end, 400, "model"},
		{"name=model behind name*=prompt", file + allowed + part(`name="model"; name*=UTF-8''prompt`, "gpt-4o-transcribe") + end, 400, "model"},
		{"name*=model behind name=prompt", file + part(`name="prompt"; name*=UTF-8''model`, "gpt-4o-transcribe") + end, 401, "gpt-4o-transcribe"},
	}
	for _, c := range cases {
		before := calls.Load()
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/audio/transcriptions", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+b)
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		forwarded := calls.Load() > before
		if resp.StatusCode != c.status || forwarded != (c.status == 200) || !strings.Contains(string(answer), c.says) {
			t.Errorf("%s: %d %s, forwarded %v; want %d saying %q", c.name, resp.StatusCode, answer, forwarded, c.status, c.says)
		}
	}
}

// TestOwnFormFieldNames: the gateway's own transcription and image edit routes read
// OpenAI's fields whatever the case of their names (Model is model) and by an RFC
// 2231/5987 name*, decoded; a field OpenAI does not take passes on as it came.
func TestOwnFormFieldNames(t *testing.T) {
	const b = "XyZb0undary"
	part := func(cd, v string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; " + cd + "\r\n\r\n" + v + "\r\n"
	}
	end := "--" + b + "--\r\n"
	ctype := "multipart/form-data; boundary=" + b

	hs, _, up := audioServer(t)
	body := "--" + b + "\r\nContent-Disposition: form-data; Name=\"File\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\nID3audio\r\n" +
		part(`name="Model"`, "whisper-1") + part(`name*=UTF-8''language`, "en") + part(`name="RESPONSE_FORMAT"`, "json") + end
	resp, got := postForm(t, hs.URL+"/v1/audio/transcriptions", testKey, bytes.NewBufferString(body), ctype, false)
	if resp.StatusCode != 200 {
		t.Fatalf("transcription: %d %s", resp.StatusCode, got)
	}
	up.mu.Lock()
	form, size := up.form, up.size
	up.mu.Unlock()
	if size != 8 || len(form["model"]) != 1 || form["model"][0] != "whisper-1" || len(form["language"]) != 1 || form["language"][0] != "en" ||
		len(form["response_format"]) != 1 || form["response_format"][0] != "json" {
		t.Errorf("transcription: upstream got %v (file %d bytes), want model, language and response_format read", form, size)
	}

	ihs, _, iup := imageEditServer(t)
	img := squarePNG(t, 8)
	body = "--" + b + "\r\nContent-Disposition: form-data; name=\"Image\"; filename=\"f.png\"\r\nContent-Type: image/png\r\n\r\n" + string(img) + "\r\n" +
		part(`name="Model"`, "dall-e-2") + part(`name*=UTF-8''prompt`, "add a hat") + part(`name="Size"`, "256x256") + part(`name="Seed"`, "3") + end
	resp, got = do2(t, "POST", ihs.URL+"/v1/images/edits", testKey, body, map[string]string{"Content-Type": ctype})
	if resp.StatusCode != 200 || !strings.Contains(string(got), "openai/dall-e-2") {
		t.Fatalf("image edit: %d %s", resp.StatusCode, got)
	}
	iup.mu.Lock()
	defer iup.mu.Unlock()
	if len(iup.files["image"]) != 1 || !bytes.Equal(iup.files["image"][0], img) || len(iup.fields["prompt"]) != 1 || iup.fields["prompt"][0] != "add a hat" ||
		len(iup.fields["size"]) != 1 || iup.fields["size"][0] != "256x256" || len(iup.fields["Seed"]) != 1 || iup.fields["model"] == nil {
		t.Errorf("image edit: upstream got fields %v and files %d, want image, prompt, size and model read, Seed as it came", iup.fields, len(iup.files["image"]))
	}
}
