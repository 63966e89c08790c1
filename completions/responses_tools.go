package completions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The /v1/responses surface takes, besides function tools, the tool kinds coding agents
// (Codex CLI) send with every request, and gives every model what it can use of them:
//
//   - namespace tools (a named group of function tools): each function is declared to the
//     model on its own, named as in its namespace when no other tool has that name, else
//     "<namespace>__<name>" (cut to 64 characters with a hash when longer); its calls come back as function_call items naming the function
//     and its namespace, as OpenAI's API returns them, and are read back so.
//   - custom tools (freeform input, optionally in a grammar): declared as a function with
//     one string parameter, "input", whose description carries the grammar; a call comes
//     back as a custom_tool_call item whose input is that string, and custom_tool_call and
//     custom_tool_call_output items of the input are read back as the call and its result.
//   - web_search: the provider's own web search, for the models that have one (OpenAI's
//     through its Responses API, Claude's web_search tool, Gemini's Google Search); the
//     others answer without searching, rather than failing the agent's every request.
//   - tool_search (a client-run search over deferred tools): left out; the model works with
//     the tools it is offered.
//
//   - mcp: the tools of an MCP server the operator configured, run by the gateway (mcp.go).
//
// Other built-in tools (file_search, code_interpreter, computer use, …) are refused
// with a 400 naming the tool: the answer depends on what they would do.

// toolOrigin is where a tool the model is offered came from in a Responses request: a
// function inside a namespace, or a custom tool (name is then the custom tool's).
type toolOrigin struct {
	namespace, name string
	custom          bool
}

// responsesToolSet maps the names the model is offered to the tools of the request they
// stand for, both ways; the zero value maps nothing (every name is a plain function).
type responsesToolSet struct {
	byModelName map[string]toolOrigin
	byOrigin    map[toolOrigin]string
	fields      []string // the request's field of each chat tool
}

// webSearchTools are the Responses API's web search tools: the provider's own web search
// where the model has one (Request.searchIfAvailable), else nothing.
var webSearchTools = map[string]bool{"web_search": true, "web_search_preview": true, "web_search_2025_08_26": true,
	"web_search_preview_2025_03_11": true}

// customToolParameters is the schema of a custom tool declared as a function.
var customToolParameters = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The tool's raw input text (not JSON-encoded data)."}},"required":["input"],"additionalProperties":false}`)

// toolNameCounts counts the names of functions and custom tools, a namespace's functions
// by their own names.
func toolNameCounts(tools []ResponsesTool) map[string]int {
	taken := map[string]int{}
	for _, t := range tools {
		switch t.Type {
		case "function", "custom":
			taken[t.Name]++
		case "namespace":
			for _, f := range t.Tools {
				taken[f.Name]++
			}
		}
	}
	return taken
}

// responsesTools turns a Responses request's tools into chat tools and the map of their
// names; set.fields[i] is the request's field of chat tool i ("tools[1]",
// "tools[2].tools[0]"), for its validation errors.
func responsesTools(tools []ResponsesTool) ([]OpenAITool, responsesToolSet, error) {
	var set responsesToolSet
	// The model-facing names: plain functions and custom tools keep theirs; a namespace's
	// function keeps its own unless another tool has it.
	taken := toolNameCounts(tools)
	var out []OpenAITool
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.Type == "function":
			set.fields = append(set.fields, field)
			out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description,
				Parameters: t.Parameters, Strict: t.Strict}})
		case t.Type == "custom":
			if t.Name == "" {
				return nil, set, invalid(field+".name", "is required")
			}
			set.add(t.Name, toolOrigin{name: t.Name, custom: true})
			set.fields = append(set.fields, field)
			out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name,
				Description: customToolDescription(t.Description, t.Format), Parameters: customToolParameters}})
		case t.Type == "namespace":
			if t.Name == "" {
				return nil, set, invalid(field+".name", "is required")
			}
			if len(t.Tools) == 0 {
				return nil, set, invalid(field+".tools", "must hold at least one function")
			}
			for j, f := range t.Tools {
				if f.Type != "function" {
					return nil, set, invalid(fmt.Sprintf("%s.tools[%d].type", field, j), `must be "function" in a namespace, got %q`, f.Type)
				}
				name := f.Name
				if taken[name] > 1 {
					name = namespacedName(t.Name, f.Name)
				}
				if _, dup := set.byModelName[name]; dup {
					return nil, set, invalid(fmt.Sprintf("%s.tools[%d].name", field, j), "%q is declared twice in namespace %q", f.Name, t.Name)
				}
				set.add(name, toolOrigin{namespace: t.Name, name: f.Name})
				set.fields = append(set.fields, fmt.Sprintf("%s.tools[%d]", field, j))
				desc := f.Description
				if t.Description != "" {
					desc = strings.TrimSpace(t.Name + ": " + t.Description + "\n" + desc)
				}
				out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{Name: name, Description: desc,
					Parameters: f.Parameters, Strict: f.Strict}})
			}
		case t.Type == "mcp":
			continue // the MCP server's tools, offered by RespondWithMCP once listed
		case webSearchTools[t.Type] || t.Type == "tool_search":
			continue // not offered as a tool: the provider's own search instead; tool_search left out
		default:
			return nil, set, invalid(field+".type", `only function, custom, namespace and mcp tools and web_search are supported, got %q (tool_search is accepted and left out; other built-in tools are not supported)`, t.Type)
		}
	}
	return out, set, nil
}

