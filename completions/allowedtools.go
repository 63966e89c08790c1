package completions

import (
	"fmt"
	"slices"

	"github.com/switchyard-ai/switchyard/providers"
)

// OpenAI's allowed_tools tool choice: tool_choice {"type": "allowed_tools", ...} keeps
// every declared tool in the request (for the prompt cache, in OpenAI's words) and lets the
// model call only the tools it lists, with mode "auto" (it may answer instead) or
// "required" (it must call one of them). No provider but OpenAI takes it, so the gateway
// sends each model the listed tools alone with tool_choice auto or required, which asks the
// same of every provider (Gemini's allowedFunctionNames is read the same way, see
// gemini_generate.go).

// ToolChoiceAllowedTools is the Mode of an OpenAIToolChoice or ResponsesToolChoice of type
// "allowed_tools".
const ToolChoiceAllowedTools = "allowed_tools"

// OpenAIAllowedTools is the allowed_tools member of a chat request's tool_choice
// {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [...]}}.
type OpenAIAllowedTools struct {
	// Mode is "auto" (the model may answer instead) or "required" (it must call a listed tool).
	Mode string `json:"mode" jsonschema:"required,enum=auto,enum=required"`
	// Tools lists the tools the model may call: {"type": "function", "function": {"name": …}}.
	Tools []OpenAIAllowedTool `json:"tools" jsonschema:"required"`
	// fields names Tools' entries in the caller's request, when it is not a chat request
	// (a /v1/responses request's tool_choice.tools[i].name).
	fields []string
}

// OpenAIAllowedTool is one entry of allowed_tools.tools in a chat request.
type OpenAIAllowedTool struct {
	// Type is "function".
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// ResponsesAllowedTool is one entry of a Responses request's tool_choice
// {"type": "allowed_tools", "mode": …, "tools": [...]}: {"type": "function", "name": …},
// {"type": "custom", "name": …} or a web search tool ({"type": "web_search"}).
type ResponsesAllowedTool struct {
	Type        string `json:"type"`
	Name        string `json:"name,omitempty"`
	ServerLabel string `json:"server_label,omitempty"`
}

// toolAllowList is what an allowed_tools tool choice lets the model call: the names of
// declared tools, each with the request's field that listed it (for its errors).
type toolAllowList struct {
	names, fields []string
}

// allowedToolsRequest reads a chat tool_choice of type allowed_tools into req: the mode
// becomes req's tool choice, the names its allow list (applied by validateTools, once the
// declared tools have been checked under their own indexes).
func allowedToolsRequest(c *OpenAIToolChoice, req *Request) error {
	a := c.AllowedTools
	if a == nil {
		return invalid("tool_choice.allowed_tools", `is required with type "allowed_tools"`)
	}
	if a.Mode != providers.ToolChoiceAuto && a.Mode != providers.ToolChoiceRequired {
		return invalid("tool_choice.allowed_tools.mode", `must be "auto" or "required", got %q`, a.Mode)
	}
	if len(a.Tools) == 0 {
		return invalid("tool_choice.allowed_tools.tools", "must list at least one tool")
	}
	list := &toolAllowList{}
	for i, t := range a.Tools {
		field := fmt.Sprintf("tool_choice.allowed_tools.tools[%d]", i)
		if t.Type != "function" {
			return invalid(field+".type", `must be "function", got %q`, t.Type)
		}
		list.names = append(list.names, t.Function.Name)
		list.fields = append(list.fields, field+".function.name")
	}
	if len(a.fields) == len(list.names) { // a /v1/responses request's own fields
		list.fields = a.fields
	}
	req.ToolChoice = &providers.ToolChoice{Mode: a.Mode}
	req.toolAllowList = list
	return nil
}

// applyToolAllowList keeps, of req's tools, those its allowed_tools tool choice lists, each
// of which must be declared (names holds the declared tools' names).
func applyToolAllowList(req *Request, names map[string]bool) error {
	list := req.toolAllowList
	if list == nil {
		return nil
	}
	for i, name := range list.names {
		if !names[name] {
			return invalid(list.fields[i], "%q is not one of the tools", name)
		}
	}
	req.Tools = slices.DeleteFunc(slices.Clone(req.Tools), func(t providers.Tool) bool { return !slices.Contains(list.names, t.Name) })
	req.toolAllowList = nil // applied: a second validation of req finds the kept tools only
	return nil
}

// responsesAllowedTools turns a Responses allowed_tools tool choice into the chat one:
// functions and custom tools by name (a custom tool is offered as a function of its name);
// a web search tool, which is the provider's own search rather than a tool the gateway
// offers, is accepted and left as it is.
func responsesAllowedTools(c ResponsesToolChoice) (*OpenAIToolChoice, error) {
	if c.AllowedMode != providers.ToolChoiceAuto && c.AllowedMode != providers.ToolChoiceRequired {
		return nil, invalid("tool_choice.mode", `must be "auto" or "required", got %q`, c.AllowedMode)
	}
	if len(c.Allowed) == 0 {
		return nil, invalid("tool_choice.tools", "must list at least one tool")
	}
	out := &OpenAIToolChoice{Mode: ToolChoiceAllowedTools, AllowedTools: &OpenAIAllowedTools{Mode: c.AllowedMode, Tools: []OpenAIAllowedTool{}}}
	for i, t := range c.Allowed {
		field := fmt.Sprintf("tool_choice.tools[%d]", i)
		switch {
		case t.Type == "function" || t.Type == "custom":
			if t.Name == "" {
				return nil, invalid(field+".name", "is required")
			}
			var a OpenAIAllowedTool
			a.Type, a.Function.Name = "function", t.Name
			out.AllowedTools.Tools = append(out.AllowedTools.Tools, a)
			out.AllowedTools.fields = append(out.AllowedTools.fields, field+".name")
		case webSearchTools[t.Type]:
		default:
			return nil, invalid(field+".type", `must be "function", "custom" or a web search tool, got %q`, t.Type)
		}
	}
	if len(out.AllowedTools.Tools) == 0 { // web search alone: no function may be called
		return &OpenAIToolChoice{Mode: providers.ToolChoiceNone}, nil
	}
	return out, nil
}
