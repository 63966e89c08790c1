package completions

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReasoningCache: signed blocks are kept per caller and call id, for an hour; unsigned
// reasoning is not kept; the least recently used go first past the bounds.
func TestReasoningCache(t *testing.T) {
	var c reasoningCache
	now := time.Unix(1000, 0)
	signed := []providers.ReasoningBlock{{Text: "think", Signature: "sig"}}
	c.put("alice", "toolu_1", signed, now)
	c.put("alice", "toolu_2", []providers.ReasoningBlock{{Text: "gemini thought"}}, now)
	if got := c.get("alice", "toolu_1", now.Add(time.Minute)); !reflect.DeepEqual(got, signed) {
		t.Errorf("kept %+v", got)
	}
	if c.get("bob", "toolu_1", now) != nil || c.get("alice", "toolu_2", now) != nil {
		t.Error("another caller's, or unsigned, reasoning returned")
	}
	if c.get("alice", "toolu_1", now.Add(recentTTL+time.Second)) != nil {
		t.Error("an expired entry returned")
	}
	for i := range recentEntries + 5 {
		c.put("alice", fmt.Sprint("toolu_", i), signed, now)
	}
	if c.recent.order.Len() != recentEntries || c.get("alice", "toolu_0", now) != nil || c.get("alice", fmt.Sprint("toolu_", recentEntries+4), now) == nil {
		t.Errorf("entries %d after the bound; oldest kept or newest lost", c.recent.order.Len())
	}
	big := []providers.ReasoningBlock{{Text: strings.Repeat("x", recentBytes/20), Signature: "s"}}
	for i := range 40 {
		c.put("alice", fmt.Sprint("big_", i), big, now)
	}
	if c.recent.bytes > recentBytes {
		t.Errorf("%d bytes kept, bound %d", c.recent.bytes, recentBytes)
	}
}

// TestReasoningKeptForTheToolLoop: a client that sends Claude's tool-calling turn back
// without its thinking blocks (an OpenAI-SDK agent) still gives Claude the signed blocks it
// was answered with, whole or streamed; the native API keeps nothing.
func TestReasoningKeptForTheToolLoop(t *testing.T) {
	for _, stream := range []bool{false, true} {
		h := newHarness(t, nil)
		call := providers.ToolCall{ID: "toolu_abc", Name: "w", Arguments: "{}"}
		h.a.on("claude", step{call: &call, argPieces: []string{"{}"}, reasoning: claudeThought}, step{text: "Sunny."})
		first, err := chatBody(t, `{"model":"a/claude","reasoning_effort":"high","messages":[{"role":"user","content":"Weather?"}],
			"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object"}}}]}`)
		if err != nil {
			t.Fatal(err)
		}
		if stream {
			st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, first)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := st.Recv(); err != nil {
					break
				}
			}
			st.Close()
		} else if _, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, first); err != nil {
			t.Fatal(err)
		}
		next, err := chatBody(t, `{"model":"a/claude","reasoning_effort":"high","messages":[{"role":"user","content":"Weather?"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_abc","type":"function","function":{"name":"w","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"toolu_abc","content":"sunny"}],
			"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object"}}}]}`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, next); err != nil {
			t.Fatal(err)
		}
		if got := h.a.lastRequest().Messages[1].Reasoning; !reflect.DeepEqual(got, claudeThought) {
			t.Errorf("stream %v: the turn went back with reasoning %+v", stream, got)
		}
		// Another caller sending the same ids gets nothing.
		if _, err := h.g.Complete(context.Background(), Scope{Owner: "someone else"}, next); err != nil {
			t.Fatal(err)
		}
		if got := h.a.lastRequest().Messages[1].Reasoning; got != nil {
			t.Errorf("another caller's turn got reasoning %+v", got)
		}
	}
}
