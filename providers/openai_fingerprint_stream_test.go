package providers_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// fingerprintStream is an OpenAI chat.completion.chunk stream whose every event has the
// members top (`"service_tier":"default","system_fingerprint":"fp_x",` or nothing): a
// role event, texts (two layouts in turn when alternate, so none is read through the
// template), reasoning, a finish and a usage event.
func fingerprintStream(top string, texts int, alternate bool) []byte {
	ev := func(rest string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",` + top + rest + "}\n\n"
	}
	var b strings.Builder
	b.WriteString(ev(`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`))
	b.WriteString(ev(`"choices":[{"index":0,"delta":{"reasoning_content":"hmm "},"finish_reason":null}]`))
	for i := range texts {
		delta := `{"content":"tok "}`
		if alternate && i%2 == 1 {
			delta = `{"content":"tok ","refusal":null}`
		}
		b.WriteString(ev(`"choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]`))
	}
	b.WriteString(ev(`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]`))
	b.WriteString(ev(`"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}`))
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// readFingerprintStream reads p's whole stream and returns its chunks.
func readFingerprintStream(t *testing.T, p providers.Provider) []providers.Chunk {
	t.Helper()
	s, err := p.Stream(context.Background(), &providers.Request{Model: "m", Messages: []providers.Message{{Role: "user", Content: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []providers.Chunk
	for {
		c, err := s.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// The OpenAI adapter's stream keeps each chunk's system_fingerprint and service_tier when
// they are strings — on text read through the template, text read by the full walk, the
// reasoning chunk, the finish and the usage chunk — and has none when the upstream sent
// none, null, or another shape.
func TestOpenAIStreamKeepsFingerprint(t *testing.T) {
	for _, tc := range []struct {
		name, top, fp, tier string
	}{
		{"strings", `"service_tier":"default","system_fingerprint":"fp_x",`, "fp_x", "default"},
		{"escaped", `"service_tier":"def\u0061ult","system_fingerprint":"fp_\u0078",`, "fp_x", "default"},
		{"absent", ``, "", ""},
		{"null", `"service_tier":null,"system_fingerprint":null,`, "", ""},
		{"other shapes", `"service_tier":{"t":1},"system_fingerprint":7,`, "", ""},
	} {
		for _, alternate := range []bool{false, true} {
			p := providers.NewOpenAI(providers.Config{Name: "openai", APIKey: testKey,
				HTTPClient: &http.Client{Transport: replayTransport{fingerprintStream(tc.top, 6, alternate)}}})
			chunks := readFingerprintStream(t, p)
			if len(chunks) != 9 { // reasoning, 6 texts, finish, usage
				t.Fatalf("%s: %d chunks: %+v", tc.name, len(chunks), chunks)
			}
			for i, c := range chunks {
				if c.SystemFingerprint != tc.fp || c.ServiceTier != tc.tier {
					t.Errorf("%s (alternate %v): chunk %d %+v has system_fingerprint %q service_tier %q, want %q %q",
						tc.name, alternate, i, c, c.SystemFingerprint, c.ServiceTier, tc.fp, tc.tier)
				}
			}
		}
	}
}

// Carrying the fingerprint costs a stream no allocation per event: the string repeated
// by every event is kept once, through the template and through the full walk.
func TestOpenAIStreamFingerprintCostsNoAllocations(t *testing.T) {
	allocs := func(top string, alternate bool) float64 {
		p := providers.NewOpenAI(providers.Config{Name: "openai", APIKey: testKey,
			HTTPClient: &http.Client{Transport: replayTransport{fingerprintStream(top, 200, alternate)}}})
		return testing.AllocsPerRun(10, func() { readFingerprintStream(t, p) })
	}
	for _, alternate := range []bool{false, true} {
		plain := allocs("", alternate)
		with := allocs(`"service_tier":"default","system_fingerprint":"fp_x",`, alternate)
		if with > plain+10 { // one more per event would be 200 more
			t.Errorf("alternate %v: %.0f allocations for 200 text events with a fingerprint, %.0f without", alternate, with, plain)
		}
		t.Logf("alternate %v: %.0f allocations with a fingerprint, %.0f without", alternate, with, plain)
	}
}
