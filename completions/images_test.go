package completions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

const pngDataURL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"

// TestOpenAIImagesReachTheProvider: image_url parts of a user message reach the provider as
// Parts, in order with the text, and the text alone is the turn's Content.
func TestOpenAIImagesReachTheProvider(t *testing.T) {
	var o OpenAIChatRequest
	body := `{"model":"a/m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[
		{"type":"text","text":"Which is larger?"},
		{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}},
		{"type":"image_url","image_url":{"url":"` + pngDataURL + `"}},
		{"type":"text","text":"Answer in one word."}]}]}`
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil)
	h.a.on("m", step{text: "left"})
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	sent := h.a.lastRequest().Messages
	if sent[0].Parts != nil {
		t.Errorf("a text-only turn got parts %+v", sent[0].Parts)
	}
	user := sent[1]
	want := []providers.Part{{Text: "Which is larger?"}, {Image: &providers.Image{URL: "https://example.com/a.png", Detail: "low"}},
		{Image: &providers.Image{URL: pngDataURL}}, {Text: "Answer in one word."}}
	if got, w := jsonText(user.Parts), jsonText(want); got != w {
		t.Errorf("parts = %s, want %s", got, w)
	}
	if user.Content != "Which is larger?\nAnswer in one word." {
		t.Errorf("content = %q, want the text parts joined", user.Content)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestImageValidation: images are refused where no upstream takes them, and malformed
// ones before any call, each naming the part.
func TestImageValidation(t *testing.T) {
	h := newHarness(t, nil)
	for _, c := range []struct {
		body, field, msg string
	}{
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/a.png"}}]}]}`,
			"messages[0].content[0].image_url.url", "http or https URL"},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/tiff;base64,AAAA"}}]}]}`,
			"messages[0].content[1].image_url.url", `type "image/tiff"`},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"Ultra!"}}]}]}`,
			"messages[0].content[0].image_url.detail", "must be a word"},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a","format":"image/svg+xml"}}]}]}`,
			"messages[0].content[0].image_url.format", `type "image/svg+xml"`},
		{`{"model":"a/m","messages":[{"role":"developer","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]},{"role":"user","content":"x"}]}`,
			"messages[0].content[0].type", `got one in a "developer" message`},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}]}`,
			"messages[1].content[0].type", `user messages only, got one in a "assistant" message`},
		{`{"model":"a/m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]},{"role":"user","content":"x"}]}`,
			"messages[0].content[0].type", "user messages only"},
	} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(c.body), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err == nil {
			_, err = h.g.Complete(context.Background(), Scope{}, req)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Message, c.msg) {
			t.Errorf("%s:\n  err = %v, want field %s with %q", c.body, err, c.field, c.msg)
		}
	}
	if n := h.a.callCount("m"); n != 0 {
		t.Errorf("the provider was called %d times", n)
	}
	// An image alone is content enough.
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}]}`), &o)
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "a cat"})
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Errorf("an image-only turn: %v", err)
	}
}

// TestResponsesInputImages: input_image parts become image parts of the user turn, in
// order with the text; file ids and images outside user messages are refused naming the
// input part.
func TestResponsesInputImages(t *testing.T) {
	var r ResponsesRequest
	body := `{"model":"a/m","input":[{"role":"user","content":[{"type":"input_text","text":"Which"},{"type":"input_text","text":" is larger?"},
		{"type":"input_image","image_url":"https://example.com/a.png","detail":"high"},{"type":"input_image","image_url":"` + pngDataURL + `"},
		{"type":"input_text","text":"One word."}]}]}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil)
	h.a.on("m", step{text: "left"})
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	// Every input part stays a part: neighbouring texts are not glued together.
	want := []providers.Part{{Text: "Which"}, {Text: " is larger?"}, {Image: &providers.Image{URL: "https://example.com/a.png", Detail: "high"}},
		{Image: &providers.Image{URL: pngDataURL}}, {Text: "One word."}}
	if got, w := jsonText(h.a.lastRequest().Messages[0].Parts), jsonText(want); got != w {
		t.Errorf("parts = %s, want %s", got, w)
	}

	for _, c := range []struct{ input, field, msg string }{
		{`[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]`, "input[0].content[0].file_id", "stores no files"},
		{`[{"role":"user","content":[{"type":"input_image","detail":"auto"}]}]`, "input[0].content[0].image_url", "is required"},
		{`[{"role":"user","content":[{"type":"input_image","image_url":"file:///etc/passwd"}]}]`, "input[0].content[0].image_url", "http or https URL"},
		{`[{"role":"user","content":[{"type":"input_image","image_url":"https://x/a.png","detail":"HIGH"}]}]`, "input[0].content[0].detail", "must be a word"},
		{`[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"input_image","image_url":"https://x/a.png"}]}]`, "input[1].content[0].type", "user messages only"},
		{`[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]`, "input[0].content[0].file_id", "stores no files"},
		{`[{"role":"user","content":[{"type":"input_file","filename":"a.pdf"}]}]`, "input[0].content[0].file_data", "file_data or file_url is required"},
		{`[{"role":"user","content":[{"type":"input_file","file_data":"data:text/plain;base64,AAAA"}]}]`, "input[0].content[0].file_data", "is not application/pdf"},
		{`[{"role":"user","content":[{"type":"input_file","file_url":"ftp://x/a.pdf"}]}]`, "input[0].content[0].file_url", "http or https URL"},
		{`[{"role":"system","content":[{"type":"input_file","file_url":"https://x/a.pdf"}]}]`, "input[0].content[0].type", "user messages only"},
		{`[{"role":"user","content":[{"type":"input_audio"}]}]`, "input[0].content[0].type", "input_image and input_file"},
	} {
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","input":`+c.input+`}`), &r); err != nil {
			t.Fatal(err)
		}
		_, err := r.ToChatRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Message, c.msg) {
			t.Errorf("%s:\n  err = %v, want field %s with %q", c.input, err, c.field, c.msg)
		}
	}
}

