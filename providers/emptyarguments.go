package providers

import "strings"

// A tool call's arguments are a JSON object's text; some OpenAI-compatible servers send ""
// for a function without parameters, which clients that parse the arguments (the OpenAI
// SDKs' runTools and parse helpers, agent frameworks) fail on. Such a call is given "{}",
// as OpenAI's own API writes it and as the gateway's other surfaces already do.

// argumentsOrEmptyObject is args, or "{}" when it is blank.
func argumentsOrEmptyObject(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

// emptyArgumentCalls notes a streamed answer's tool calls by index and whether any
// fragment of each carried arguments; the zero value is ready to use.
type emptyArgumentCalls struct {
	order []int        // the calls' indexes, as they first came
	args  map[int]bool // index → a fragment had arguments
}

// note records the fragments of a chunk.
func (e *emptyArgumentCalls) note(deltas []ToolCallDelta) {
	for _, d := range deltas {
		if e.args == nil {
			e.args = map[int]bool{}
		}
		had, seen := e.args[d.Index]
		if !seen {
			e.order = append(e.order, d.Index)
		}
		e.args[d.Index] = had || strings.TrimSpace(d.Arguments) != ""
	}
}

// fill is a fragment giving "{}" to each call noted without arguments, once; nil when
// every call had some.
func (e *emptyArgumentCalls) fill() []ToolCallDelta {
	var out []ToolCallDelta
	for _, i := range e.order {
		if !e.args[i] {
			out = append(out, ToolCallDelta{Index: i, Arguments: "{}"})
			e.args[i] = true
		}
	}
	return out
}
