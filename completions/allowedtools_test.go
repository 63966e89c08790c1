package completions

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// allowedToolsDeclared are the tools the allowed_tools tests declare, in a chat request.
const allowedToolsDeclared = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{}}}},
	{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}},
	{"type":"function","function":{"name":"get_news","parameters":{"type":"object","properties":{}}}}]`

// sentToolNames is the names of the tools in an upstream body (OpenAI's chat shape or
// Anthropic's).
func sentToolNames(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		tm := t.(map[string]any)
		if fn, ok := tm["function"].(map[string]any); ok {
			names = append(names, fn["name"].(string))
			continue
		}
		names = append(names, tm["name"].(string))
	}
	return names
}

// TestAllowedToolsChoice: OpenAI's tool_choice {"type": "allowed_tools"} (chat's
// allowed_tools member, the Responses API's mode and tools), which the official SDKs send
// and the gateway refused, reaches every provider as the listed tools alone with
// tool_choice auto or required; a Responses request may force a custom tool
// ({"type": "custom", "name": …}) and its stored tool_choice is what it sent.
func TestAllowedToolsChoice(t *testing.T) {
	g, f, an := openAIGateway(t)
	lastChat := func() map[string]any {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.chats[len(f.chats)-1]
	}

	// Chat, to OpenAI: only get_time, which must be called.
	if _, err := chatVia(g, "", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],`+allowedToolsDeclared+`,
		"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_time"}}]}}}`); err != nil {
		t.Fatal(err)
	}
	if body := lastChat(); !slices.Equal(sentToolNames(body), []string{"get_time"}) || body["tool_choice"] != "required" {
		t.Errorf("OpenAI was sent tools %v, tool_choice %v", sentToolNames(body), body["tool_choice"])
	}

	// Chat, to Claude: two of the three, the model free to answer (auto, Claude's default,
	// may be left out).
	if _, err := chatVia(g, "", `{"model":"anthropic/claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}],`+allowedToolsDeclared+`,
		"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"get_news"}},{"type":"function","function":{"name":"get_weather"}}]}}}`); err != nil {
		t.Fatal(err)
	}
	if body := an.last(); !slices.Equal(sentToolNames(body), []string{"get_weather", "get_news"}) || body["tool_choice"] != nil && jsonOf(body["tool_choice"]) != `{"type":"auto"}` {
		t.Errorf("Claude was sent tools %v, tool_choice %v", sentToolNames(body), body["tool_choice"])
	}

	// Responses, to Claude: a function and a custom tool of three tools, required; the
	// response object echoes the tool choice as it came.
	const responsesTools = `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}}},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}}},{"type":"custom","name":"apply_patch","description":"Edit files."}]`
	const allowed = `{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"get_time"},{"type":"custom","name":"apply_patch"}]}`
	out := responsesVia(t, g, "", `{"model":"anthropic/claude-sonnet-4-5","input":"hi",`+responsesTools+`,"tool_choice":`+allowed+`}`)
	if body := an.last(); !slices.Equal(sentToolNames(body), []string{"get_time", "apply_patch"}) || jsonOf(body["tool_choice"]) != `{"type":"any"}` {
		t.Errorf("Claude was sent tools %v, tool_choice %v", sentToolNames(body), body["tool_choice"])
	}
	var want any
	_ = json.Unmarshal([]byte(allowed), &want)
	if jsonOf(out["tool_choice"]) != jsonOf(want) {
		t.Errorf("response object's tool_choice %s, want %s", jsonOf(out["tool_choice"]), jsonOf(want))
	}

	// Responses, forcing the custom tool: every tool offered, that one named.
	out = responsesVia(t, g, "", `{"model":"anthropic/claude-sonnet-4-5","input":"hi",`+responsesTools+`,"tool_choice":{"type":"custom","name":"apply_patch"}}`)
	if body := an.last(); len(sentToolNames(body)) != 3 || jsonOf(body["tool_choice"]) != `{"name":"apply_patch","type":"tool"}` {
		t.Errorf("Claude was sent tools %v, tool_choice %v", sentToolNames(body), body["tool_choice"])
	}
	if jsonOf(out["tool_choice"]) != `{"name":"apply_patch","type":"custom"}` {
		t.Errorf("response object's tool_choice %s", jsonOf(out["tool_choice"]))
	}
}