// geminiHarness is a harness with a real Gemini adapter ("google") beside the fake "a",
// whose upstream answers "a cat" and records the bodies it got.
func geminiHarness(t *testing.T) (*harness, *[]string) {
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"a cat"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7}}`)
	}))
	t.Cleanup(up.Close)
	gem, err := providers.New(providers.FormatGemini, providers.Config{Name: "google", BaseURL: up.URL, APIKey: "k", HTTPClient: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"a": o.Providers.(fakeRegistry)["a"], "google": gem} })
	return h, &bodies
}

// TestImageURLGeminiCannotTake: Gemini must be told an image URL's type. A URL that does
// not say it makes a Gemini model skipped (recorded in the attempts) when another model
// can take the request, and the request a 400 naming the part, before any call, when none
// can; LiteLLM's image_url.format tells the type.
func TestImageURLGeminiCannotTake(t *testing.T) {
	untyped := `[{"role":"user","content":[{"type":"text","text":"What is it?"},{"type":"image_url","image_url":{"url":"https://example.com/render?id=7"}}]}]`
	chat := func(models, messages string) *Request {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{`+models+`,"messages":`+messages+`}`), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		return req
	}

	h, bodies := geminiHarness(t)
	_, err := h.g.Complete(context.Background(), Scope{}, chat(`"model":"google/gemini-2.5-flash"`, untyped))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "messages[0].content[1].image_url" || !strings.Contains(ve.Message, "google/gemini-2.5-flash") {
		t.Fatalf("Gemini alone: err = %v, want a validation error naming messages[0].content[1].image_url and the model", err)
	}

	h.a.on("m", step{text: "a dog"})
	resp, err := h.g.Complete(context.Background(), Scope{}, chat(`"model":"google/gemini-2.5-flash","fallback_models":["a/m"]`, untyped))
	if err != nil {
		t.Fatalf("Gemini then a model that can take it: %v", err)
	}
	if resp.Model != "m" || len(resp.Attempts) != 2 || resp.Attempts[0].Outcome != OutcomeSkipped ||
		resp.Attempts[0].Model != "google/gemini-2.5-flash" || !strings.Contains(resp.Attempts[0].Error, "told an image URL's type") {
		t.Errorf("answered by %s, attempts %+v: want Gemini skipped, then a/m", resp.Model, resp.Attempts)
	}
	if len(*bodies) != 0 {
		t.Errorf("the Gemini upstream was called: %q", *bodies)
	}

	typed := strings.Replace(untyped, `"url":"https://example.com/render?id=7"`, `"url":"https://example.com/render?id=7","format":"image/jpeg"`, 1)
	if _, err := h.g.Complete(context.Background(), Scope{}, chat(`"model":"google/gemini-2.5-flash"`, typed)); err != nil {
		t.Fatalf("with image_url.format: %v", err)
	}
	if n := len(*bodies); n != 1 || !strings.Contains((*bodies)[0], `"fileData":{"mimeType":"image/jpeg","fileUri":"https://example.com/render?id=7"}`) {
		t.Errorf("Gemini got %q", *bodies)
	}
}

// TestResponsesImageErrorsNameTheInput: a refusal found by the gateway's checks names the
// /v1/responses field, not the chat request's it was translated to.
func TestResponsesImageErrorsNameTheInput(t *testing.T) {
	h, _ := geminiHarness(t)
	var r ResponsesRequest
	json.Unmarshal([]byte(`{"model":"google/gemini-2.5-flash","instructions":"Be brief.","input":[
		{"type":"function_call","call_id":"c1","name":"look","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"done"},
		{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"},{"type":"input_image","image_url":"https://ex.com/img?id=3"}]}]}`), &r)
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.g.Complete(context.Background(), Scope{}, req)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "input[2].content[2].image_url" {
		t.Fatalf("err = %v, want a validation error naming input[2].content[2].image_url", err)
	}
	for f, want := range map[string]string{
		"messages[0]":                             "instructions",
		"messages[0].content":                     "instructions",
		"messages[3].content[2].image_url.url":    "input[2].content[2].image_url",
		"messages[3].content[1].image_url.detail": "input[2].content[1].detail",
		"messages[9].content":                     "messages[9].content",
		"model":                                   "model",
	} {
		if got := c.fieldName(f); got != want {
			t.Errorf("%s -> %s, want %s", f, got, want)
		}
	}
}

