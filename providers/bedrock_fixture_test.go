package providers_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// Bedrock's part of the fixture table: real Converse and ConverseStream exchanges recorded
// by pydantic-ai's test suite (testdata/bedrock/SOURCE.txt), replayed through TestFixtures.
// Each case rebuilds the Request from the recorded body and path, checks that the adapter
// sends the same request (path escaping, messages, tools, inference and additional fields)
// signed with SigV4, and checks the text, tool calls, usage and finish reason it makes of
// the recorded answer (a binary event stream for /converse-stream).
func bedrockFixtureCases() []fixtureCase {
	br := providers.FormatBedrock
	cas := func(name, file string, interaction int) fixtureCase {
		return fixtureCase{name: "bedrock/" + name, format: br, file: "bedrock/" + file, interaction: interaction}
	}
	with := func(c fixtureCase, f func(*fixtureCase)) fixtureCase { f(&c); return c }
	return []fixtureCase{
		with(cas("converse", "test_bedrock_model.yaml", 0), func(c *fixtureCase) {
			c.wantText = "Hello! How can I assist you today? Whether you have questions, need information, or just want to chat, I'm here to help."
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 7, CompletionTokens: 30}, "stop"
		}),
		with(cas("converse-stream", "test_bedrock_model_stream.yaml", 0), func(c *fixtureCase) {
			c.wantText = "The capital of France is Paris. Paris is not only the capital city but also the most populous city in France, and it is a major center for culture, commerce, fashion, and international diplomacy. Known for its historical landmarks, such as the Eiffel Tower, the Louvre Museum, and Notre-Dame Cathedral, Paris is often referred to as \"The City of Light\" or \"The City of Love.\""
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 13, CompletionTokens: 82}, "stop"
		}),
		// A streamed tool call (contentBlockStart with the id and name, the input in a
		// delta), then the tool's result sent back in the next request.
		with(cas("stream-tool-call", "test_bedrock_model_iter_stream.yaml", 0), func(c *fixtureCase) {
			c.wantText = "<thinking> To find the temperature of the capital of France, I need to first determine the capital of France and then get the current temperature in that city. The capital of France is Paris. I will use the \"get_temperature\" tool to find the current temperature in Paris.</thinking>\n"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 471, CompletionTokens: 91}, "tool_calls"
			c.wantCalls = []providers.ToolCall{{ID: "tooluse_lAG_zP8QRHmSYOwZzzaCqA", Name: "get_temperature", Arguments: `{"city":"Paris"}`}}
		}),
		with(cas("stream-tool-result", "test_bedrock_model_iter_stream.yaml", 1), func(c *fixtureCase) {
			c.wantText = "The current temperature in Paris, the capital of France, is 30°C."
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 577, CompletionTokens: 18}, "stop"
		}),
		with(cas("converse-tool-call", "test_bedrock_model_retry.yaml", 0), func(c *fixtureCase) {
			c.wantText = "<thinking> To determine the capital of France, I can use the provided tool that returns the capital of a given country. Since the country in question is France, I will use the tool with the country parameter set to \"France\". </thinking>\n"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 426, CompletionTokens: 66}, "tool_calls"
			c.wantCalls = []providers.ToolCall{{ID: "tooluse_Ze_bgl9CSqu8aJv7XD-_Dw", Name: "get_capital", Arguments: `{"country":"France"}`}}
		}),
		with(cas("converse-tool-result", "test_bedrock_model_retry.yaml", 1), func(c *fixtureCase) {
			c.wantText = "<thinking> It appears that there was an error in retrieving the capital of France as the tool indicated that the country is not supported. Since the tool is not able to provide the requested information, I will respond to the User with the information I have access to. </thinking> \n\nThe capital of France is Paris. If you need any further information, feel free to ask!"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 531, CompletionTokens: 76}, "stop"
		}),
		// tool_choice required is toolChoice any.
		with(cas("converse-tool-choice-any", "test_bedrock_model_structured_output.yaml", 0), func(c *fixtureCase) {
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 571, CompletionTokens: 22}, "tool_calls"
			c.wantCalls = []providers.ToolCall{{ID: "tooluse_Mj06ft-ITJik1Otgpkc1uA", Name: "temperature", Arguments: `{"city":"London","date":"2022-01-01"}`}}
		}),
		with(cas("converse-max-tokens", "test_bedrock_model_max_tokens.yaml", 0), func(c *fixtureCase) {
			c.wantText, c.wantUsage, c.wantFinish = "The capital of France is", providers.Usage{PromptTokens: 13, CompletionTokens: 5}, "length"
		}),
		// Claude with extended thinking: additionalModelRequestFields.thinking, and the
		// signed reasoning sent back first in the assistant turn of the next request.
		with(cas("converse-thinking", "test_bedrock_model_thinking_part_anthropic.yaml", 0), func(c *fixtureCase) {
			c.wantPrefix, c.wantSuffix = "Here are the basic steps for crossing the street safely:\n\n", "not all drivers follow traffic rules perfectly."
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 42, CompletionTokens: 313}, "stop"
		}),
		with(cas("converse-thinking-history", "test_bedrock_model_thinking_part_anthropic.yaml", 1), func(c *fixtureCase) {
			c.wantPrefix, c.wantSuffix = "Great analogy! Just like crossing a street,", "sometimes the best choice is to find an alternate route or wait for better conditions!"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 334, CompletionTokens: 432}, "stop"
		}),
		with(cas("stream-thinking", "test_bedrock_model_thinking_part_stream.yaml", 0), func(c *fixtureCase) {
			c.wantText, c.wantUsage, c.wantFinish = "Hello! It's nice to meet you. How can I help you today?", providers.Usage{PromptTokens: 36, CompletionTokens: 73}, "stop"
		}),
		with(cas("stream-redacted-thinking", "test_bedrock_model_thinking_part_redacted_stream.yaml", 0), func(c *fixtureCase) {
			c.wantPrefix, c.wantSuffix = "I notice you've sent what appears to be some kind of command", "What would you like to talk about today?"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 92, CompletionTokens: 253}, "stop"
		}),
		with(cas("tool-with-thinking", "test_bedrock_anthropic_tool_with_thinking.yaml", 0), func(c *fixtureCase) {
			c.wantText = "I'll need to check what country you're from to answer that question."
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 397, CompletionTokens: 130}, "tool_calls"
			c.wantCalls = []providers.ToolCall{{ID: "tooluse_W9DaUFg4Tj2cRPpndqxWSg", Name: "get_user_country", Arguments: `{}`}}
		}),
		// The tool loop goes on with thinking: the signed reasoning, text and toolUse of the
		// answer, then the toolResult.
		with(cas("tool-with-thinking-result", "test_bedrock_anthropic_tool_with_thinking.yaml", 1), func(c *fixtureCase) {
			c.wantPrefix, c.wantSuffix = "Based on your location in Mexico, the largest city is Mexico City (Ciudad de México).", "when it was known as Tenochtitlán."
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 539, CompletionTokens: 106}, "stop"
		}),
		// Cache writes and reads: inputTokens excludes them, so the prompt is 2 + 1322.
		// (The recorded request has a text document and a cache point between two texts,
		// which the adapter does not make: the table's request stands for it.)
		with(cas("cache-write", "test_bedrock_cache_write_and_read.yaml", 0), func(c *fixtureCase) {
			c.req, c.wantBody = bedrockCacheRequest()
			c.wantText, c.wantUsage, c.wantFinish = "21", providers.Usage{PromptTokens: 1324, CompletionTokens: 5, CacheCreationTokens: 1322}, "stop"
		}),
		with(cas("cache-read", "test_bedrock_cache_write_and_read.yaml", 1), func(c *fixtureCase) {
			c.req, c.wantBody = bedrockCacheRequest()
			c.wantText, c.wantUsage, c.wantFinish = "21", providers.Usage{PromptTokens: 1324, CompletionTokens: 5, CachedTokens: 1322}, "stop"
		}),
		// One tool call asked (parallel_tool_calls false, or the legacy functions API's
		// SingleToolCall) of Claude 4.5: Converse has no field for it, so, as LiteLLM does,
		// Anthropic's tool_choice with disable_parallel_tool_use goes in
		// additionalModelRequestFields, of the same type as toolConfig's toolChoice (auto
		// when toolConfig names none). (The recorded answer stands for any.)
		with(cas("one-tool-call", "test_bedrock_cache_write_and_read.yaml", 0), func(c *fixtureCase) {
			c.req, c.wantBody = bedrockOneToolCallRequest(nil, "", false)
			c.wantBody += `,"additionalModelRequestFields":{"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}}`
			c.wantText, c.wantUsage, c.wantFinish = "21", providers.Usage{PromptTokens: 1324, CompletionTokens: 5, CacheCreationTokens: 1322}, "stop"
		}),
		with(cas("one-tool-call-forced", "test_bedrock_cache_write_and_read.yaml", 0), func(c *fixtureCase) {
			c.req, c.wantBody = bedrockOneToolCallRequest(&providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "get_weather"},
				`{"tool":{"name":"get_weather"}}`, true)
			c.wantBody += `,"additionalModelRequestFields":{"tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true}}}`
			c.wantText, c.wantUsage, c.wantFinish = "21", providers.Usage{PromptTokens: 1324, CompletionTokens: 5, CacheCreationTokens: 1322}, "stop"
		}),
		// Claude before 4.5 gets nothing for it (LiteLLM's catalogue does not mark it as
		// taking the setting): the request is never refused for a hint.
		with(cas("one-tool-call-claude-3-7", "test_bedrock_anthropic_tool_with_thinking.yaml", 0), func(c *fixtureCase) {
			no := false
			c.req = &providers.Request{Model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0", ParallelToolCalls: &no,
				Messages: []providers.Message{{Role: "user", Content: "What is the largest city in the user country?"}},
				Tools:    []providers.Tool{{Name: "get_user_country", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}}
			c.wantBody = `{"messages":[{"role":"user","content":[{"text":"What is the largest city in the user country?"}]}],
				"toolConfig":{"tools":[{"toolSpec":{"name":"get_user_country","inputSchema":{"json":{"type":"object","properties":{}}}}}]}}`
			c.wantText = "I'll need to check what country you're from to answer that question."
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 397, CompletionTokens: 130}, "tool_calls"
			c.wantCalls = []providers.ToolCall{{ID: "tooluse_W9DaUFg4Tj2cRPpndqxWSg", Name: "get_user_country", Arguments: `{}`}}
		}),
		// An application inference profile's ARN: ':' and '/' escaped in the path, the
		// region taken from the ARN.
		with(cas("inference-profile-arn", "test_bedrock_inference_profile_converse.yaml", 0), func(c *fixtureCase) {
			c.wantText, c.wantUsage, c.wantFinish = "Hello", providers.Usage{PromptTokens: 8, CompletionTokens: 2}, "stop"
		}),
		// Adaptive thinking with an effort (Claude Sonnet 4.6), and its reasoning sent back.
		with(cas("converse-adaptive-thinking", "test_bedrock_model_thinking_part_anthropic_adaptive_effort.yaml", 0), func(c *fixtureCase) {
			c.wantPrefix, c.wantSuffix = "Here are the basic steps for safely crossing the street:\n\n1. **Find a safe place", "like crossing with children or crossing without a crosswalk?"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 14, CompletionTokens: 280}, "stop"
		}),
		with(cas("converse-adaptive-thinking-history", "test_bedrock_model_thinking_part_anthropic_adaptive_effort.yaml", 1), func(c *fixtureCase) {
			c.wantPrefix, c.wantSuffix = "Here's how to cross a river, using the same principles as crossing a street:", "Would you like more detail on any specific crossing method?"
			c.wantUsage, c.wantFinish = providers.Usage{PromptTokens: 316, CompletionTokens: 573}, "stop"
		}),
		// top_k: Claude's additional field, Nova's inferenceConfig.topK.
		with(cas("claude-top-k", "test_bedrock_top_k_anthropic_variant.yaml", 0), func(c *fixtureCase) {
			c.wantText, c.wantUsage, c.wantFinish = "ok", providers.Usage{PromptTokens: 14, CompletionTokens: 4}, "stop"
		}),
		with(cas("nova-top-k", "test_bedrock_top_k_nova_variant.yaml", 0), func(c *fixtureCase) {
			c.wantText, c.wantUsage, c.wantFinish = "ok", providers.Usage{PromptTokens: 7, CompletionTokens: 2}, "stop"
		}),
		with(cas("invalid-model", "test_bedrock_error.yaml", 0), func(c *fixtureCase) {
			c.wantKind, c.wantStatus = providers.KindModelNotFound, 400
		}),
		with(cas("stream-invalid-model", "test_bedrock_streaming_error.yaml", 0), func(c *fixtureCase) {
			c.wantKind, c.wantStatus = providers.KindModelNotFound, 400
		}),
	}
}

