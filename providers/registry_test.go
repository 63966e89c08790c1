package providers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// countingTransport proves the injected client is the one used.
type countingTransport struct {
	n atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// echoUpstream answers every format's non-streamed call with "ok" and records the last
// request's path and auth headers.
func echoUpstream(t *testing.T) (*httptest.Server, *http.Request) {
	var last http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last = *r.Clone(context.Background())
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(r.URL.Path, "/messages"):
			io.WriteString(w, `{"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		case strings.Contains(r.URL.Path, ":generateContent"):
			io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}`)
		default:
			io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &last
}

func TestRegistryFromEnv(t *testing.T) {
	srv, last := echoUpstream(t)
	ct := &countingTransport{}
	reg := providers.FromEnv(envOf(map[string]string{
		"OPENAI_API_KEY":     "sk-openai",
		"OPENAI_BASE_URL":    srv.URL + "/v1",
		"ANTHROPIC_API_KEY":  "sk-ant",
		"ANTHROPIC_BASE_URL": srv.URL,
		"GEMINI_API_KEY":     "g-key",
		"GEMINI_BASE_URL":    srv.URL,
		"GROQ_API_KEY":       "gsk",
		"GROQ_BASE_URL":      srv.URL + "/openai/v1",
		"OLLAMA_BASE_URL":    srv.URL, // Ollama's host; /v1 is added
	}), providers.Options{HTTPClient: &http.Client{Transport: ct}})

	want := []string{"anthropic", "azure", "bedrock", "cohere", "deepseek", "fireworks", "gemini", "groq", "jina", "mistral", "ollama", "openai", "openrouter", "together", "vertex_ai", "voyage", "xai"}
	if got := reg.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	calls := []struct {
		model, path, header, value string
	}{
		{"openai/gpt-4o", "/v1/chat/completions", "Authorization", "Bearer sk-openai"},
		{"anthropic/claude-sonnet-4-5", "/v1/messages", "X-Api-Key", "sk-ant"},
		{"gemini/gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent", "X-Goog-Api-Key", "g-key"},
		{"groq/llama-3.1-8b-instant", "/openai/v1/chat/completions", "Authorization", "Bearer gsk"},
		{"ollama/llama3", "/v1/chat/completions", "Authorization", ""},
	}
	for i, c := range calls {
		p, model, err := reg.Resolve(c.model)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", c.model, err)
		}
		resp, err := p.Complete(context.Background(), hello(model))
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if resp.Text != "ok" || last.URL.Path != c.path || last.Header.Get(c.header) != c.value {
			t.Errorf("%s: text %q path %q %s=%q; want path %q %s=%q", c.model, resp.Text, last.URL.Path, c.header, last.Header.Get(c.header), c.path, c.header, c.value)
		}
		if int(ct.n.Load()) != i+1 {
			t.Errorf("injected HTTP client used %d times after %d calls", ct.n.Load(), i+1)
		}
	}

	// Known but unconfigured: present, and failing with KindAuth without a request.
	p, err := reg.Lookup("mistral")
	if err != nil {
		t.Fatalf("mistral missing from the registry: %v", err)
	}
	before := ct.n.Load()
	_, err = p.Complete(context.Background(), hello("mistral-large-latest"))
	if providers.KindOf(err) != providers.KindAuth || !strings.Contains(err.Error(), "MISTRAL_API_KEY") {
		t.Errorf("unconfigured mistral: err = %v, want auth naming MISTRAL_API_KEY", err)
	}
	if ct.n.Load() != before {
		t.Error("unconfigured provider sent a request")
	}
	if c, ok := p.(providers.Configurable); !ok || c.Configured() {
		t.Error("mistral without key reports Configured")
	}
	if o, _ := reg.Lookup("ollama"); !o.(providers.Configurable).Configured() {
		t.Error("ollama needs no key but reports not configured")
	}
	if o, _ := reg.Lookup("openrouter"); o.(*providers.OpenAI).BaseURL() != "https://openrouter.ai/api/v1" {
		t.Errorf("openrouter default base URL = %s", o.(*providers.OpenAI).BaseURL())
	}

	// Unknown provider and malformed model strings.
	if _, err := reg.Lookup("nope"); !errors.Is(err, providers.ErrUnknownProvider) {
		t.Errorf("Lookup(nope) = %v, want ErrUnknownProvider", err)
	}
	if _, _, err := reg.Resolve("gpt-4o"); !errors.Is(err, providers.ErrBadModel) {
		t.Errorf("Resolve(gpt-4o) = %v, want ErrBadModel", err)
	}
	if _, _, err := reg.Resolve("nope/x"); !errors.Is(err, providers.ErrUnknownProvider) {
		t.Errorf("Resolve(nope/x) = %v, want ErrUnknownProvider", err)
	}

	// Register adds or replaces.
	reg.Register(providers.NewOpenAI(providers.Config{Name: "vllm", BaseURL: srv.URL + "/v1", KeyOptional: true}))
	if p, _, err := reg.Resolve("vllm/meta-llama/Llama-3-8B"); err != nil || p.Name() != "vllm" {
		t.Errorf("registered provider not found: %v", err)
	}
	var zero providers.Registry
	zero.Register(p)
	if _, err := zero.Lookup("mistral"); err != nil {
		t.Errorf("zero Registry not usable: %v", err)
	}
}

