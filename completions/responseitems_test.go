package completions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestResponseItemReferences: a caller's references resolve to the items of the answers it
// was given (message, call of a namespace's function, custom tool call, reasoning), not to
// another caller's, and not to a failed response's.
func TestResponseItemReferences(t *testing.T) {
	h := newHarness(t, nil)
	args, input := `{"q":1}`, "*** Begin Patch"
	o := &ResponseObject{Status: "completed", Output: []ResponseOutputItem{
		{ID: "rs_1", Type: "reasoning", Summary: []ResponseSummaryPart{{Type: "summary_text", Text: "think"}}, EncryptedContent: "gAAAA"},
		{ID: "msg_1", Type: "message", Role: "assistant", Content: []ResponseOutputPart{{Type: "output_text", Text: "Let me check."}}},
		{ID: "fc_1", Type: "function_call", CallID: "call_1", Name: "spawn_agent", Namespace: "multi_agent_v1", Arguments: &args},
		{ID: "ctc_2", Type: "custom_tool_call", CallID: "call_2", Name: "apply_patch", Input: &input},
	}}
	h.g.KeepResponseItems("alice", o)
	h.g.KeepResponseItems("alice", &ResponseObject{Status: "failed", Output: []ResponseOutputItem{{ID: "msg_failed", Type: "message"}}})
	var r ResponsesRequest
	refs := `[{"role":"user","content":"go"},{"type":"item_reference","id":"rs_1"},{"type":"item_reference","id":"msg_1"},{"type":"item_reference","id":"fc_1"},{"type":"item_reference","id":"ctc_2"}]`
	if err := json.Unmarshal([]byte(`{"model":"a/m","input":`+refs+`}`), &r); err != nil {
		t.Fatal(err)
	}
	if err := h.g.ResolveItemReferences(context.Background(), "alice", &r); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r.Input.Items[1:])
	want := `[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"gAAAA"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me check."}],"id":"msg_1"},` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"spawn_agent","arguments":"{\"q\":1}","namespace":"multi_agent_v1"},` +
		`{"type":"custom_tool_call","id":"ctc_2","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch"}]`
	if string(got) != want {
		t.Errorf("resolved\n%s\nwant\n%s", got, want)
	}
	for owner, id := range map[string]string{"bob": "msg_1", "alice": "msg_failed"} {
		var r ResponsesRequest
		json.Unmarshal([]byte(`{"model":"a/m","input":[{"type":"item_reference","id":"`+id+`"}]}`), &r)
		var ve *ValidationError
		if err := h.g.ResolveItemReferences(context.Background(), owner, &r); !errors.As(err, &ve) || ve.Field != "input[0].id" {
			t.Errorf("%s referencing %s: %v, want a validation error on input[0].id", owner, id, err)
		}
	}
}
