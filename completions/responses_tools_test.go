package completions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// codexTools is the tool list Codex CLI sends with every request (trimmed): functions, a
// namespace of sub-agent functions, a custom tool with a Lark grammar, and the hosted
// web_search and tool_search. A top-level close_agent makes the namespace's one ambiguous.
// (The test's model, gpt-5-codex, searches through OpenAI's own web_search.)
const codexTools = `"tools":[
 {"type":"function","name":"exec_command","description":"Runs a command.","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}},
 {"type":"namespace","name":"multi_agent_v1","description":"Tools for sub-agents.","tools":[
  {"type":"function","name":"close_agent","description":"Close an agent.","strict":false,"parameters":{"type":"object","properties":{"target":{"type":"string"}},"required":["target"]}},
  {"type":"function","name":"spawn_agent","description":"Spawn an agent.","strict":false,"parameters":{"type":"object","properties":{"message":{"type":"string"}}}}]},
 {"type":"function","name":"close_agent","description":"Close a goal.","strict":false,"parameters":{"type":"object","properties":{}}},
 {"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}},
 {"type":"web_search","external_web_access":true},
 {"type":"tool_search","execution":"client","description":"Search deferred tools.","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}]`

// TestResponsesCodexTools: Codex CLI's tools reach any model as functions (tool_search left
// out, web_search as the provider's own search: TestResponsesWebSearchWhereAvailable); the model's calls of a namespace's function and of the custom tool
// come back as Codex reads them (a function_call naming its namespace, a custom_tool_call
// with its raw input, whole and streamed), and go back to the model as its own calls when
// Codex sends them in the input with their outputs.
func TestResponsesCodexTools(t *testing.T) {
	g, f, _ := openAIGateway(t)
	const patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
	spawn := providers.ToolCall{ID: "call_s", Name: "spawn_agent", Arguments: `{"message":"look"}`}
	edit := providers.ToolCall{ID: "call_p", Name: "apply_patch", Arguments: customToolArguments(patch)}
	f.on("gpt-5-codex", fakeTurn{call: &spawn}, fakeTurn{call: &edit}, fakeTurn{text: "Done."})
	const user = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Add a.txt"}]}`
	out := responsesVia(t, g, "", `{"model":"openai/gpt-5-codex","reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false,"input":[`+user+`],`+codexTools+`}`)
	if _, _, refusals := f.counts(); len(refusals) > 0 {
		t.Fatalf("upstream refused %q", refusals)
	}

	// What the model was offered.
	var names []string
	var apply map[string]any
	for _, tool := range f.last()["tools"].([]any) {
		tm := tool.(map[string]any)
		if tm["type"] == "web_search" { // OpenAI's own search: gpt-5-codex has it
			names = append(names, "(web_search)")
			continue
		}
		names = append(names, tm["name"].(string))
		if tm["name"] == "apply_patch" {
			apply = tm
		}
	}
	if want := []string{"(web_search)", "exec_command", "multi_agent_v1__close_agent", "spawn_agent", "close_agent", "apply_patch"}; !slices.Equal(names, want) {
		t.Errorf("tools offered %v, want %v", names, want)
	}
	if d, _ := apply["description"].(string); !strings.Contains(d, "Edit files.") || !strings.Contains(d, "start: begin_patch hunk+ end_patch") ||
		jsonOf(apply["parameters"]) != jsonOf(decoded(t, customToolParameters)) {
		t.Errorf("apply_patch offered as %v", apply)
	}

	// The namespace's function, called.
	items, _ := out["output"].([]any)
	if len(items) != 1 {
		t.Fatalf("output %v", out["output"])
	}
	if fc := items[0].(map[string]any); fc["type"] != "function_call" || fc["name"] != "spawn_agent" || fc["namespace"] != "multi_agent_v1" ||
		fc["call_id"] != "call_s" || fc["arguments"] != `{"message":"look"}` {
		t.Errorf("namespaced call %v", fc)
	}

	// The custom tool, called in a stream: its input whole, no function-call argument deltas.
	evs := streamResponses(t, g, `{"model":"openai/gpt-5-codex","stream":true,"input":[`+user+`],`+codexTools+`}`)
	var types []string
	var done, completed map[string]any
	for _, ev := range evs {
		types = append(types, ev["type"].(string))
		if ev["type"] == "response.output_item.done" {
			done = ev["item"].(map[string]any)
		}
		if ev["type"] == "response.completed" {
			completed = ev["response"].(map[string]any)
		}
	}
	if slices.Contains(types, "response.function_call_arguments.delta") || !slices.Contains(types, "response.custom_tool_call_input.done") {
		t.Errorf("events %v", types)
	}
	if done["type"] != "custom_tool_call" || done["name"] != "apply_patch" || done["input"] != patch || done["call_id"] != "call_p" || done["arguments"] != nil {
		t.Errorf("custom call streamed as %v", done)
	}
	if o := completed["output"].([]any); len(o) != 1 || o[0].(map[string]any)["input"] != patch {
		t.Errorf("completed output %v", o)
	}

	// Both calls and their outputs sent back as Codex sends them.
	history := `{"type":"function_call","name":"spawn_agent","namespace":"multi_agent_v1","call_id":"call_s","arguments":"{\"message\":\"look\"}"},` +
		`{"type":"function_call_output","call_id":"call_s","output":"agent 7"},` +
		`{"type":"custom_tool_call","name":"apply_patch","call_id":"call_p","input":` + jsonOf(patch) + `},` +
		`{"type":"custom_tool_call_output","call_id":"call_p","output":"Success."}`
	out = responsesVia(t, g, "", `{"model":"openai/gpt-5-codex","input":[`+user+`,`+history+`],`+codexTools+`}`)
	var sent []string
	for _, it := range f.last()["input"].([]any) {
		im := it.(map[string]any)
		sent = append(sent, fmt.Sprintf("%v %v %v %v", im["type"], im["name"], im["arguments"], im["output"]))
	}
	want := []string{"message <nil> <nil> <nil>", `function_call spawn_agent {"message":"look"} <nil>`, "function_call_output <nil> <nil> agent 7",
		"function_call apply_patch " + customToolArguments(patch) + " <nil>", "function_call_output <nil> <nil> Success."}
	if !slices.Equal(sent, want) {
		t.Errorf("input sent\n%s\nwant\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
	if text, _ := json.Marshal(out["output"]); !strings.Contains(string(text), "Done.") {
		t.Errorf("answer %s", text)
	}
}

// TestResponsesToolsRefused: built-in tools whose work the answer depends on, and malformed
// namespaces and custom tools, are 400s naming the field.
func TestResponsesToolsRefused(t *testing.T) {
	for tools, field := range map[string]string{
		`[{"type":"file_search","vector_store_ids":["vs_1"]}]`:                                                       "tools[0].type",
		`[{"type":"function","name":"f"},{"type":"code_interpreter","container":{"type":"auto"}}]`:                   "tools[1].type",
		`[{"type":"namespace","name":"ns","tools":[]}]`:                                                              "tools[0].tools",
		`[{"type":"namespace","tools":[{"type":"function","name":"f"}]}]`:                                            "tools[0].name",
		`[{"type":"namespace","name":"ns","tools":[{"type":"custom","name":"f"}]}]`:                                  "tools[0].tools[0].type",
		`[{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f"},{"type":"function","name":"f"}]}]`: "tools[0].tools[1].name",
		`[{"type":"custom"}]`: "tools[0].name",
	} {
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","input":"hi","tools":`+tools+`}`), &r); err != nil {
			t.Fatal(err)
		}
		_, err := r.ToChatRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a validation error on %s", tools, err, field)
		}
	}
}

