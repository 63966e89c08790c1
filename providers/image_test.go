package providers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// pngHeader is the start of a PNG file: its signature and the IHDR chunk of a 1×1 image.
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

func TestCheckImage(t *testing.T) {
	png := base64.StdEncoding.EncodeToString(pngHeader)
	for _, c := range []struct {
		img  providers.Image
		want string // "" for valid, else a part of the message
	}{
		{providers.Image{URL: "https://example.com/cat.png"}, ""},
		{providers.Image{URL: "http://example.com/x?id=1", Detail: "low"}, ""},
		{providers.Image{URL: "data:image/png;base64," + png, Detail: "high"}, ""},
		{providers.Image{URL: "DATA:image/jpeg;base64," + png}, "http or https URL"}, // the scheme is case-sensitive here
		{providers.Image{URL: "data:image/jpeg;charset=x;base64," + png, Detail: "auto"}, ""},
		{providers.Image{URL: "ftp://example.com/cat.png"}, "http or https URL"},
		{providers.Image{URL: "https:///cat.png"}, "http or https URL"},
		{providers.Image{URL: "cat.png"}, "http or https URL"},
		{providers.Image{URL: ""}, "http or https URL"},
		{providers.Image{URL: "https://example.com/cat.png", Detail: "original"}, ""}, // OpenAI's newer values pass on
		{providers.Image{URL: "https://example.com/cat.png", Detail: "High!"}, "must be a word"},
		{providers.Image{URL: "data:image/jpg;base64," + png}, ""}, // a common misspelling of image/jpeg
		{providers.Image{URL: "https://example.com/render?id=1", MediaType: "image/jpg"}, ""},
		{providers.Image{URL: "https://example.com/render?id=1", MediaType: "image/bmp"}, `type "image/bmp"`},
		{providers.Image{URL: "data:image/png," + png}, "data URL must be"},
		{providers.Image{URL: "data:image/bmp;base64," + png}, `type "image/bmp"`},
		{providers.Image{URL: "data:application/pdf;base64," + png}, "is not one of image/png"},
		{providers.Image{URL: "data:image/png;base64,abc"}, "not base64"},
		{providers.Image{URL: "data:image/png;base64,ab!d"}, "not base64"},
		{providers.Image{URL: "data:image/png;base64,a==="}, "not base64"},
		{providers.Image{URL: "data:image/png;base64,"}, "not base64"},
	} {
		err := providers.CheckImage(c.img)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%.60q: %v, want valid", c.img.URL, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%.60q: %v, want an error containing %q", c.img.URL, err, c.want)
		case err != nil && !errors.Is(err, providers.ErrImage):
			t.Errorf("%.60q: %v does not wrap ErrImage", c.img.URL, err)
		}
	}
	var ie *providers.ImageError
	if err := providers.CheckImage(providers.Image{URL: "x", Detail: "Low"}); !errors.As(err, &ie) || ie.Field != "detail" {
		t.Errorf("a bad detail: %v, want an ImageError about detail", err)
	}
	if err := providers.CheckImage(providers.Image{URL: "x"}); !errors.As(err, &ie) || ie.Field != "url" {
		t.Errorf("a bad url: %v, want an ImageError about url", err)
	}
}

func TestImageMediaType(t *testing.T) {
	png := base64.StdEncoding.EncodeToString(pngHeader)
	for url, want := range map[string]string{
		"data:image/png;base64," + png:                  "image/png",
		"data:image/jpeg;base64," + png:                 "image/png", // the bytes say PNG: Anthropic refuses a wrong type
		"data:image/webp;base64,AAAAAAAA":               "image/webp",
		"https://example.com/a/cat.JPG":                 "image/jpeg",
		"https://example.com/cat.jpeg?size=2":           "image/jpeg",
		"https://example.com/anim.gif":                  "image/gif",
		"https://example.com/x.webp#frag":               "image/webp",
		"https://example.com/render?format=png":         "",
		"https://example.com/cat.png.html":              "",
		"https://example.com/" + strings.Repeat("a", 9): "",
		"data:image/jpg;base64,AAAAAAAA":                "image/jpeg",
	} {
		if got := providers.ImageMediaType(providers.Image{URL: url}); got != want {
			t.Errorf("ImageMediaType(%.50q) = %q, want %q", url, got, want)
		}
	}
	// A type given with the image (LiteLLM's format) counts when the URL says none.
	if got := providers.ImageMediaType(providers.Image{URL: "https://example.com/render?id=1", MediaType: "image/jpg"}); got != "image/jpeg" {
		t.Errorf("with a media type: %q", got)
	}
	if got := providers.ImageMediaType(providers.Image{URL: "https://example.com/a.gif", MediaType: "image/png"}); got != "image/gif" {
		t.Errorf("the extension and a media type: %q, want the extension's", got)
	}
}