// TestAllowedToolsChoiceRefused: a malformed allowed_tools tool choice, or one listing a
// tool the request does not declare, is a validation error naming the field in the
// caller's own request; a declared tool's own errors keep its index though the list leaves
// tools out.
func TestAllowedToolsChoiceRefused(t *testing.T) {
	g, _, _ := openAIGateway(t)
	chat := func(choice string) string { // a chat request's tools and tool_choice
		return `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],` + allowedToolsDeclared + `,"tool_choice":` + choice + `}`
	}
	responses := func(choice string) string {
		return `{"model":"openai/gpt-4o-mini","input":"hi","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}}}],"tool_choice":` + choice + `}`
	}
	for _, c := range []struct {
		responses   bool
		body, field string
	}{
		{false, chat(`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_time"}},{"type":"function","function":{"name":"get_stock"}}]}}`),
			"tool_choice.allowed_tools.tools[1].function.name"},
		{false, chat(`{"type":"allowed_tools","allowed_tools":{"mode":"sometimes","tools":[{"type":"function","function":{"name":"get_time"}}]}}`), "tool_choice.allowed_tools.mode"},
		{false, chat(`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`), "tool_choice.allowed_tools.tools"},
		{false, chat(`{"type":"allowed_tools"}`), "tool_choice.allowed_tools"},
		{false, chat(`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"custom","function":{"name":"get_time"}}]}}`), "tool_choice.allowed_tools.tools[0].type"},
		{false, chat(`{"type":"something"}`), "tool_choice"},
		// get_news's bad schema is still tools[2], though only it is kept.
		{false, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_weather"}},
			{"type":"function","function":{"name":"get_time"}},{"type":"function","function":{"name":"get_news","parameters":{"type":"array"}}}],
			"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"get_news"}}]}}}`, "tools[2].function.parameters"},
		{true, responses(`{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"get_time"}]}`), "tool_choice.tools[0].name"},
		{true, responses(`{"type":"allowed_tools","mode":"auto","tools":[{"type":"file_search"}]}`), "tool_choice.tools[0].type"},
		{true, responses(`{"type":"allowed_tools","mode":"any","tools":[{"type":"function","name":"get_weather"}]}`), "tool_choice.mode"},
		{true, responses(`{"type":"custom"}`), "tool_choice.name"},
		{true, responses(`{"type":"file_search"}`), "tool_choice"},
	} {
		var err error
		if c.responses {
			var r ResponsesRequest
			if err = json.Unmarshal([]byte(c.body), &r); err != nil {
				t.Fatal(err)
			}
			_, err = viaGateway(g, "")(r.ToChatRequest())
		} else {
			_, err = chatVia(g, "", c.body)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s:\n%v, want a validation error on %s", c.body, err, c.field)
		}
	}
}

// TestAllowedToolsChoiceJSON: a chat tool_choice of type allowed_tools is read and written
// back in OpenAI's shape.
func TestAllowedToolsChoiceJSON(t *testing.T) {
	const in = `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_time"}}]}}`
	var c OpenAIToolChoice
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if c.Mode != ToolChoiceAllowedTools || c.AllowedTools == nil || c.AllowedTools.Mode != "required" || c.AllowedTools.Tools[0].Function.Name != "get_time" {
		t.Fatalf("read %+v", c)
	}
	if out := jsonOf(c); out != in {
		t.Errorf("written %s, want %s", out, in)
	}
	for _, s := range []string{`"auto"`, `{"type":"function","function":{"name":"f"}}`} {
		var c OpenAIToolChoice
		if err := json.Unmarshal([]byte(s), &c); err != nil || jsonOf(c) != s {
			t.Errorf("%s read and written as %s (%v)", s, jsonOf(c), err)
		}
	}
}

// TestAllowedToolsLeaveOutUnlistedWebSearch: a /v1/responses request declaring a web
// search tool beside its functions whose allowed_tools tool choice lists functions only
// may not search (OpenAI's model may call only the tools listed), so the provider's own
// search, billed by the search, is not offered; listed, it is.
func TestAllowedToolsLeaveOutUnlistedWebSearch(t *testing.T) {
	g, _, an := openAIGateway(t)
	const tools = `"tools":[{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}}},{"type":"web_search"}]`
	for _, c := range []struct {
		listed string
		want   []string
	}{
		{`[{"type":"function","name":"get_time"}]`, []string{"get_time"}},
		{`[{"type":"function","name":"get_time"},{"type":"web_search"}]`, []string{"get_time", "web_search"}},
	} {
		responsesVia(t, g, "", `{"model":"anthropic/claude-sonnet-4-5","input":"hi",`+tools+`,"tool_choice":{"type":"allowed_tools","mode":"auto","tools":`+c.listed+`}}`)
		if got := sentToolNames(an.last()); !slices.Equal(got, c.want) {
			t.Errorf("allowed_tools %s: Claude was sent tools %v, want %v", c.listed, got, c.want)
		}
	}
}