// bedrockCacheRequest is the request of the cache cases and the body it makes: a cache
// point after the system prompt and one at the end of the conversation.
func bedrockCacheRequest() (*providers.Request, string) {
	return &providers.Request{Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", PromptCache: true, Messages: []providers.Message{
			{Role: "system", Content: "YOU MUST RESPONSE ONLY WITH SINGLE NUMBER"}, {Role: "user", Content: "What is 10 + 11?"}}},
		`{"messages":[{"role":"user","content":[{"text":"What is 10 + 11?"},{"cachePoint":{"type":"default"}}]}],
		  "system":[{"text":"YOU MUST RESPONSE ONLY WITH SINGLE NUMBER"},{"cachePoint":{"type":"default"}}]}`
}

// bedrockOneToolCallRequest is the request of the one-tool-call cases (Claude Sonnet 4.5,
// the weather tool, choice) asking for one tool call by parallel_tool_calls false or, with
// single, by SingleToolCall; and its body (toolConfig.toolChoice wireChoice, none when "")
// but additionalModelRequestFields, left open for the case to close.
func bedrockOneToolCallRequest(choice *providers.ToolChoice, wireChoice string, single bool) (*providers.Request, string) {
	req := &providers.Request{Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Tools: []providers.Tool{weatherTool}, ToolChoice: choice,
		Messages: []providers.Message{{Role: "user", Content: "Weather in Paris?"}}, SingleToolCall: single}
	if !single {
		no := false
		req.ParallelToolCalls = &no
	}
	if wireChoice != "" {
		wireChoice = `,"toolChoice":` + wireChoice
	}
	return req, `{"messages":[{"role":"user","content":[{"text":"Weather in Paris?"}]}],
		"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","description":"Get the current weather in a given location","inputSchema":{"json":` + string(weatherSchema) + `}}}]` + wireChoice + `}`
}

