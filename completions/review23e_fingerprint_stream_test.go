package completions

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// fingerprintUpstreamStream is an OpenAI chat.completion.chunk stream whose every event
// has the members top before its choices: the role, text in pieces (the same layout, as the
// decoder's and the encoder's templates take them), a tool call with its arguments in
// pieces, the finish and the usage.
func fingerprintUpstreamStream(top string) string {
	var b strings.Builder
	ev := func(rest string) {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-x\",%s%s}\n\n", top, rest)
	}
	ev(`"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]`)
	for _, w := range []string{"Hel", "lo ", "the", "re."} {
		ev(`"choices":[{"index":0,"delta":{"content":"` + w + `"},"finish_reason":null}]`)
	}
	ev(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]`)
	for _, a := range []string{`{\"a`, `\":`, `1}`} {
		ev(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + a + `"}}]},"finish_reason":null}]`)
	}
	ev(`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`)
	ev(`"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}`)
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// A streamed chat completion's chunks carry the service_tier and system_fingerprint an
// OpenAI-format upstream's chunks carry — every chunk: the role, text and tool-call chunks
// (through the relay's templates), the finish and the usage chunk — read by the real OpenAI
// adapter; none when the upstream's chunks have none, have null, or the upstream is not
// OpenAI-format. The final response keeps them as a whole answer does.
func TestReview23eStreamedChunksKeepFingerprint(t *testing.T) {
	h := cannedOpenAIHarness(t, "text/event-stream", map[string]string{
		"fp":     fingerprintUpstreamStream(`"service_tier":"default","system_fingerprint":"fp_x",`),
		"absent": fingerprintUpstreamStream(``),
		"null":   fingerprintUpstreamStream(`"service_tier":null,"system_fingerprint":null,`),
	})
	for model, want := range map[string][2]any{
		"fp/gpt-x":     {"default", "fp_x"},
		"absent/gpt-x": {nil, nil},
		"null/gpt-x":   {nil, nil},
		"a/m":          {nil, nil}, // not an OpenAI-format upstream
	} {
		st, err := h.g.Stream(context.Background(), Scope{}, userReq("hi", model))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		rec := httptest.NewRecorder()
		if err := WriteOpenAIStream(rec, st, true); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		chunks := 0
		sc := bufio.NewScanner(strings.NewReader(rec.Body.String()))
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(data), &got); err != nil {
				t.Fatalf("%s: %v: %s", model, err, data)
			}
			if got["object"] != "chat.completion.chunk" {
				t.Fatalf("%s: not a chunk: %s", model, data)
			}
			chunks++
			if got["service_tier"] != want[0] || got["system_fingerprint"] != want[1] {
				t.Errorf("%s: chunk %s has service_tier %v system_fingerprint %v, want %v", model, data, got["service_tier"], got["system_fingerprint"], want)
			}
		}
		if model != "a/m" && chunks != 10 { // role+text 4, call 1 + arguments 3, finish, usage
			t.Errorf("%s: %d chunks:\n%s", model, chunks, rec.Body.String())
		}
		if r := st.Response(); r == nil || r.ServiceTier != strOrEmpty(want[0]) || r.SystemFingerprint != strOrEmpty(want[1]) {
			t.Errorf("%s: final response %+v, want service_tier and system_fingerprint %v", model, r, want)
		}
	}
}

func strOrEmpty(v any) string {
	s, _ := v.(string)
	return s
}
