package completions

import (
	"slices"

	"github.com/switchyard-ai/switchyard/providers"
)

// Built-in tools in a Responses tool_choice. OpenAI's Responses API forces a hosted tool
// with {"type": <the tool's type>} (openai-go v1.12.0 responses.ToolChoiceTypes:
// file_search, web_search_preview, computer_use_preview, web_search_preview_2025_03_11,
// image_generation, code_interpreter) and a tool of a remote MCP server with
// {"type": "mcp", "server_label", "name"} (responses.ToolChoiceMcp). Of those tools the
// gateway has two, and takes the choice of each:
//
//   - a web search tool: the model must search before it answers. Its functions may not
//     be called (chat tool_choice none), and the provider's own search is asked for as
//     required (providers.SearchOptions.Required): Claude is made to call its web_search
//     tool, OpenAI's Responses API its web_search; a provider that cannot be made to search
//     (Gemini's Google Search) is offered it, the nearest it has.
//   - mcp: the model calls a tool of that server (the one named, else any of them) in its
//     first round; the later rounds of the run are left to the model, or it would call
//     the tool forever (see mcpRun.listTools).
//
// The other built-in tools are not supported (nor are they as tools), so a choice of one is
// refused naming tool_choice.

// responsesToolChoice is the chat request's tool_choice for c, a choice of a Responses
// request whose tools are tools.
func responsesToolChoice(c ResponsesToolChoice, tools []ResponsesTool) (*OpenAIToolChoice, error) {
	switch {
	case webSearchTools[c.Mode]:
		if !slices.ContainsFunc(tools, func(t ResponsesTool) bool { return webSearchTools[t.Type] }) {
			return nil, invalid("tool_choice.type", "%q asks the model to search, but tools has no web search tool (web_search or web_search_preview)", c.Mode)
		}
		return &OpenAIToolChoice{Mode: providers.ToolChoiceNone}, nil
	case c.Mode == "mcp":
		if c.ServerLabel == "" {
			return nil, invalid("tool_choice.server_label", `is required with type "mcp"`)
		}
		if !slices.ContainsFunc(tools, func(t ResponsesTool) bool { return t.Type == "mcp" && t.ServerLabel == c.ServerLabel }) {
			return nil, invalid("tool_choice.server_label", "%q is not the server_label of an mcp tool of the request", c.ServerLabel)
		}
		return nil, nil // forced in the run's first round, once the server's tools are listed
	}
	return c.chat()
}

// forcedMCPChoice is the chat tool_choice that makes the model call a tool of the mcp
// tool choice c's server (the one c names, else any of them), of the model-facing names
// byName maps to MCP tools; nil when c is not an mcp choice. A named tool the server
// does not list is refused naming tool_choice.name.
func forcedMCPChoice(c *ResponsesToolChoice, byName map[string]mcpRef) (*OpenAIToolChoice, error) {
	if c == nil || c.Mode != "mcp" {
		return nil, nil
	}
	var names []string
	for name, ref := range byName {
		if ref.server.label == c.ServerLabel && (c.Name == "" || ref.tool.Name == c.Name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		if c.Name != "" {
			return nil, invalid("tool_choice.name", "%q is not a tool MCP server %q offers", c.Name, c.ServerLabel)
		}
		return nil, invalid("tool_choice.server_label", "MCP server %q offers no tool to call", c.ServerLabel)
	}
	if len(names) == 1 {
		return &OpenAIToolChoice{Mode: providers.ToolChoiceFunction, Name: names[0]}, nil
	}
	slices.Sort(names)
	allowed := &OpenAIAllowedTools{Mode: providers.ToolChoiceRequired}
	for _, n := range names {
		var a OpenAIAllowedTool
		a.Type, a.Function.Name = "function", n
		allowed.Tools = append(allowed.Tools, a)
		allowed.fields = append(allowed.fields, "tool_choice.server_label")
	}
	return &OpenAIToolChoice{Mode: ToolChoiceAllowedTools, AllowedTools: allowed}, nil
}
