package completions

import (
	"slices"

	"github.com/switchyard-ai/switchyard/providers"
)

// streamedCalls gathers a stream's tool calls from their fragments (EventToolCall chunks),
// for the surfaces that send each call whole once the upstream ended (Anthropic's
// Messages stream, Gemini's streamGenerateContent): their arguments come in pieces.
type streamedCalls struct {
	byIndex map[int]*streamedCall
	order   []int // upstream call indexes, first seen first
}

// streamedCall is one tool call gathered from its fragments.
type streamedCall struct {
	id, name, signature string
	args                []byte
}

// add takes one fragment of call d.Index.
func (c *streamedCalls) add(d providers.ToolCallDelta) {
	call := c.byIndex[d.Index]
	if call == nil {
		if c.byIndex == nil {
			c.byIndex = map[int]*streamedCall{}
		}
		call = &streamedCall{}
		c.byIndex[d.Index] = call
		c.order = append(c.order, d.Index)
	}
	if d.ID != "" {
		call.id = d.ID
	}
	if d.Name != "" {
		call.name = d.Name
	}
	if d.ThoughtSignature != "" {
		call.signature = d.ThoughtSignature
	}
	call.args = append(call.args, d.Arguments...)
}

// sorted returns the calls in the upstream's order of their indexes.
func (c *streamedCalls) sorted() []*streamedCall {
	idx := slices.Sorted(slices.Values(c.order))
	out := make([]*streamedCall, len(idx))
	for i, k := range idx {
		out[i] = c.byIndex[k]
	}
	return out
}
