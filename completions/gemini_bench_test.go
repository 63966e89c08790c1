package completions

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// geminiAgentBody is agentBodies' agent request as a generateContent body: the same 6 kB
// system instruction, 15 function declarations and 20 turns of function calls and
// responses.
func geminiAgentBody() []byte {
	system := strings.Repeat("You are a careful coding agent. Follow the rules. ", 120)
	var decls []string
	for i := range 15 {
		decls = append(decls, fmt.Sprintf(`{"name":"tool_%d","description":"Tool number %d","parameters":{"type":"OBJECT","properties":{"file_path":{"type":"STRING","description":"file %d"},"limit":{"type":"INTEGER"}},"required":["file_path"]}}`, i, i, i))
	}
	contents := []string{`{"role":"user","parts":[{"text":"Fix the failing test in pkg/foo."}]}`}
	for i := range 10 {
		out, _ := json.Marshal(strings.Repeat("line of tool output\n", 40))
		contents = append(contents,
			fmt.Sprintf(`{"role":"model","parts":[{"text":"Reading file %d."},{"functionCall":{"id":"toolu_%d","name":"tool_%d","args":{"file_path":"pkg/foo/f%d.go"}}}]}`, i, i, i, i),
			fmt.Sprintf(`{"role":"user","parts":[{"functionResponse":{"id":"toolu_%d","name":"tool_%d","response":{"output":%s}}}]}`, i, i, out))
	}
	return fmt.Appendf(nil, `{"systemInstruction":{"parts":[{"text":%q}]},"tools":[{"functionDeclarations":[%s]}],"contents":[%s],"generationConfig":{"maxOutputTokens":4096}}`,
		system, strings.Join(decls, ","), strings.Join(contents, ","))
}

// BenchmarkGeminiGenerateContentTranslation is the Gemini surface's own work per request
// beside the gateway's: reading proto field names (NormalizeGeminiJSON), decoding the body, translating it to a gateway request and
// encoding the answer as a GenerateContentResponse (compare BenchmarkOpenAIChatTranslation,
// the same request on /v1/chat/completions).
func BenchmarkGeminiGenerateContentTranslation(b *testing.B) {
	body := geminiAgentBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		norm, err := NormalizeGeminiJSON(body, GeminiGenerateTopLevel) // as the server reads it
		if err != nil {
			b.Fatal(err)
		}
		var r GeminiGenerateRequest
		if err := json.Unmarshal(norm, &r); err != nil {
			b.Fatal(err)
		}
		r.Model = "a/m"
		c, err := r.ToChatRequest()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.ToRequest(); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(NewGeminiResponse(agentAnswer, r.Model, false)); err != nil {
			b.Fatal(err)
		}
	}
}