// jsonOf is v as compact JSON.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestResponsesNamespacedNamesFit: a namespace's function that another tool's name forces
// to be prefixed stays within the 64 characters providers take, and distinct, however long
// its namespace (an MCP server's); its calls map back to it.
func TestResponsesNamespacedNamesFit(t *testing.T) {
	long := strings.Repeat("mcp_server_with_a_long_name_", 4)
	tools := []ResponsesTool{{Type: "function", Name: "search"},
		{Type: "namespace", Name: long + "a", Tools: []ResponsesFunctionTool{{Type: "function", Name: "search"}}},
		{Type: "namespace", Name: long + "b", Tools: []ResponsesFunctionTool{{Type: "function", Name: "search"}}}}
	chat, set, err := responsesTools(tools)
	if err != nil {
		t.Fatal(err)
	}
	a, b := chat[1].Function.Name, chat[2].Function.Name
	if len(a) > maxToolName || len(b) > maxToolName || a == b || !validName(a) || !validName(b) {
		t.Errorf("names %q and %q", a, b)
	}
	if o, ok := set.origin(b); !ok || o.namespace != long+"b" || o.name != "search" || set.modelName(long+"b", "search", false) != b {
		t.Errorf("%q maps to %+v", b, o)
	}
}

// TestResponsesToolOutputImages: images and files a tool returned (an Agents SDK tool
// returning an image) reach the model in a user turn of their own after the results of
// that step, in order, whatever comes next.
func TestResponsesToolOutputImages(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	calls := `{"type":"function_call","call_id":"c1","name":"shot","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"shot","arguments":"{}"},`
	for name, tc := range map[string]struct {
		rest string
		want []string
	}{
		"at the end": {``, []string{"user", "assistant", "tool", "tool", "user:image_url,image_url"}},
		"then a user message": {`,{"role":"user","content":"And now?"}`,
			[]string{"user", "assistant", "tool", "tool", "user:image_url,image_url", "user"}},
	} {
		body := `{"model":"a/m","input":[{"role":"user","content":"Look"},` + calls +
			`{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"first"},{"type":"input_image","image_url":"` + png + `"}]},` +
			`{"type":"function_call_output","call_id":"c2","output":[{"type":"input_image","image_url":"https://example.com/b.png","detail":"low"}]}` + tc.rest + `]}`
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		chat, err := r.ToChatRequest()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, m := range chat.Messages {
			s := m.Role
			if m.Role == "user" && !m.Content.IsString {
				var types []string
				for _, p := range m.Content.Parts {
					types = append(types, p.Type)
				}
				s += ":" + strings.Join(types, ",")
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: messages %v, want %v", name, got, tc.want)
		}
		if tool := chat.Messages[2]; tool.Content.Parts[0].Text != "first" {
			t.Errorf("%s: tool text %+v", name, tool.Content)
		}
		if img := chat.Messages[4].Content.Parts[1].ImageURL; img == nil || img.URL != "https://example.com/b.png" || img.Detail != "low" {
			t.Errorf("%s: second image %+v", name, img)
		}
		if _, err := chat.ToRequest(); err != nil {
			t.Errorf("%s: the chat request is refused: %v", name, err)
		}
	}
}

// TestResponsesWebSearchWhereAvailable: a /v1/responses web_search tool (Codex sends one
// with every request) gives each model its provider's own web search when it has one —
// Claude's web_search tool, OpenAI's through its Responses API — and the others answer
// without searching instead of failing.
func TestResponsesWebSearchWhereAvailable(t *testing.T) {
	g, f, an := openAIGateway(t)
	f.on("gpt-4o", fakeTurn{text: "Searched."})
	const search = `,"tools":[{"type":"web_search","external_web_access":true}]}`
	responsesVia(t, g, "", `{"model":"anthropic/claude-sonnet-4-5","input":"News?"`+search)
	if tools := jsonOf(an.last()["tools"]); !strings.Contains(tools, `"type":"web_search_20250305"`) {
		t.Errorf("Claude got tools %s, want its web_search", tools)
	}
	responsesVia(t, g, "", `{"model":"openai/gpt-4o","input":"News?"`+search)
	if n, chats, _ := f.counts(); n != 1 || chats != 0 || jsonOf(f.last()["tools"]) != `[{"type":"web_search"}]` {
		t.Errorf("gpt-4o: %d Responses calls, %d chat calls, tools %s", n, chats, jsonOf(f.last()["tools"]))
	}
	responsesVia(t, g, "", `{"model":"openai/gpt-4.1-nano","input":"News?"`+search) // no search: answers as it is
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.chats) != 1 || f.chats[0]["web_search_options"] != nil || f.chats[0]["tools"] != nil {
		t.Errorf("gpt-4.1-nano: chat calls %v", f.chats)
	}
}

// TestMessagesWebSearchTool: Claude Code's WebSearch sub-request (the web_search server
// tool, forced by tool_choice) asks the model's provider to search: Claude gets its
// web_search tool (and no tool_choice naming a function that is not there), and the answer
// is its text.
func TestMessagesWebSearchTool(t *testing.T) {
	g, _, an := openAIGateway(t)
	out := messagesVia(t, g, `{"model":"anthropic/claude-sonnet-4-5","max_tokens":32000,"thinking":{"type":"disabled"},"temperature":1,
		"system":[{"type":"text","text":"You are an assistant for performing a web search tool use"}],
		"messages":[{"role":"user","content":[{"type":"text","text":"Perform a web search for the query: airspeed of an unladen swallow"}]}],
		"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":8}],"tool_choice":{"type":"tool","name":"web_search"}}`)
	sent := an.last()
	if tools := jsonOf(sent["tools"]); !strings.Contains(tools, `"type":"web_search_20250305"`) || sent["tool_choice"] != nil {
		t.Errorf("Claude got tools %s, tool_choice %v", tools, sent["tool_choice"])
	}
	if content := jsonOf(out["content"]); !strings.Contains(content, `"type":"text"`) {
		t.Errorf("answer %s", content)
	}
}
