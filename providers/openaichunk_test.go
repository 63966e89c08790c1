package providers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// referenceChunk is the struct a chat.completion.chunk event decodes into with
// decodeUpstream: openAIChunkDecoder must make the same Chunk of every event.
type referenceChunk struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			Audio *AudioDelta `json:"audio"`
		} `json:"delta"`
		FinishReason *string         `json:"finish_reason"`
		Logprobs     json.RawMessage `json:"logprobs"`
	} `json:"choices"`
	Usage             *openAIUsage    `json:"usage"`
	Error             json.RawMessage `json:"error"`
	SystemFingerprint json.RawMessage `json:"system_fingerprint"`
	ServiceTier       json.RawMessage `json:"service_tier"`
}

func referenceDecode(data []byte) (out Chunk, errorBody bool, err error) {
	var ck referenceChunk
	if err := decodeUpstream(data, &ck); err != nil {
		return Chunk{}, false, err
	}
	for _, ch := range ck.Choices {
		if ch.Delta.Content != nil {
			out.Text += *ch.Delta.Content
		}
		if ch.Delta.Refusal != nil {
			out.Refusal += *ch.Delta.Refusal
		}
		for _, c := range ch.Delta.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, ToolCallDelta{Index: c.Index, ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		if a := ch.Delta.Audio; a != nil && *a != (AudioDelta{}) {
			out.Audio = a
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			out.FinishReason = *ch.FinishReason
		}
		lp, err := decodeOpenAILogprobs(ch.Logprobs)
		if err != nil {
			return Chunk{}, false, err
		}
		if lp != nil && out.Logprobs == nil {
			out.Logprobs = lp
		} else if lp != nil {
			out.Logprobs.Append(lp)
		}
	}
	if ck.Usage != nil {
		u := ck.Usage.usage()
		out.Usage = &u
	}
	out.SystemFingerprint, out.ServiceTier = upstreamString(ck.SystemFingerprint), upstreamString(ck.ServiceTier)
	return out, len(ck.Error) > 0 && string(ck.Error) != "null", nil
}

// chunkCorpus is every data line of the OpenAI streams in testdata, and events written to
// try the decoder's corners.
func chunkCorpus(t testing.TB) [][]byte {
	var out [][]byte
	for _, c := range []string{
		`{"choices":[{"index":0,"delta":{"content":"tok7 "},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"k07\":\"v07\","}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}},{"index":1,"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b","refusal":"no"},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":3}}}`,
		`{"error":{"message":"overloaded","type":"server_error"}}`,
		`{"error":null,"choices":[{"delta":{"content":"x"}}]}`,
		`{"Choices":[{"Delta":{"CONTENT":"case"},"Finish-Reason":"length"}]}`,
		`{"choices":[{"delta":{"content":"esc \" \\ \n \u00e9 \ud83d\ude00 \u2028"}}]}`,
		"{\"choices\":[{\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
		`{"choices":[{"delta":{"content":"é 中文 🙂"}}]}`,
		`{"choices":null}`, `{"choices":[null,{"delta":null},{"delta":{"tool_calls":null}}]}`,
		`{"choices":[{"delta":{"tool_calls":[null,{"index":null,"id":null,"function":null}]}}]}`,
		`{"choices":[{"delta":{"content":1}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":1e2}]}}]}`,
		`{"choices":{}}`, `[]`, `"x"`, `{"choices":[{"delta":{"content":"x"}}]} trailing`, `{"choices":[`, `{}`, `{"unknown":{"deep":[1,2,{"a":null}]},"choices":[]}`,
		`{"choices":[{"delta":{"content":"a"},"delta":{"refusal":"b"}}]}`, `{"choices":[{"finish_reason":"stop","finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`,
		`{"ch\u006fices":[{"delta":{"c\u006fntent":"escaped names"}}]}`,
		`{"id":"c","service_tier":"default","system_fingerprint":"fp_x","choices":[{"index":0,"delta":{"content":"fp"},"finish_reason":null}]}`,
		`{"service_tier":null,"system_fingerprint":null,"choices":[{"delta":{"content":"null fp"}}]}`,
		`{"service_tier":{"tier":"x"},"system_fingerprint":7,"choices":[{"delta":{"content":"odd fp"}}]}`,
		`{"system_fingerprint":"fp_\u0078","System-Fingerprint":"fp_y","SERVICE_TIER":"flex","service_tier":null,"choices":[]}`,
		`{"system_fingerprint":"fp_a","system_fingerprint":"fp_\u00e9","service_tier":"bad \ud800","choices":[]}`,
		"{\"system_fingerprint\":\"fp \xff\",\"choices\":[]}",
		`{"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":[{"token":"Hi","logprob":-0.1,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.1,"bytes":[72,105]},{"token":"Hello","logprob":-2.5,"bytes":null}]}],"refusal":null},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-1,"bytes":null,"top_logprobs":null}]}},{"delta":{"refusal":"b"},"logprobs":{"refusal":[{"token":"b","logprob":-2}]}}]}`,
		`{"choices":[{"delta":{"content":"x"},"logprobs":{}}]}`, `{"choices":[{"delta":{"content":"x"},"logprobs":{"content":null}}]}`,
		`{"choices":[{"delta":{"content":"x"},"logprobs":1}]}`, `{"choices":[{"delta":{"content":"x"},"logprobs":{"content":[{"token":1}]}}]}`,
		`{"choices":[{"delta":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":-1}]},"logprobs":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":null,"audio":{"id":"audio_1","transcript":"Hi"}},"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"audio":{"data":"AAABAA=="}},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"audio":{"id":"audio_1","expires_at":1767225600}},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"audio":{"id":"a"},"audio":{"transcript":"merged"}}}]}`, `{"choices":[{"delta":{"audio":{"id":"a"},"audio":null}}]}`,
		`{"choices":[{"delta":{"audio":{}}}]}`, `{"choices":[{"delta":{"audio":null,"content":"x"}}]}`, `{"choices":[{"delta":{"audio":"x"}}]}`,
		`{"choices":[{"delta":{"Audio":{"Transcript":"case","EXPIRES_AT":5}}}]}`, `{"choices":[{"delta":{"audio":{"expires_at":"soon"}}}]}`,
		`{"choices":[{"delta":{"audio":{"id":"a"}}},{"delta":{"audio":{"id":"b"}}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":80,"total_tokens":92,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":4},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":64}}}`, `{"choices":[{"delta":{"toolcalls":[{"index":2}],"content":"\u212a"}}]}`,
	} {
		out = append(out, []byte(c))
	}
	files, _ := filepath.Glob("testdata/openai/*")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimSpace(line)
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "[DONE]" {
				out = append(out, []byte(strings.TrimSpace(d)))
			}
		}
	}
	return out
}