// TestImagesMapToEachWireFormat: a user turn's text and images reach every upstream in
// order, in its own shape: OpenAI image_url parts (with detail), Anthropic url and base64
// image sources (the type corrected from the bytes), Gemini fileData and inlineData.
func TestImagesMapToEachWireFormat(t *testing.T) {
	png := base64.StdEncoding.EncodeToString(pngHeader)
	dataURL := "data:image/jpeg;base64," + png // declared JPEG, is PNG
	req := func() *providers.Request {
		return &providers.Request{Model: "m-1", Messages: []providers.Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Compare\nthem.", Parts: []providers.Part{
				{Text: "Compare"},
				{Image: &providers.Image{URL: "https://example.com/cat.png", Detail: "low"}},
				{Image: &providers.Image{URL: dataURL}},
				{Text: "them."},
			}},
		}}
	}
	want := map[providers.Format]string{
		providers.FormatOpenAI: `[{"content":"Be brief.","role":"system"},{"content":[{"text":"Compare","type":"text"},` +
			`{"image_url":{"detail":"low","url":"https://example.com/cat.png"},"type":"image_url"},` +
			`{"image_url":{"url":"` + dataURL + `"},"type":"image_url"},{"text":"them.","type":"text"}],"role":"user"}]`,
		providers.FormatAnthropic: `[{"content":[{"text":"Compare","type":"text"},` +
			`{"source":{"type":"url","url":"https://example.com/cat.png"},"type":"image"},` +
			`{"source":{"data":"` + png + `","media_type":"image/png","type":"base64"},"type":"image"},{"text":"them.","type":"text"}],"role":"user"}]`,
		providers.FormatGemini: `[{"parts":[{"text":"Compare"},{"fileData":{"fileUri":"https://example.com/cat.png","mimeType":"image/png"}},` +
			`{"inlineData":{"data":"` + png + `","mimeType":"image/png"}},{"text":"them."}],"role":"user"}]`,
	}
	field := map[providers.Format]string{providers.FormatOpenAI: "messages", providers.FormatAnthropic: "messages", providers.FormatGemini: "contents"}
	var body map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(400)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	for _, f := range allFormats {
		p := newProvider(t, f, srv.URL, nil)
		p.Complete(context.Background(), req())
		var v any
		json.Unmarshal(body[field[f]], &v)
		got, _ := json.Marshal(v) // keys sorted
		if string(got) != want[f] {
			t.Errorf("%s: %s =\n%s\nwant\n%s", f, field[f], got, want[f])
		}
	}
}

// TestGeminiRefusesUntypedImageURL: Gemini's fileData needs the image's type; a URL that
// does not say it is refused before the call, naming the part.
func TestGeminiRefusesUntypedImageURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the upstream was called")
	}))
	defer srv.Close()
	p := newProvider(t, providers.FormatGemini, srv.URL, nil)
	req := &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{
		{Role: "user", Content: "What is it?", Parts: []providers.Part{{Text: "What is it?"}, {Image: &providers.Image{URL: "https://example.com/render?id=7"}}}},
	}}
	err := providers.Check(p, req.Model, req)
	var ue *providers.UnsupportedError
	if !errors.As(err, &ue) || ue.Field != "messages[0].content[1].image_url" || !strings.Contains(ue.Reason, "data URL") {
		t.Fatalf("Check = %v, want an UnsupportedError naming messages[0].content[1].image_url", err)
	}
	if _, err := p.Complete(context.Background(), req); providers.KindOf(err) != providers.KindBadRequest {
		t.Errorf("Complete = %v, want a bad request", err)
	}
	req.Messages[0].Parts[1].Image.MediaType = "image/png" // told the type
	if err := providers.Check(p, req.Model, req); err != nil {
		t.Errorf("a URL with its type: Check = %v", err)
	}
	req.Messages[0].Parts[1].Image = &providers.Image{URL: "https://example.com/render.webp?id=7"}
	if err := providers.Check(p, req.Model, req); err != nil {
		t.Errorf("a typed URL: Check = %v", err)
	}
}