func TestRegistryConfigFile(t *testing.T) {
	srv, last := echoUpstream(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "providers.json")
	doc := `{"providers": [
	  {"name": "local-vllm", "format": "openai", "base_url": "` + srv.URL + `/v1", "api_key_env": "VLLM_KEY"},
	  {"name": "proxy-claude", "format": "anthropic", "base_url": "` + srv.URL + `", "api_key": "sk-inline"},
	  {"name": "openai", "base_url": "` + srv.URL + `/v1"}
	]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := providers.FromConfigFile(path, envOf(map[string]string{"VLLM_KEY": "vk", "OPENAI_API_KEY": "sk-env"}), providers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, header, value string }{
		{"local-vllm/qwen", "Authorization", "Bearer vk"},
		{"proxy-claude/claude-x", "X-Api-Key", "sk-inline"},
		{"openai/gpt-4o", "Authorization", "Bearer sk-env"},
	} {
		p, model, err := reg.Resolve(c.model)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), hello(model)); err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if last.Header.Get(c.header) != c.value {
			t.Errorf("%s: %s = %q, want %q", c.model, c.header, last.Header.Get(c.header), c.value)
		}
	}
	if _, err := reg.Lookup("groq"); err != nil {
		t.Error("presets missing from a config-file registry")
	}

	bad := []struct{ doc, field string }{
		{`{"providers":[{"name":"x","format":"soap","base_url":"http://h"}]}`, "providers[0].format"},
		{`{"providers":[{"name":"x","format":"openai"}]}`, "providers[0].base_url"},
		{`{"providers":[{"name":"x","base_url":"http://h"}]}`, "providers[0].format"},
		{`{"providers":[{"name":"a/b","format":"openai","base_url":"http://h"}]}`, "providers[0].name"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"ftp://h"}]}`, "providers[0].base_url"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h"},{"name":"x","format":"openai","base_url":"http://h"}]}`, "providers[1].name"},
		{`{"providers":[{"name":"openai","format":"gemini"}]}`, "providers[0].format"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h","api_key":"a","api_key_env":"B"}]}`, "providers[0].api_key"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h","typo":1}]}`, "(file)"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h","responses_api":"sometimes"}]}`, "providers[0].responses_api"},
	}
	for _, b := range bad {
		_, err := providers.ParseConfig([]byte(b.doc))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != b.field || !errors.Is(err, providers.ErrInvalidConfig) {
			t.Errorf("ParseConfig(%s) = %v, want ConfigError on %s", b.doc, err, b.field)
		}
	}
	if _, err := providers.LoadConfig(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadConfig(missing) = %v", err)
	}
}

func TestParseErrorKindRoundTrips(t *testing.T) {
	for k := providers.KindUnknown; k.String() != fmt.Sprintf("kind(%d)", int(k)); k++ {
		if got, ok := providers.ParseErrorKind(k.String()); !ok || got != k {
			t.Errorf("ParseErrorKind(%q) = %v, %v", k.String(), got, ok)
		}
	}
	if _, ok := providers.ParseErrorKind("nonsense"); ok {
		t.Error("a nonsense name parsed")
	}
}

// A syntax error in the providers file says where.
func TestConfigSyntaxErrorSaysWhere(t *testing.T) {
	_, err := providers.ParseConfig([]byte("{\n  \"providers\": [\n    {\"name\": \"a\",, \"format\": \"openai\"}\n  ]\n}"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v, want it to name line 3", err)
	}
}
