package completions

import (
	"context"
	"encoding/json"
	"errors"
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
			"messages[0].content[0].image_url", "http or https URL"},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/tiff;base64,AAAA"}}]}]}`,
			"messages[0].content[1].image_url", `type "image/tiff"`},
		{`{"model":"a/m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"ultra"}}]}]}`,
			"messages[0].content[0].image_url", "detail must be"},
		{`{"model":"a/m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}]}`,
			"messages[1].content[0].type", "user messages only"},
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
	want := []providers.Part{{Text: "Which is larger?"}, {Image: &providers.Image{URL: "https://example.com/a.png", Detail: "high"}},
		{Image: &providers.Image{URL: pngDataURL}}, {Text: "One word."}}
	if got, w := jsonText(h.a.lastRequest().Messages[0].Parts), jsonText(want); got != w {
		t.Errorf("parts = %s, want %s", got, w)
	}

	for _, c := range []struct{ input, field, msg string }{
		{`[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]`, "input[0].content[0].file_id", "stores no files"},
		{`[{"role":"user","content":[{"type":"input_image","detail":"auto"}]}]`, "input[0].content[0].image_url", "is required"},
		{`[{"role":"user","content":[{"type":"input_image","image_url":"file:///etc/passwd"}]}]`, "input[0].content[0].image_url", "http or https URL"},
		{`[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"input_image","image_url":"https://x/a.png"}]}]`, "input[1].content[0].type", "user messages only"},
		{`[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]`, "input[0].content[0].type", "text and input_image"},
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

// TestGeminiUntypedImageURLRefusedBeforeCalling: a Gemini model, primary or fallback, that
// could not be told an image URL's type makes the request a 400 naming the part, before
// any upstream is called.
func TestGeminiUntypedImageURLRefusedBeforeCalling(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the Gemini upstream was called")
	}))
	defer up.Close()
	gem, err := providers.New(providers.FormatGemini, providers.Config{Name: "google", BaseURL: up.URL, APIKey: "k", HTTPClient: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"a": o.Providers.(fakeRegistry)["a"], "google": gem} })
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"a/m","fallback_models":["google/gemini-2.5-flash"],"messages":[{"role":"user","content":[
		{"type":"text","text":"What is it?"},{"type":"image_url","image_url":{"url":"https://example.com/render?id=7"}}]}]}`), &o)
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.g.Complete(context.Background(), Scope{}, req)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "messages[0].content[1].image_url" || !strings.Contains(ve.Message, "google/gemini-2.5-flash") {
		t.Fatalf("err = %v, want a validation error naming messages[0].content[1].image_url and the model", err)
	}
	if n := h.a.callCount("m"); n != 0 {
		t.Errorf("the primary was called %d times", n)
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
