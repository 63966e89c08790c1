package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRequestIDAudioAndImageEditRefusals: the audio routes and /v1/images/edits record the
// requests they refuse before the gateway did (a body that is not their form), as the
// other gateway routes do: each is in the usage history under the x-request-id it was
// answered with, an error of its operation; every answer carries x-litellm-call-id equal
// to x-request-id.
func TestRequestIDAudioAndImageEditRefusals(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	cases := []struct{ path, body, op string }{
		{"/v1/audio/speech", `{"model":`, "speech"},
		{"/v1/audio/transcriptions", `{"model":"openai/whisper-1"}`, "transcription"},
		{"/v1/audio/translations", `{"model":"openai/whisper-1"}`, "translation"},
		{"/v1/images/edits", `{"model":"openai/dall-e-2"}`, "image_edit"},
	}
	ids := map[string]string{}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", hs.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rid := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != http.StatusBadRequest || !ourRequestID.MatchString(rid) {
			t.Fatalf("%s: %d, x-request-id %q: %s", c.path, resp.StatusCode, rid, b)
		}
		if call := resp.Header.Get("x-litellm-call-id"); call != rid {
			t.Fatalf("%s: x-litellm-call-id %q, x-request-id %q", c.path, call, rid)
		}
		ids[c.path] = rid
	}
	history := usageRequestsByID(t, s, testKey)
	for _, c := range cases {
		h := history[ids[c.path]]
		if h == nil {
			t.Errorf("%s: request %s not in the usage history", c.path, ids[c.path])
			continue
		}
		if h["outcome"] != "error" || h["operation"] != c.op {
			t.Errorf("%s: outcome %v, operation %v; want error, %s", c.path, h["outcome"], h["operation"], c.op)
		}
	}
	// Answers outside the gateway carry it too, a caller's own id as well.
	status, rid, _ := postWithID(t, hs.URL+"/v1/chat/completions", testKey, "trace-7", `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || rid != "trace-7" {
		t.Fatalf("chat: %d %q", status, rid)
	}
	resp, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rid := resp.Header.Get("X-Request-Id"); rid == "" || resp.Header.Get("x-litellm-call-id") != rid {
		t.Fatalf("/health: x-request-id %q, x-litellm-call-id %q", rid, resp.Header.Get("x-litellm-call-id"))
	}
}

// TestOpenAPIDocumentsRequestIDHeader: every response of every operation — success and
// failure — documents the X-Request-Id and x-litellm-call-id headers, through one
// components/headers entry each.
func TestOpenAPIDocumentsRequestIDHeader(t *testing.T) {
	_, s := fullAPIServer(t)
	doc := loadOpenAPI(t, s)
	for _, name := range []string{"X-Request-Id", "x-litellm-call-id"} {
		if h := doc.Components.Headers[name]; h == nil || h.Value == nil || h.Value.Schema == nil || h.Value.Description == "" {
			t.Fatalf("components/headers/%s: %+v", name, h)
		}
	}
	var raw struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Headers map[string]struct {
					Ref string `json:"$ref"`
				} `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &raw); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, ops := range raw.Paths {
		for method, op := range ops {
			for code, resp := range op.Responses {
				n++
				for _, name := range []string{"X-Request-Id", "x-litellm-call-id"} {
					if resp.Headers[name].Ref != "#/components/headers/"+name {
						t.Errorf("%s %s %s: header %s not documented (%+v)", method, path, code, name, resp.Headers)
					}
				}
			}
		}
	}
	if n < 3*len(s.Routes()) {
		t.Fatalf("%d responses for %d routes", n, len(s.Routes()))
	}
}