func TestEstimateUsageCountsImages(t *testing.T) {
	text := &providers.Request{Messages: []providers.Message{{Role: "user", Content: "What is it?"}}}
	withImages := &providers.Request{Messages: []providers.Message{{Role: "user", Content: "What is it?", Parts: []providers.Part{
		{Text: "What is it?"}, {Image: &providers.Image{URL: "https://example.com/a.png"}}, {Image: &providers.Image{URL: "https://example.com/b.png", Detail: "low"}},
	}}}}
	a := providers.EstimateUsage("gpt-4o", text, nil).PromptTokens
	b := providers.EstimateUsage("gpt-4o", withImages, nil).PromptTokens
	if b-a != 765+85 {
		t.Errorf("images added %d prompt tokens, want %d (a high-detail and a low-detail image)", b-a, 765+85)
	}
}

// TestFilesMapToEachWireFormat: a PDF in a user turn reaches every upstream in its own
// shape — OpenAI a file part (with a filename, which it requires), Anthropic a document
// block (base64 or url source, the filename as title), Gemini inlineData or fileData — and
// an OpenAI-format model refuses a PDF given by URL before calling.
func TestFilesMapToEachWireFormat(t *testing.T) {
	const pdf = "JVBERi0xLjQK"
	req := func(url string) *providers.Request {
		return &providers.Request{Model: "m-1", Messages: []providers.Message{{Role: "user", Content: "Summarise", Parts: []providers.Part{
			{Text: "Summarise"}, {File: &providers.File{URL: url, Filename: "q3.pdf"}}, {File: &providers.File{URL: "data:application/pdf;base64," + pdf}},
		}}}}
	}
	want := map[providers.Format]string{
		providers.FormatOpenAI: `[{"content":[{"text":"Summarise","type":"text"},{"file":{"file_data":"data:application/pdf;base64,` + pdf + `","filename":"q3.pdf"},"type":"file"},` +
			`{"file":{"file_data":"data:application/pdf;base64,` + pdf + `","filename":"document.pdf"},"type":"file"}],"role":"user"}]`,
		providers.FormatAnthropic: `[{"content":[{"text":"Summarise","type":"text"},{"source":{"type":"url","url":"https://example.com/q3.pdf"},"title":"q3.pdf","type":"document"},` +
			`{"source":{"data":"` + pdf + `","media_type":"application/pdf","type":"base64"},"type":"document"}],"role":"user"}]`,
		providers.FormatGemini: `[{"parts":[{"text":"Summarise"},{"fileData":{"fileUri":"https://example.com/q3.pdf","mimeType":"application/pdf"}},` +
			`{"inlineData":{"data":"` + pdf + `","mimeType":"application/pdf"}}],"role":"user"}]`,
	}
	field := map[providers.Format]string{providers.FormatOpenAI: "messages", providers.FormatAnthropic: "messages", providers.FormatGemini: "contents"}
	var body map[string]json.RawMessage
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		body = nil
		json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(400)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	for _, f := range allFormats {
		p := newProvider(t, f, srv.URL, nil)
		url := "https://example.com/q3.pdf"
		if f == providers.FormatOpenAI {
			url = "data:application/pdf;base64," + pdf
		}
		p.Complete(context.Background(), req(url))
		var v any
		json.Unmarshal(body[field[f]], &v)
		got, _ := json.Marshal(v)
		if string(got) != want[f] {
			t.Errorf("%s: %s =\n%s\nwant\n%s", f, field[f], got, want[f])
		}
	}
	p := newProvider(t, providers.FormatOpenAI, srv.URL, nil)
	before := calls
	r := req("https://example.com/q3.pdf")
	var ue *providers.UnsupportedError
	if err := providers.Check(p, r.Model, r); !errors.As(err, &ue) || ue.Field != "messages[0].content[1].file.file_data" {
		t.Errorf("OpenAI, a PDF URL: Check = %v", err)
	}
	if _, err := p.Complete(context.Background(), r); providers.KindOf(err) != providers.KindBadRequest || calls != before {
		t.Errorf("OpenAI, a PDF URL: Complete = %v after %d calls", err, calls-before)
	}
}

