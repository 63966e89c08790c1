package completions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestEncryptedReasoningOfAnotherProvider: encrypted reasoning an OpenAI-format provider
// other than "openai" returned (Azure's, through the Responses API) is shown marked with
// its name — in thinking_blocks and in /v1/responses' encrypted_content — and, sent back,
// reaches that provider again as its own.
func TestEncryptedReasoningOfAnotherProvider(t *testing.T) {
	const enc = "gAAAAABo-azure-org=="
	f := newFakeResponsesAPI(t)
	call := providers.ToolCall{ID: "call_z1", Name: "get_weather", Arguments: `{"location":"Oslo"}`}
	f.on("o3", fakeTurn{summary: []string{"Look it up."}, encrypted: enc, call: &call}, fakeTurn{text: "Snowing."})
	reg := fakeRegistry{"azure": providers.NewOpenAI(providers.Config{Name: "azure", BaseURL: f.srv.URL + "/v1", APIKey: "sk-test",
		ResponsesAPI: providers.ResponsesAlways})}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, DefaultMaxRetries: -1, Sleep: (&sleepRecorder{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	first, err := chatVia(g, "o", `{"model":"azure/o3","thinking":{"type":"enabled","budget_tokens":2048},
		"messages":[{"role":"user","content":"Weather in Oslo?"}],`+weatherTool+`}`)
	if err != nil {
		t.Fatal(err)
	}
	m := first.Choices[0].Message
	if len(m.ThinkingBlocks) != 1 || m.ThinkingBlocks[0].Signature != "openai-encrypted@azure:"+enc {
		t.Fatalf("thinking blocks %+v", m.ThinkingBlocks)
	}
	asst, _ := json.Marshal(m)
	if _, err := chatVia(g, "someone-else", `{"model":"azure/o3","messages":[{"role":"user","content":"Weather in Oslo?"},`+string(asst)+`,
		{"role":"tool","tool_call_id":"call_z1","content":"snow"}],`+weatherTool+`}`); err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(f.last()["input"]); !strings.Contains(string(raw), `"encrypted_content":"`+enc+`"`) {
		t.Errorf("azure was not given its own reasoning back: %s", raw)
	}

	f.on("o3", fakeTurn{summary: []string{"Look it up."}, encrypted: enc, call: &call})
	out := responsesVia(t, g, "", `{"model":"azure/o3","reasoning":{"effort":"low","summary":"auto"},"input":"Weather in Oslo?",`+responsesTool+`}`)
	rs := out["output"].([]any)[0].(map[string]any)
	if rs["encrypted_content"] != "openai-encrypted@azure:"+enc {
		t.Errorf("reasoning item %v", rs)
	}
	req := responsesToRequest(t, `{"model":"azure/o3","input":[{"type":"reasoning","summary":[],"encrypted_content":"openai-encrypted@azure:`+enc+`"},`+
		`{"type":"function_call","call_id":"call_z1","name":"get_weather","arguments":"{}"}]}`)
	if got := req.Messages[0].Reasoning; len(got) != 1 || got[0].Encrypted != enc || got[0].EncryptedBy != "azure" {
		t.Errorf("read back as %+v", got)
	}
}
