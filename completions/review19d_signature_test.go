package completions

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

const review19dSig = "CiQB0e2Kb+/sig+A/=="

// The gateway runs an MCP call Gemini signed and asks the model again: the call goes back
// with its thought signature (Gemini 3 wants it), not unsigned.
func TestReview19dMCPLoopKeepsThoughtSignature(t *testing.T) {
	h, _ := newMCPHarness(t, true)
	h.a.on("m", step{call: &providers.ToolCall{ID: "call_1", Name: "docs__search", Arguments: `{"q":"go"}`, ThoughtSignature: review19dSig}},
		step{text: "Found it."})
	if _, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"find go",`+mcpNever+`}`); err != nil {
		t.Fatal(err)
	}
	last := h.a.lastRequest().Messages
	if len(last) < 2 || len(last[1].ToolCalls) != 1 {
		t.Fatalf("second round messages %+v", last)
	}
	if got := last[1].ToolCalls[0].ThoughtSignature; got != review19dSig {
		t.Errorf("the MCP call went back to the model with thought signature %q, want %q", got, review19dSig)
	}
}

// A streamed response with mcp tools whose model calls one of the request's own functions
// (signed by Gemini) carries the signature's reasoning item, as the unstreamed one does.
func TestReview19dMCPStreamKeepsThoughtSignatureItem(t *testing.T) {
	tools := `"tools":[{"type":"mcp","server_label":"docs","require_approval":"never"},
		{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	for _, stream := range []bool{false, true} {
		h, _ := newMCPHarness(t, true)
		h.a.on("m", step{call: &providers.ToolCall{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`, ThoughtSignature: review19dSig},
			argPieces: []string{`{"city":"Paris"}`}})
		var o *ResponseObject
		if !stream {
			var err error
			if o, err = respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"weather?",`+tools+`}`); err != nil {
				t.Fatal(err)
			}
		} else {
			var r ResponsesRequest
			if err := json.Unmarshal([]byte(`{"model":"a/m","input":"weather?","stream":true,`+tools+`}`), &r); err != nil {
				t.Fatal(err)
			}
			o = NewResponseObject(&r, "resp_x", time.Now())
			rec := httptest.NewRecorder()
			if err := h.g.StreamWithMCP(context.Background(), Scope{Owner: "alice"}, &r, o, rec, MCPResponseOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(rec.Body.String(), thoughtSignaturePrefix) {
				t.Errorf("stream: no event carries the call's thought signature")
			}
		}
		found := false
		for _, it := range o.Output {
			if id, sig, ok := parseThoughtSignatureToken(it.EncryptedContent); ok && it.Type == "reasoning" && id == "call_w" && sig == review19dSig {
				found = true
			}
		}
		if !found {
			t.Errorf("stream=%v: output %s has no reasoning item with call_w's thought signature", stream, itemTypes(o))
		}
	}
}
