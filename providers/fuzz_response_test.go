package providers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	yaml "go.yaml.in/yaml/v4"
)

// fuzzAdapters are the adapters FuzzProviderResponse answers with fuzzed bodies, chosen
// by the input's first byte: each reads its upstream's whole answers and streams.
var fuzzAdapters = []struct {
	name   string
	format providers.Format
	dir    string // testdata directory whose recordings seed it
}{
	{"openai", providers.FormatOpenAI, "openai"},
	{"openai-responses", providers.FormatOpenAI, "openai"},
	{"anthropic", providers.FormatAnthropic, "anthropic"},
	{"gemini", providers.FormatGemini, "gemini"},
	{"azure", providers.FormatAzure, "azure"},
	{"vertex", providers.FormatVertex, "gemini"},
	{"bedrock", providers.FormatBedrock, "bedrock"},
	{"cohere-rerank", providers.FormatOpenAI, "rerank"},
	{"jina-rerank", providers.FormatOpenAI, "rerank"},
	{"voyage-rerank", providers.FormatOpenAI, "rerank"},
}

var fuzzStatuses = []int{200, 200, 200, 400, 401, 404, 413, 429, 500, 503, 529}

// fuzzBodyTransport answers every request with one canned response, without a network.
type fuzzBodyTransport struct {
	status      int
	contentType string
	body        []byte
}

func (t fuzzBodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	h := http.Header{"Content-Type": {t.contentType}}
	return &http.Response{StatusCode: t.status, Header: h, Body: io.NopCloser(bytes.NewReader(t.body)),
		ContentLength: int64(len(t.body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// fuzzRecordedBodies reads the response bodies of the recordings under testdata/dir:
// raw .sse/.txt/.json bodies and the responses of cassettes.
func fuzzRecordedBodies(tb testing.TB, dir string) [][]byte {
	var out [][]byte
	filepath.WalkDir(filepath.Join("testdata", dir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		switch filepath.Ext(path) {
		case ".sse", ".txt", ".json":
			if !strings.Contains(filepath.Base(path), "request") {
				out = append(out, raw)
			}
		case ".yaml":
			var cas cassette
			if yaml.Unmarshal(raw, &cas) != nil {
				return nil
			}
			for _, in := range cas.Interactions {
				switch b := in.Response.Body.(type) {
				case string:
					out = append(out, []byte(b))
				case map[string]any:
					if s, ok := b["string"].(string); ok {
						out = append(out, []byte(s))
					}
				}
				if in.Response.ParsedBody != nil {
					if j, err := json.Marshal(in.Response.ParsedBody); err == nil {
						out = append(out, j)
					}
				}
			}
		}
		return nil
	})
	return out
}

// FuzzProviderResponse answers each adapter's calls (whole answers, streams, rerank) with
// arbitrary bodies and statuses. Every failure must be a *providers.Error that does not
// carry the API key, a stream must end (io.EOF or an error) within a bound of Recv calls
// proportional to its body, and an ended stream keeps returning io.EOF.
func FuzzProviderResponse(f *testing.F) {
	for i, a := range fuzzAdapters {
		for _, body := range fuzzRecordedBodies(f, a.dir) {
			stream := bytes.HasPrefix(body, []byte("data:")) || bytes.HasPrefix(body, []byte("event:")) ||
				(len(body) > 0 && body[0] == 0) // a Bedrock event stream
			mode := byte(i) << 4
			if stream {
				mode |= 1
			}
			f.Add(mode, body)
			f.Add(mode|3<<1, body) // the same body with an error status
		}
	}
	f.Fuzz(func(t *testing.T, mode byte, body []byte) {
		a := fuzzAdapters[int(mode>>4)%len(fuzzAdapters)]
		stream := mode&1 == 1
		status := fuzzStatuses[int(mode>>1&7)%len(fuzzStatuses)]
		ct := "application/json"
		switch {
		case a.format == providers.FormatBedrock && stream:
			ct = "application/vnd.amazon.eventstream"
		case stream:
			ct = "text/event-stream"
		}
		cfg := providers.Config{Name: a.name, BaseURL: "http://upstream.test", APIKey: testKey,
			HTTPClient: &http.Client{Transport: fuzzBodyTransport{status: status, contentType: ct, body: body}}}
		var p providers.Provider
		var err error
		switch a.name {
		case "openai-responses":
			cfg.ResponsesAPI = providers.ResponsesAlways
		case "cohere-rerank":
			cfg.Rerank = providers.RerankCohere
		case "jina-rerank":
			cfg.Rerank = providers.RerankJina
		case "voyage-rerank":
			cfg.Rerank = providers.RerankVoyage
		}
		switch a.format {
		case providers.FormatAzure:
			p = providers.NewAzure(providers.AzureConfig{Config: cfg, APIVersion: fixtureAzureVersion})
		case providers.FormatVertex:
			cfg.APIKey = ""
			p, err = providers.NewVertex(providers.VertexConfig{Config: cfg, Project: fixtureProject, Location: fixtureLocation, AccessToken: testKey})
		default:
			p, err = providers.New(a.format, cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		checkErr := func(what string, err error) {
			t.Helper()
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s: error %T is not a *providers.Error: %v", what, err, err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("%s: error carries the API key: %v", what, err)
			}
		}
		if strings.HasSuffix(a.name, "-rerank") {
			rr, ok := p.(providers.Reranker)
			if !ok {
				t.Fatalf("%s does not rerank", a.name)
			}
			docs := []string{"a", "b", "c"}
			resp, err := rr.Rerank(ctx, &providers.RerankRequest{Model: "rerank-x", Query: "q", Documents: docs})
			if err != nil {
				checkErr("rerank", err)
				return
			}
			for _, r := range resp.Results {
				if r.Index < 0 || r.Index >= len(docs) {
					t.Fatalf("rerank result index %d outside the %d documents", r.Index, len(docs))
				}
			}
			return
		}
		model := "gpt-4o"
		switch a.format {
		case providers.FormatAnthropic:
			model = "claude-sonnet-4-5"
		case providers.FormatGemini, providers.FormatVertex:
			model = "gemini-2.5-flash"
		case providers.FormatBedrock:
			model = "anthropic.claude-sonnet-4-20250514-v1:0"
		}
		req := &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "Hello"}}, MaxTokens: 100}
		if !stream {
			resp, err := p.Complete(ctx, req)
			if err != nil {
				checkErr("complete", err)
				return
			}
			if resp == nil {
				t.Fatal("Complete returned neither a response nor an error")
			}
			return
		}
		s, err := p.Stream(ctx, req)
		if err != nil {
			checkErr("stream", err)
			return
		}
		defer s.Close()
		limit := 4*len(body) + 64
		for i := 0; ; i++ {
			if i > limit {
				t.Fatalf("stream of a %d-byte body still sending after %d chunks", len(body), i)
			}
			_, err := s.Recv()
			if err == io.EOF {
				if _, again := s.Recv(); again != io.EOF {
					t.Fatalf("Recv after io.EOF returned %v", again)
				}
				return
			}
			if err != nil {
				checkErr("recv", err)
				return
			}
		}
	})
}