func TestCheckFile(t *testing.T) {
	for _, c := range []struct {
		f    providers.File
		want string
	}{
		{providers.File{URL: "data:application/pdf;base64,JVBERi0xLjQK", Filename: "a.pdf"}, ""},
		{providers.File{URL: "https://example.com/a"}, ""},
		{providers.File{URL: "data:text/plain;base64,AAAA"}, "is not application/pdf"},
		{providers.File{URL: "data:application/pdf;base64,%%%%"}, "not base64"},
		{providers.File{URL: "file:///etc/passwd"}, "http or https URL"},
		{providers.File{URL: "https://example.com/a", Filename: strings.Repeat("x", 256)}, "at most 255"},
		{providers.File{URL: "https://example.com/a", Filename: "a\x00b"}, "control characters"},
	} {
		err := providers.CheckFile(c.f)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, providers.ErrImage)) {
			t.Errorf("%.40q %q: %v, want %q", c.f.URL, c.f.Filename, err, c.want)
		}
	}
	// Usage estimates count a PDF by its size.
	small := &providers.Request{Messages: []providers.Message{{Role: "user", Parts: []providers.Part{{File: &providers.File{URL: "data:application/pdf;base64,JVBERi0xLjQK"}}}}}}
	big := &providers.Request{Messages: []providers.Message{{Role: "user", Parts: []providers.Part{{File: &providers.File{URL: "data:application/pdf;base64," + strings.Repeat("AAAA", 100000)}}}}}}
	s, b := providers.EstimateUsage("gpt-4o", small, nil).PromptTokens, providers.EstimateUsage("gpt-4o", big, nil).PromptTokens
	if s < 1000 || b != s-1000+300000/12 {
		t.Errorf("estimated prompt tokens: small PDF %d, 300 kB PDF %d", s, b)
	}
}

// TestAnthropicPromptCacheMarks: with PromptCache the Anthropic body marks the system
// prompt, the last tool and the last message as cache breakpoints; without it, none.
func TestAnthropicPromptCacheMarks(t *testing.T) {
	var body map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(400)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	p := newProvider(t, providers.FormatAnthropic, srv.URL, nil)
	req := &providers.Request{Model: "claude-sonnet-4-5", Messages: []providers.Message{
		{Role: "system", Content: "You are a coding agent."},
		{Role: "user", Content: "Fix it."},
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "t1", Name: "read", Arguments: `{}`}}},
		{Role: "tool", ToolCallID: "t1", Content: "package main"},
	}, Tools: []providers.Tool{{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "write", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	p.Complete(context.Background(), req)
	if strings.Contains(string(body["system"])+string(body["tools"])+string(body["messages"]), "cache_control") {
		t.Fatalf("cache marks without PromptCache: %s", body["messages"])
	}
	req.PromptCache = true
	p.Complete(context.Background(), req)
	mark := `"cache_control":{"type":"ephemeral"}`
	if got := string(body["system"]); got != `[{"type":"text","text":"You are a coding agent.",`+mark+`}]` {
		t.Errorf("system %s", got)
	}
	if got := string(body["tools"]); strings.Count(got, mark) != 1 || !strings.HasSuffix(got, mark+`}]`) {
		t.Errorf("tools %s: want the last one marked", got)
	}
	if got := string(body["messages"]); strings.Count(got, mark) != 1 || !strings.HasSuffix(got, `"tool_result",`+mark+`,"tool_use_id":"t1","content":"package main"}]}]`) {
		t.Errorf("messages %s: want the last block marked", got)
	}
}

// TestTopKMapsWhereTaken: top_k reaches Anthropic (top_k) and Gemini (generationConfig.topK);
// OpenAI-format upstreams, which have no such option, do not get it.
func TestTopKMapsWhereTaken(t *testing.T) {
	var raw []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ = io.ReadAll(r.Body)
		w.WriteHeader(400)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	k := 40
	for f, want := range map[providers.Format]string{providers.FormatAnthropic: `"top_k":40`, providers.FormatGemini: `"topK":40`, providers.FormatOpenAI: ""} {
		req := hello("m-1")
		req.TopK = &k
		newProvider(t, f, srv.URL, nil).Complete(context.Background(), req)
		got := string(raw)
		if want != "" && !strings.Contains(got, want) || want == "" && strings.Contains(strings.ToLower(got), "top_k") {
			t.Errorf("%s: body %s, want %q", f, got, want)
		}
	}
}

// TestAnthropicStopSequence: the stop sequence that ended an Anthropic answer is reported,
// whole and streamed.
func TestAnthropicStopSequence(t *testing.T) {
	whole := newFakeUpstream(t, "application/json", `{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"one two"}],"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":5,"output_tokens":2}}`)
	resp, err := whole.provider(t, providers.FormatAnthropic).Complete(context.Background(), hello("claude-x"))
	if err != nil || resp.StopSequence != "END" || resp.FinishReason != "stop" {
		t.Fatalf("whole: %+v, %v", resp, err)
	}
	events := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":0}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"one two\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"stop_sequence\",\"stop_sequence\":\"END\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	st, err := newFakeUpstream(t, "text/event-stream", events).provider(t, providers.FormatAnthropic).Stream(context.Background(), hello("claude-x"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seq := ""
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.StopSequence != "" {
			seq = c.StopSequence
		}
	}
	if seq != "END" {
		t.Errorf("streamed: stop sequence %q, want END", seq)
	}
}