// TestGatewayAsProviderKeepsImages: library code calling the gateway as a provider (the
// optimizer's proposer, for one) passes images on.
func TestGatewayAsProviderKeepsImages(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "a cat"})
	p, model, err := Resolver{Gateway: h.g}.Resolve("a/m")
	if err != nil {
		t.Fatal(err)
	}
	parts := []providers.Part{{Text: "What is it?"}, {Image: &providers.Image{URL: pngDataURL}}}
	if _, err := p.Complete(context.Background(), &providers.Request{Model: model, Messages: []providers.Message{
		{Role: "user", Content: "What is it?", Parts: parts}}}); err != nil {
		t.Fatal(err)
	}
	if got := jsonText(h.a.lastRequest().Messages[0].Parts); got != jsonText(parts) {
		t.Errorf("parts = %s, want %s", got, jsonText(parts))
	}
}

const pdfDataURL = "data:application/pdf;base64,JVBERi0xLjQK"

// TestFilesReachTheProvider: PDF file parts — chat's file.file_data, Responses' input_file
// file_data or file_url — reach the provider as file parts in order; file ids, other types
// and files outside user turns are refused naming the part.
func TestFilesReachTheProvider(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "a report"})
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":[{"type":"text","text":"Summarise"},
		{"type":"file","file":{"file_data":"`+pdfDataURL+`","filename":"q3.pdf"}}]}]}`), &o)
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	want := []providers.Part{{Text: "Summarise"}, {File: &providers.File{URL: pdfDataURL, Filename: "q3.pdf"}}}
	if got := jsonText(h.a.lastRequest().Messages[0].Parts); got != jsonText(want) {
		t.Errorf("chat: parts = %s, want %s", got, jsonText(want))
	}

	var r ResponsesRequest
	json.Unmarshal([]byte(`{"model":"a/m","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://example.com/q3.pdf"},
		{"type":"input_file","file_data":"`+pdfDataURL+`","filename":"q4.pdf"},{"type":"input_text","text":"Compare"}]}]}`), &r)
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	if req, err = c.ToRequest(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	want = []providers.Part{{File: &providers.File{URL: "https://example.com/q3.pdf"}}, {File: &providers.File{URL: pdfDataURL, Filename: "q4.pdf"}}, {Text: "Compare"}}
	if got := jsonText(h.a.lastRequest().Messages[0].Parts); got != jsonText(want) {
		t.Errorf("responses: parts = %s, want %s", got, jsonText(want))
	}

	for _, c := range []struct{ body, field, msg string }{
		{`{"type":"file","file":{"file_id":"file-abc"}}`, "messages[0].content[0].file.file_id", "stores no files"},
		{`{"type":"file","file":{"filename":"a.pdf"}}`, "messages[0].content[0].file.file_data", "is required"},
		{`{"type":"file"}`, "messages[0].content[0].file.file_data", "is required"},
		{`{"type":"file","file":{"file_data":"data:image/png;base64,AAAA"}}`, "messages[0].content[0].file.file_data", "is not application/pdf"},
		{`{"type":"file","file":{"file_data":"` + pdfDataURL + `","filename":"a\nb.pdf"}}`, "messages[0].content[0].file.filename", "control characters"},
	} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":[`+c.body+`]}]}`), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err == nil {
			_, err = h.g.Complete(context.Background(), Scope{}, req)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Message, c.msg) {
			t.Errorf("%s:\n  err = %v, want field %s with %q", c.body, err, c.field, c.msg)
		}
	}
	json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"file","file":{"file_data":"`+pdfDataURL+`"}}]}]}`), &o)
	if _, err := o.ToRequest(); err == nil || !strings.Contains(err.Error(), `files are accepted in user messages only, got one in a "assistant" message`) {
		t.Errorf("a file in an assistant turn: %v", err)
	}
}

// TestFileURLSkipsOpenAIFormatModels: OpenAI-format APIs take a PDF as data only; a PDF
// given by URL skips such a model (recorded) for one that fetches it.
func TestFileURLSkipsOpenAIFormatModels(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the OpenAI-format upstream was called")
	}))
	defer up.Close()
	oai := providers.NewOpenAI(providers.Config{Name: "oai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"a": o.Providers.(fakeRegistry)["a"], "oai": oai} })
	h.a.on("m", step{text: "a report"})
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"oai/gpt-4o","fallback_models":["a/m"],"messages":[{"role":"user","content":[
		{"type":"file","file":{"file_data":"https://example.com/q3.pdf"}}]}]}`), &o)
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil || resp.Model != "m" || resp.Attempts[0].Outcome != OutcomeSkipped || !strings.Contains(resp.Attempts[0].Error, "not a URL") {
		t.Fatalf("resp %+v, err %v: want oai/gpt-4o skipped, a/m answering", resp, err)
	}
}