// sameDecoding checks that the decoder and the struct decoding agree on data: both fail,
// or both make the same Chunk.
func sameDecoding(t *testing.T, d *openAIChunkDecoder, data []byte) {
	t.Helper()
	got, gotErrBody, gotErr := d.decode(data)
	want, wantErrBody, wantErr := referenceDecode(data)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, struct decoding's %v", data, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if len(got.ToolCalls) == 0 {
		got.ToolCalls = nil
	}
	if !reflect.DeepEqual(got, want) || gotErrBody != wantErrBody {
		t.Fatalf("%q:\n got %+v (error body %v)\nwant %+v (error body %v)", data, got, gotErrBody, want, wantErrBody)
	}
}

func TestOpenAIChunkDecoderMatchesStructDecoding(t *testing.T) {
	var d openAIChunkDecoder
	corpus := chunkCorpus(t)
	if len(corpus) < 60 {
		t.Fatalf("corpus has %d events", len(corpus))
	}
	for _, data := range corpus {
		sameDecoding(t, &d, data)
	}
}

func FuzzOpenAIChunkDecoder(f *testing.F) {
	for _, data := range chunkCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d openAIChunkDecoder
		got, _, gotErr := d.decode(data)
		// Repeated names may merge differently in a struct decoding; compare the rest.
		if !jsontext.Value(bytes.Clone(data)).IsValid() {
			_ = got
			_ = gotErr
			return
		}
		sameDecoding(t, &d, data)
	})
}

