package completions

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review17d: prepare runs guardRequest on req.Messages before it loads the stored
// conversation (conversationId), so the history sent upstream with the new turn is never
// checked or masked: turns stored before a default_on guardrail was configured (or by a
// replica without it) reach the upstream with the banned text and the unmasked e-mail.
// The Responses API's previous_response_id / conversation history is checked (it is
// expanded into the request's messages first), so the two surfaces disagree. Fix: run the
// pre_call guardrails on the loaded history plus the new messages (mask the history's
// copy sent upstream).
func TestReview17dPreCallChecksConversationHistory(t *testing.T) {
	st := memstore.New()
	f := newFake("fake")
	f.on("m", step{text: "noted"})
	before, err := New(Options{Providers: fakeRegistry{"fake": f}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	first, err := before.Complete(context.Background(), Scope{Owner: "k"}, userRequest("mail ann@example.com about project x"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := New(Options{Providers: fakeRegistry{"fake": f}, Store: st, Guardrails: []GuardrailConfig{
		{Name: "pii", Kind: GuardrailPII, Mode: GuardrailPreCall, DefaultOn: true}}})
	if err != nil {
		t.Fatal(err)
	}
	req := userRequest("go on")
	req.ConversationID = first.ConversationID
	if _, err := after.Complete(context.Background(), Scope{Owner: "k"}, req); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.lastRequest().Messages {
		if strings.Contains(m.Content, "ann@example.com") {
			t.Errorf("the history's e-mail reached the upstream unmasked: %q", m.Content)
		}
	}
}