// TestAnthropicOneHourCache: a one-hour TTL reaches the breakpoints it was asked for — the
// tools' alone, the system prompt's, the conversation's — and those before it in Anthropic's
// order (tools, system, messages), since Anthropic refuses a longer-lived breakpoint after
// a shorter-lived one: tools kept an hour leave the system prompt at 5 minutes. The beta
// header goes with any; the answer's one-hour cache writes are counted apart and priced at
// their rate.
func TestAnthropicOneHourCache(t *testing.T) {
	var body map[string]json.RawMessage
	var beta string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, beta = nil, r.Header.Get("Anthropic-Beta")
		json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000}}}`)
	}))
	defer srv.Close()
	p := newProvider(t, providers.FormatAnthropic, srv.URL, nil)
	req := &providers.Request{Model: "claude-sonnet-4-5", PromptCache: true, Messages: []providers.Message{
		{Role: "system", Content: "You are a coding agent."}, {Role: "user", Content: "Fix it."}},
		Tools: []providers.Tool{{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	one, five := `"cache_control":{"type":"ephemeral","ttl":"1h"}`, `"cache_control":{"type":"ephemeral"}`
	for _, c := range []struct {
		toolsTTL, prefix, tail string
		sys, tools, messages   string
		beta                   bool
	}{
		{"", "", "", five, five, five, false},
		{"", "1h", "", one, one, five, true},
		{"", "", "1h", one, one, one, true},
		{"1h", "", "", five, one, five, true}, // the tools alone: the system prompt stays at 5 minutes
		{"1h", "1h", "", one, one, five, true},
		{"1h", "", "1h", one, one, one, true},
		{"30m", "30m", "", five, five, five, false}, // only what Anthropic takes
	} {
		req.PromptCacheToolsTTL, req.PromptCacheTTL, req.PromptCacheTailTTL = c.toolsTTL, c.prefix, c.tail
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body["system"]), c.sys) || !strings.Contains(string(body["tools"]), c.tools) || !strings.Contains(string(body["messages"]), c.messages) {
			t.Errorf("%q/%q/%q: system %s tools %s messages %s", c.toolsTTL, c.prefix, c.tail, body["system"], body["tools"], body["messages"])
		}
		if strings.Contains(beta, providers.AnthropicExtendedCacheTTLBeta) != c.beta {
			t.Errorf("%q/%q/%q: anthropic-beta %q", c.toolsTTL, c.prefix, c.tail, beta)
		}
		if u := resp.Usage; u.CacheCreationTokens != 3000 || u.CacheCreation1hTokens != 2000 {
			t.Fatalf("usage %+v", u)
		}
	}
	cost := providers.DefaultCatalog().Cost("anthropic/claude-sonnet-4-5", providers.Usage{PromptTokens: 3000, CacheCreationTokens: 3000, CacheCreation1hTokens: 2000})
	if want := 1000*3.75e-6 + 2000*6e-6; math.Abs(cost.InputUSD-want) > 1e-12 {
		t.Errorf("cache writes cost %v, want %v (5-minute writes at 1.25x, one-hour at 2x)", cost.InputUSD, want)
	}
}
