package providers

import "testing"

// TestTakeOutputCall: the answer function's call is the answer's text, taken out of the
// calls with any repeat of it (Gemini may call it twice in parallel; the caller declared
// no such function, so a repeat left as a call fails its tool loop), the caller's calls
// staying in order, the thought signature only the answer call carried going to the first
// of them.
func TestTakeOutputCall(t *testing.T) {
	calls := []ToolCall{
		{ID: "a", Name: "json_answer", Arguments: `{"x":1}`, ThoughtSignature: "sig"},
		{ID: "b", Name: "get_time", Arguments: `{}`},
		{ID: "c", Name: "json_answer", Arguments: `{"x":1}`},
		{ID: "d", Name: "get_news", Arguments: `{}`},
	}
	answer, kept, ok := takeOutputCall(calls, "json_answer")
	if !ok || answer != `{"x":1}` {
		t.Fatalf("answer %q ok %v", answer, ok)
	}
	if len(kept) != 2 || kept[0].ID != "b" || kept[1].ID != "d" {
		t.Fatalf("kept %+v, want the calls b and d", kept)
	}
	if kept[0].ThoughtSignature != "sig" || kept[1].ThoughtSignature != "" {
		t.Errorf("signatures %q %q, want the answer call's on the first kept call", kept[0].ThoughtSignature, kept[1].ThoughtSignature)
	}
	if _, kept, ok := takeOutputCall([]ToolCall{{Name: "get_time"}}, "json_answer"); ok || len(kept) != 1 {
		t.Errorf("no answer call: ok %v kept %+v", ok, kept)
	}
}