// bedrockRecordedTarget is the model id and streaming of a recorded Converse path
// ("/model/us.amazon.nova-micro-v1%3A0/converse-stream").
func bedrockRecordedTarget(t *testing.T, path string) (model string, stream bool) {
	t.Helper()
	rest, ok := strings.CutPrefix(path, "/model/")
	if !ok {
		t.Fatalf("recorded path %q is not /model/…", path)
	}
	i := strings.LastIndexByte(rest, '/')
	id, err := url.PathUnescape(rest[:i])
	if err != nil {
		t.Fatal(err)
	}
	return id, rest[i+1:] == "converse-stream"
}

// decodeConverse fills w from a Converse body m: system blocks, inferenceConfig, messages
// (text, toolUse, toolResult and reasoningContent blocks; tool results as "tool" messages),
// toolConfig and additionalModelRequestFields.
func decodeConverse(m map[string]any, w *wireRequest, textOf func(any) string, tool func(name, desc, schema any) providers.Tool) {
	if sys, ok := m["system"].([]any); ok && textOf(sys) != "" {
		w.Messages = append(w.Messages, providers.Message{Role: "system", Content: textOf(sys)})
	}
	if ic, ok := m["inferenceConfig"].(map[string]any); ok {
		if f, ok := ic["maxTokens"].(float64); ok {
			w.MaxTokensKey, w.MaxTokens = "maxTokens", int(f)
		}
		if f, ok := ic["temperature"].(float64); ok {
			w.Temperature = &f
		}
		if f, ok := ic["topP"].(float64); ok {
			w.TopP = &f
		}
		if ss, ok := ic["stopSequences"].([]any); ok {
			for _, s := range ss {
				w.Stop = append(w.Stop, s.(string))
			}
		}
	}
	ms, _ := m["messages"].([]any)
	for _, x := range ms {
		mm, _ := x.(map[string]any)
		role, _ := mm["role"].(string)
		blocks, _ := mm["content"].([]any)
		msg := providers.Message{Role: role, Content: textOf(blocks)}
		var results []providers.Message
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if tu, ok := bm["toolUse"].(map[string]any); ok {
				id, _ := tu["toolUseId"].(string)
				name, _ := tu["name"].(string)
				msg.ToolCalls = append(msg.ToolCalls, providers.ToolCall{ID: id, Name: name, Arguments: canonicalValue(tu["input"])})
			}
			if tr, ok := bm["toolResult"].(map[string]any); ok {
				id, _ := tr["toolUseId"].(string)
				results = append(results, providers.Message{Role: "tool", ToolCallID: id, Content: textOf(tr["content"])})
			}
			if rc, ok := bm["reasoningContent"].(map[string]any); ok {
				if rt, ok := rc["reasoningText"].(map[string]any); ok {
					text, _ := rt["text"].(string)
					sig, _ := rt["signature"].(string)
					msg.Reasoning = append(msg.Reasoning, providers.ReasoningBlock{Text: text, Signature: sig})
				} else if red, ok := rc["redactedContent"].(string); ok {
					msg.Reasoning = append(msg.Reasoning, providers.ReasoningBlock{Redacted: red})
				}
			}
		}
		if len(results) > 0 {
			w.Messages = append(w.Messages, results...)
			if msg.Content != "" {
				w.Messages = append(w.Messages, providers.Message{Role: role, Content: msg.Content})
			}
			continue
		}
		w.Messages = append(w.Messages, msg)
	}
	if tc, ok := m["toolConfig"].(map[string]any); ok {
		ts, _ := tc["tools"].([]any)
		for _, x := range ts {
			tm, _ := x.(map[string]any)
			if spec, ok := tm["toolSpec"].(map[string]any); ok {
				schema, _ := spec["inputSchema"].(map[string]any)
				w.Tools = append(w.Tools, tool(spec["name"], spec["description"], schema["json"]))
			}
		}
		w.ToolChoice = canonicalValue(tc["toolChoice"])
	}
	if extra, ok := m["additionalModelRequestFields"].(map[string]any); ok && len(extra) > 0 {
		w.Extra = canonicalValue(extra)
	}
}

