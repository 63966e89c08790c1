package client_test

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestAllowedToolsNodeSDK drives OpenAI's allowed_tools tool choice with the official
// OpenAI Node SDK (testdata/openai_allowed_tools_check.mjs), which the gateway refused with
// a 400: on chat completions and on the Responses API the upstream is offered the listed
// tools alone, with tool_choice required or auto as asked, the Responses object echoes the
// choice as sent, and a Responses request forcing a custom tool names that tool upstream.
// Skips, saying why, without node and npm or the package.
func TestAllowedToolsNodeSDK(t *testing.T) {
	run := nodeSDK(t)
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	out := run("testdata/openai_allowed_tools_check.mjs", base)
	var got struct {
		Chat      map[string]any `json:"chat"`
		Responses map[string]any `json:"responses"`
		Custom    map[string]any `json:"custom"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Chat["finish"] != "tool_calls" || got.Chat["call"] != "get_weather" {
		t.Errorf("chat with allowed_tools: %v", got.Chat)
	}
	if tc, _ := got.Responses["toolChoice"].(map[string]any); got.Responses["status"] != "completed" || got.Responses["call"] != "get_weather" ||
		tc["type"] != "allowed_tools" || tc["mode"] != "auto" || len(tc["tools"].([]any)) != 2 {
		t.Errorf("responses with allowed_tools: %v", got.Responses)
	}
	if tc, _ := got.Custom["toolChoice"].(map[string]any); got.Custom["status"] != "completed" || tc["type"] != "custom" || tc["name"] != "apply_patch" {
		t.Errorf("responses forcing a custom tool: %v", got.Custom)
	}

	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.requests) != 3 {
		t.Fatalf("the upstream was called %d times, want 3", len(up.requests))
	}
	for i, want := range []struct {
		tools  []string
		choice string
	}{{[]string{"get_weather"}, `"required"`}, {[]string{"get_weather", "get_news"}, `"auto"`},
		{[]string{"get_weather", "apply_patch"}, `{"function":{"name":"apply_patch"},"type":"function"}`}} {
		req := up.requests[i]
		var names []string
		for _, tool := range req["tools"].([]any) {
			names = append(names, tool.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		choice, _ := json.Marshal(req["tool_choice"])
		if !slices.Equal(names, want.tools) || string(choice) != want.choice {
			t.Errorf("request %d offered %v with tool_choice %s, want %v with %s", i, names, choice, want.tools, want.choice)
		}
	}
}