// TestOpenAIChunkTemplateMatchesStructDecoding decodes every event of the corpus after
// every other (the first one possibly becoming the template), and events made from plain
// ones by changing their payload to strings the template path must read right or refuse.
func TestOpenAIChunkTemplateMatchesStructDecoding(t *testing.T) {
	corpus := chunkCorpus(t)
	for _, prime := range corpus {
		for _, data := range corpus {
			var d openAIChunkDecoder
			d.decode(prime)
			sameDecoding(t, &d, data)
		}
	}
	payloads := []string{``, `x`, `tok9 `, `\"k\":`, `\\`, `\u00e9\ud83d\ude00`, `\ud800`, `\x`, "\xff", "a\nb", `é 中文`, `"`, `\`, `a"b`}
	plain := []string{
		`{"id":"c","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}],"obfuscation":"%s"}`,
		`{"id":"c","obfuscation":"%s","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"%s"}}]},"finish_reason":null}]}`,
		`{"id":"c","service_tier":"default","system_fingerprint":"fp_x","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}],"obfuscation":"%s"}`,
	}
	for _, layout := range plain {
		var d openAIChunkDecoder
		sameDecoding(t, &d, []byte(strings.Replace(strings.Replace(layout, "%s", "first", 1), "%s", "pad", 1)))
		before := d.templated
		for _, p := range payloads {
			for _, pad := range []string{"", "Zq", `\"`} {
				data := strings.Replace(strings.Replace(layout, "%s", p, 1), "%s", pad, 1)
				if strings.Index(layout, "obfuscation") < strings.Index(layout, "content") || !strings.Contains(layout, "content") {
					data = strings.Replace(strings.Replace(layout, "%s", pad, 1), "%s", p, 1)
				}
				sameDecoding(t, &d, []byte(data))
			}
		}
		if d.templated-before < 15 {
			t.Errorf("%s: %d of %d events read through the template", layout, d.templated-before, 3*len(payloads))
		}
	}
}

// TestOpenAIChunkTemplateServesRecordedStreams checks that the events of recorded OpenAI
// streams (text with obfuscation padding, tool-call arguments) take the template path.
func TestOpenAIChunkTemplateServesRecordedStreams(t *testing.T) {
	files, _ := filepath.Glob("testdata/openai/*stream*")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d openAIChunkDecoder
		n := 0
		for _, line := range strings.Split(string(raw), "\n") {
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok && strings.TrimSpace(data) != "[DONE]" {
				sameDecoding(t, &d, []byte(strings.TrimSpace(data)))
				n++
			}
		}
		if n >= 6 && d.templated*2 < n {
			t.Errorf("%s: %d of %d events read through the template", f, d.templated, n)
		}
		t.Logf("%s: %d of %d events through the template", f, d.templated, n)
	}
}

func FuzzOpenAIChunkTemplate(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"content":"a"}}],"obfuscation":"x"}`), []byte(`{"choices":[{"delta":{"content":"b\"c"}}],"obfuscation":"yy"}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a"}}]}}]}`), []byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\u0041"}}]}}]}`))
	f.Fuzz(func(t *testing.T, prime, data []byte) {
		if !jsontext.Value(bytes.Clone(data)).IsValid() {
			return // repeated names may merge differently in a struct decoding
		}
		var d openAIChunkDecoder
		d.decode(prime)
		sameDecoding(t, &d, data)
	})
}

// FuzzOpenAIChunkTemplatePayload keeps the layout of plain events and fuzzes the bytes of
// their changing strings, so most inputs reach the template path.
func FuzzOpenAIChunkTemplatePayload(f *testing.F) {
	f.Add([]byte(`tok `), []byte(`Zq`))
	f.Add([]byte(`\"k\":\u00e9`), []byte(``))
	f.Fuzz(func(t *testing.T, payload, pad []byte) {
		layouts := [][3]string{
			{`{"id":"c","choices":[{"index":0,"delta":{"content":"`, `"},"finish_reason":null}],"obfuscation":"`, `"}`},
			{`{"id":"c","obfuscation":"`, `","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"`, `"}}]},"finish_reason":null}]}`},
		}
		for i, l := range layouts {
			first, second := payload, pad
			if i == 1 {
				first, second = pad, payload
			}
			data := []byte(l[0] + string(first) + l[1] + string(second) + l[2])
			if !jsontext.Value(bytes.Clone(data)).IsValid() {
				continue // repeated names may merge differently in a struct decoding
			}
			var d openAIChunkDecoder
			sameDecoding(t, &d, []byte(l[0]+"a"+l[1]+"b"+l[2]))
			sameDecoding(t, &d, data)
		}
	})
}