// converseRequest completes req, rebuilt from a recorded Converse body, with what only
// Converse says: topP and stop sequences, the tool choice, Claude's thinking budget and
// top_k.
func converseRequest(t *testing.T, w wireRequest, req *providers.Request) {
	t.Helper()
	req.TopP, req.Stop = w.TopP, w.Stop
	if w.ToolChoice != "" {
		var c map[string]map[string]any
		if err := json.Unmarshal([]byte(w.ToolChoice), &c); err != nil {
			t.Fatal(err)
		}
		switch {
		case c["auto"] != nil:
			req.ToolChoice = &providers.ToolChoice{Mode: providers.ToolChoiceAuto}
		case c["any"] != nil:
			req.ToolChoice = &providers.ToolChoice{Mode: providers.ToolChoiceRequired}
		case c["tool"] != nil:
			name, _ := c["tool"]["name"].(string)
			req.ToolChoice = &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: name}
		}
	}
	if w.Extra != "" {
		var extra struct {
			Thinking *struct {
				Type         string `json:"type"`
				BudgetTokens int    `json:"budget_tokens"`
			} `json:"thinking"`
			OutputConfig *struct {
				Effort string `json:"effort"`
			} `json:"output_config"`
			TopK            *int `json:"top_k"`
			InferenceConfig *struct {
				TopK *int `json:"topK"`
			} `json:"inferenceConfig"` // Nova's
		}
		dec := json.NewDecoder(strings.NewReader(w.Extra))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&extra); err != nil {
			t.Fatalf("additionalModelRequestFields the table cannot rebuild: %v (%s)", err, w.Extra)
		}
		switch {
		case extra.Thinking != nil && extra.Thinking.Type == "enabled":
			req.Thinking = &providers.Thinking{BudgetTokens: extra.Thinking.BudgetTokens}
		case extra.Thinking != nil && extra.Thinking.Type == "adaptive" && extra.OutputConfig != nil:
			req.Thinking = &providers.Thinking{Effort: extra.OutputConfig.Effort}
		}
		req.TopK = extra.TopK
		if extra.InferenceConfig != nil {
			req.TopK = extra.InferenceConfig.TopK
		}
	}
}
