package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
	"github.com/openai/openai-go/shared"
)

// fakeOpenAIResponsesAPI is a scripted OpenAI Responses API for tests: o3 that, asked
// without a tool result, reasons (a summary and its encrypted reasoning) and calls
// get_weather; given the result, it answers — and, as OpenAI's API does, refuses a body
// with store on while the encrypted reasoning is included, or a call's output whose call is
// not in the input, and here also a loop that lost the reasoning item before its call.
type fakeOpenAIResponsesAPI struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

const openAIEncrypted = "gAAAAABo-encrypted-reasoning-of-o3=="

func newFakeOpenAIResponsesAPI(t *testing.T) *fakeOpenAIResponsesAPI {
	u := &fakeOpenAIResponsesAPI{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		u.mu.Lock()
		u.bodies = append(u.bodies, req)
		u.mu.Unlock()
		refuse := func(msg string) {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, msg)
		}
		if r.URL.Path != "/v1/responses" {
			refuse("only the Responses API is scripted, got " + r.URL.Path)
			return
		}
		if req["store"] != false || !slices.Contains(req["include"].([]any), any("reasoning.encrypted_content")) {
			refuse("Encrypted content is only supported with store=false")
			return
		}
		input := req["input"].([]any)
		var types []string
		for _, it := range input {
			types = append(types, fmt.Sprint(it.(map[string]any)["type"]))
		}
		answered := types[len(types)-1] == "function_call_output"
		if answered && !slices.Equal(types[len(types)-3:], []string{"reasoning", "function_call", "function_call_output"}) {
			refuse(fmt.Sprintf("reasoning item missing before the function_call: %v", types))
			return
		}
		if answered && input[len(input)-3].(map[string]any)["encrypted_content"] != openAIEncrypted {
			refuse("The encrypted content could not be decrypted")
			return
		}
		usage := `{"input_tokens":40,"input_tokens_details":{"cached_tokens":0},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":70}`
		output := `[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Sunny in Paris.","annotations":[]}]}]`
		if !answered {
			output = `[{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"The user wants the weather."}],"encrypted_content":"` + openAIEncrypted + `"},` +
				`{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}]`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","status":"completed","model":"o3-2025-04-16","output":%s,"usage":%s}`, output, usage)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// TestOpenAIReasoningThroughTheResponsesAPIWithTheGoSDK: o3 through the gateway's
// /v1/responses with the official openai-go, as Codex CLI and the Agents SDK call it
// (store off, encrypted reasoning included, a summary asked): the gateway calls OpenAI's
// Responses API, the SDK reads the reasoning item with OpenAI's encrypted content, and the
// output sent back as input (ToParam) with the tool's result keeps o3's reasoning in the loop.
func TestOpenAIReasoningThroughTheResponsesAPIWithTheGoSDK(t *testing.T) {
	up := newFakeOpenAIResponsesAPI(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL + "/v1"}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	ctx := context.Background()
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser)}
	params := responses.ResponseNewParams{
		Model: "openai/o3", Store: openai.Bool(false),
		Include:   []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryAuto},
		Tools:     []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false)},
		Input:     responses.ResponseNewParamsInputUnion{OfInputItemList: input},
	}
	first, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Output) != 2 {
		t.Fatalf("output %+v", first.Output)
	}
	rs, fc := first.Output[0].AsReasoning(), first.Output[1].AsFunctionCall()
	if first.Output[0].Type != "reasoning" || rs.EncryptedContent != openAIEncrypted || len(rs.Summary) != 1 || rs.Summary[0].Text != "The user wants the weather." ||
		fc.Name != "get_weather" || fc.CallID != "call_1" {
		t.Fatalf("reasoning %+v, call %+v", rs, fc)
	}
	if first.Usage.OutputTokensDetails.ReasoningTokens != 20 {
		t.Errorf("usage %+v", first.Usage)
	}
	sent := up.bodies[0]
	if r, _ := sent["reasoning"].(map[string]any); r["effort"] != "low" || r["summary"] != "auto" {
		t.Errorf("reasoning sent %v", sent["reasoning"])
	}

	rsp, fcp := rs.ToParam(), fc.ToParam()
	params.Input.OfInputItemList = append(input, responses.ResponseInputItemUnionParam{OfReasoning: &rsp},
		responses.ResponseInputItemUnionParam{OfFunctionCall: &fcp}, responses.ResponseInputItemParamOfFunctionCallOutput("call_1", "sunny"))
	second, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if second.OutputText() != "Sunny in Paris." {
		t.Errorf("answer %+v", second.Output)
	}
}