// add records that the model is offered name for o.
func (s *responsesToolSet) add(name string, o toolOrigin) {
	if s.byModelName == nil {
		s.byModelName, s.byOrigin = map[string]toolOrigin{}, map[toolOrigin]string{}
	}
	s.byModelName[name] = o
	s.byOrigin[o] = name
}

// origin is what the model's call of name stands for; false for a plain function.
func (s responsesToolSet) origin(name string) (toolOrigin, bool) {
	o, ok := s.byModelName[name]
	return o, ok
}

// modelName is the name the model was offered for the function name of namespace (or the
// custom tool name); name itself for a plain function or a tool the request no longer has.
func (s responsesToolSet) modelName(namespace, name string, custom bool) string {
	if n, ok := s.byOrigin[toolOrigin{namespace: namespace, name: name, custom: custom}]; ok {
		return n
	}
	if namespace != "" {
		if n, ok := s.byOrigin[toolOrigin{name: name}]; ok { // not expected: a function of no namespace
			return n
		}
		return namespacedName(namespace, name)
	}
	return name
}

// maxToolName is the longest function name every provider takes (OpenAI's and Anthropic's 64).
const maxToolName = 64

// namespacedName is the name a namespace's function is offered under when another tool has
// its name: "<namespace>__<name>", or, when that is too long for providers (MCP servers'
// namespaces can be), the name cut short with a hash of both, which stays unique.
func namespacedName(namespace, name string) string {
	full := namespace + "__" + name
	if len(full) <= maxToolName {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	tag := "_" + hex.EncodeToString(sum[:4])
	return full[:maxToolName-len(tag)] + tag
}

// customToolDescription is a custom tool's description for the model, with the grammar its
// input must follow.
func customToolDescription(desc string, format json.RawMessage) string {
	var f struct {
		Type       string `json:"type"`
		Syntax     string `json:"syntax"`
		Definition string `json:"definition"`
	}
	if len(format) == 0 || json.Unmarshal(format, &f) != nil || f.Type != "grammar" || f.Definition == "" {
		return desc
	}
	syntax := f.Syntax
	if syntax == "" {
		syntax = "lark"
	}
	return strings.TrimSpace(desc + "\n\nThe input must follow this " + syntax + " grammar:\n" + f.Definition)
}

// customToolArguments is the arguments of a custom tool's call as the function the model
// was offered takes them.
func customToolArguments(input string) string {
	b, _ := json.Marshal(map[string]string{"input": input})
	return string(b)
}

// customToolInput is the input of a custom tool's call from the arguments the model wrote:
// the "input" string, or the arguments as they are when they are not such an object.
func customToolInput(arguments string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(arguments), &a) == nil && a.Input != nil {
		return *a.Input
	}
	return arguments
}

// callItemID is the item id (after its fc_ or ctc_ prefix) of call k of answer msgID:
// unique per answer, since upstreams may number their call ids afresh in every answer.
func callItemID(msgID string, k int) string { return msgID + "_" + strconv.Itoa(k) }

// callItem is the output item (id: see callItemID) of the model's call callID of a tool
// named name: a function_call (naming its namespace), or a custom_tool_call.

func (s responsesToolSet) callItem(id, callID, name, arguments, status string) ResponseOutputItem {
	item := ResponseOutputItem{ID: "fc_" + id, Type: "function_call", Status: status, CallID: callID, Name: name}
	o, ok := s.origin(name)
	switch {
	case ok && o.custom:
		input := customToolInput(arguments)
		item.ID, item.Type, item.Input = "ctc_"+id, "custom_tool_call", &input
	case ok:
		item.Name, item.Namespace, item.Arguments = o.name, o.namespace, &arguments
	default:
		item.Arguments = &arguments
	}
	return item
}

// field is the request's name of chat tool field f ("tools[2].function.name" of the chat
// request): the tool's own field in the Responses API's flat shape ("tools[3].name",
// "tools[1].tools[0].parameters"); f as it is when it names no chat tool.
func (s responsesToolSet) field(f string) string {
	rest, ok := strings.CutPrefix(f, "tools[")
	end := strings.IndexByte(rest, ']')
	if !ok || end < 0 {
		return f
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil || i < 0 || i >= len(s.fields) {
		return f
	}
	return s.fields[i] + strings.TrimPrefix(rest[end+1:], ".function")
}
