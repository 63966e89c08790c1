package completions

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// guardedGateway is a gateway over the fake provider "fake" (and an OpenAI provider whose
// moderations API is api, when set) with guardrails gs.
func guardedGateway(t *testing.T, f *fakeProvider, api *fakeModerationAPI, gs ...GuardrailConfig) (*Gateway, *recordingLedger, *recordingObserver) {
	t.Helper()
	reg := fakeRegistry{"fake": f}
	if api != nil {
		env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": api.srv.URL + "/v1"}
		openai, err := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}).Lookup("openai")
		if err != nil {
			t.Fatal(err)
		}
		reg["openai"] = openai
	}
	ledger, obs := &recordingLedger{}, &recordingObserver{}
	g, err := New(Options{Providers: reg, Ledger: ledger, Observer: obs, Guardrails: gs,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g, ledger, obs
}

func userRequest(text string, guardrails ...string) *Request {
	return &Request{Models: []string{"fake/m"}, Messages: []Message{TextMessage("user", text)}, Guardrails: guardrails}
}

// TestGuardrailMasksBeforeUpstream: a default_on pii + secrets guardrail replaces each
// entity with its label in what the upstream gets; the caller's request is not changed;
// numbers failing the Luhn or IBAN checks are left alone.
func TestGuardrailMasksBeforeUpstream(t *testing.T) {
	f := newFake("fake")
	g, _, _ := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "pii", Kind: GuardrailPII, Mode: GuardrailPreCall, DefaultOn: true},
		GuardrailConfig{Name: "keys", Kind: GuardrailSecrets, Mode: GuardrailPreCall, DefaultOn: true})
	text := "mail ann@example.com, card 4111 1111 1111 1111, not a card 4111 1111 1111 1112, " +
		"iban GB82 WEST 1234 5698 7654 32, call +1 415 555 2671, key sk-proj-abcdefghijklmnopqrstuvwx, aws AKIAIOSFODNN7EXAMPLE, " +
		"gh ghp_abcdefghijklmnopqrstuvwxyz0123456789, slack xoxb-1234567890-abcdef, pem -----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY----- ok"
	req := userRequest(text)
	if _, err := g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	sent := f.lastRequest().Messages[0].Content
	for _, secret := range []string{"ann@example.com", "4111 1111 1111 1111,", "GB82", "415 555", "sk-proj", "AKIA", "ghp_", "xoxb", "MIIabc"} {
		if strings.Contains(sent, secret) {
			t.Errorf("%q reached the upstream: %s", secret, sent)
		}
	}
	for _, mask := range []string{"[EMAIL]", "[CREDIT_CARD]", "[IBAN]", "[PHONE]", "[API_KEY]", "[PRIVATE_KEY]", "not a card 4111 1111 1111 1112"} {
		if !strings.Contains(sent, mask) {
			t.Errorf("%q missing from %s", mask, sent)
		}
	}
	if req.Messages[0].Content[0].Text != text {
		t.Error("the caller's request was changed")
	}
}

// TestGuardrailOptInBlocksBeforeUpstream: an opt-in banned_words guardrail applies only
// to requests naming it; a block calls no model, is a *GuardrailError naming the
// guardrail and is observed as blocked; a name nothing configures is refused naming
// guardrails.
func TestGuardrailOptInBlocksBeforeUpstream(t *testing.T) {
	f := newFake("fake")
	g, ledger, obs := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "words", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"Project X"}})
	if _, err := g.Complete(context.Background(), Scope{}, userRequest("tell me about project x")); err != nil {
		t.Fatalf("not opted in: %v", err)
	}
	obs.take(t)
	_, err := g.Complete(context.Background(), Scope{Owner: "k1"}, userRequest("tell me about project x", "words"))
	var ge *GuardrailError
	if !errors.As(err, &ge) || !errors.Is(err, ErrGuardrailBlocked) || ge.Guardrail != "words" || ge.Mode != GuardrailPreCall ||
		!strings.Contains(err.Error(), `"words"`) {
		t.Fatalf("err %v", err)
	}
	if f.callCount("m") != 1 || len(ledger.all()) != 1 {
		t.Errorf("%d upstream calls, %d ledger entries: the blocked request reached the upstream", f.callCount("m"), len(ledger.all()))
	}
	if r := obs.take(t); r.Outcome != RequestBlocked || r.Owner != "k1" || r.Requested != "fake/m" || !errors.Is(r.Err, ErrGuardrailBlocked) {
		t.Errorf("observed %+v", r)
	}
	// Streams and n choices are guarded the same way.
	if _, err := g.Stream(context.Background(), Scope{}, userRequest("project x!", "words")); !errors.As(err, &ge) {
		t.Errorf("stream: %v", err)
	}
	nreq := userRequest("PROJECT X", "words")
	nreq.ephemeral = true
	if _, _, err := g.CompleteN(context.Background(), Scope{}, nreq, 3); !errors.As(err, &ge) {
		t.Errorf("n choices: %v", err)
	}
	if f.callCount("m") != 1 {
		t.Errorf("%d upstream calls", f.callCount("m"))
	}

	_, err = g.Complete(context.Background(), Scope{}, userRequest("hi", "words", "nope"))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "guardrails[1]" || !strings.Contains(ve.Error(), `"nope"`) {
		t.Errorf("unknown name: %v", err)
	}
	// A gateway without guardrails refuses a request naming one too.
	bare, _, _ := guardedGateway(t, newFake("fake"), nil)
	if _, err := bare.Complete(context.Background(), Scope{}, userRequest("hi", "words")); !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, "guardrails") {
		t.Errorf("no guardrails configured: %v", err)
	}
}

// TestGuardrailPostCallBlocksAnswer: a post_call regex guardrail refuses an answer that
// matches: the answer is paid for (ledger) and not returned; a stream ends with the
// *GuardrailError in place of its end; a clean answer passes.
func TestGuardrailPostCallBlocksAnswer(t *testing.T) {
	f := newFake("fake").on("m", step{text: "the launch code is 0000", usage: providers.Usage{PromptTokens: 3, CompletionTokens: 5}})
	f.on("clean", step{text: "nothing to see", usage: providers.Usage{PromptTokens: 3, CompletionTokens: 3}})
	g, ledger, obs := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "codes", Kind: GuardrailRegex, Mode: GuardrailPostCall, DefaultOn: true, Patterns: []string{`launch code is \d+`}})
	_, err := g.Complete(context.Background(), Scope{}, userRequest("hi"))
	var ge *GuardrailError
	if !errors.As(err, &ge) || ge.Guardrail != "codes" || ge.Mode != GuardrailPostCall {
		t.Fatalf("err %v", err)
	}
	if e := ledger.all(); len(e) != 1 || e[0].Usage.CompletionTokens != 5 {
		t.Errorf("ledger %+v: the blocked answer was paid for", e)
	}
	if r := obs.take(t); r.Outcome != RequestBlocked || r.Model != "fake/m" || r.Usage.CompletionTokens != 5 || !errors.Is(r.Err, ErrGuardrailBlocked) {
		t.Errorf("observed %+v", r)
	}

	st, err := g.Stream(context.Background(), Scope{}, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for {
		c, err := st.Recv()
		if err != nil {
			if !errors.As(err, &ge) || errors.Is(err, io.EOF) {
				t.Errorf("stream end: %v", err)
			}
			break
		}
		got.WriteString(c.Text)
	}
	st.Close()
	if got.String() != "the launch code is 0000" || len(ledger.all()) != 2 {
		t.Errorf("streamed %q, ledger %d", got.String(), len(ledger.all()))
	}
	if r := obs.take(t); r.Outcome != RequestBlocked || !r.Stream || r.Usage.CompletionTokens == 0 {
		t.Errorf("observed %+v", r)
	}

	clean := userRequest("hi")
	clean.Models = []string{"fake/clean"}
	if resp, err := g.Complete(context.Background(), Scope{}, clean); err != nil || resp.Text() != "nothing to see" {
		t.Errorf("clean answer: %v %v", resp, err)
	}
}

// TestGuardrailModeration: a moderation guardrail sends the texts to the moderation model
// through Gateway.Moderate (recorded in the ledger under the caller) and blocks what it
// flags, before the chat model is called; with categories, only those block. A moderation
// model that is down blocks (on_error block, the default) or lets the request through
// (on_error allow).
func TestGuardrailModeration(t *testing.T) {
	api := newFakeModerationAPI(t)
	f := newFake("fake")
	g, ledger, _ := guardedGateway(t, f, api,
		GuardrailConfig{Name: "mod", Kind: GuardrailModeration, Mode: GuardrailPreCall, Model: "openai/omni-moderation-latest"},
		GuardrailConfig{Name: "mod-hate", Kind: GuardrailModeration, Mode: GuardrailPreCall, Categories: []string{"hate"}},
		GuardrailConfig{Name: "mod-open", Kind: GuardrailModeration, Mode: GuardrailPreCall, OnError: GuardrailAllow})
	_, err := g.Complete(context.Background(), Scope{Owner: "k1"}, userRequest("I will kill the process", "mod"))
	var ge *GuardrailError
	if !errors.As(err, &ge) || ge.Guardrail != "mod" || !strings.Contains(ge.Reason, "violence") {
		t.Fatalf("err %v", err)
	}
	if api.calls != 1 || f.callCount("m") != 0 || api.last["model"] != "omni-moderation-latest" {
		t.Errorf("%d moderation calls (sent %v), %d chat calls", api.calls, api.last, f.callCount("m"))
	}
	if e := ledger.all(); len(e) != 1 || e[0].Owner != "k1" || e[0].Model != "openai/omni-moderation-latest" || !e[0].Cost.PriceKnown {
		t.Errorf("ledger %+v", e)
	}
	// Only hate blocks for mod-hate: violence passes.
	if _, err := g.Complete(context.Background(), Scope{}, userRequest("I will kill the process", "mod-hate")); err != nil {
		t.Errorf("categories: %v", err)
	}
	// The moderation model is down (every retry): fail closed, or open.
	api.mu.Lock()
	api.fail = []int{500, 500, 500, 500, 500, 500}
	api.mu.Unlock()
	_, err = g.Complete(context.Background(), Scope{}, userRequest("hello", "mod"))
	var af *AllFailedError
	if !errors.As(err, &ge) || ge.Err == nil || !errors.As(err, &af) {
		t.Errorf("down, on_error block: %v", err)
	}
	calls := f.callCount("m")
	if _, err := g.Complete(context.Background(), Scope{}, userRequest("hello", "mod-open")); err != nil || f.callCount("m") != calls+1 {
		t.Errorf("down, on_error allow: %v", err)
	}
}

// TestGuardrailConfigValidation: each bad configuration is refused by New and
// ParseGuardrails naming the field.
func TestGuardrailConfigValidation(t *testing.T) {
	for _, c := range []struct{ json, field, says string }{
		{`{}`, "guardrails", "array"},
		{`[{"name":"a","kind":"regex","mode":"pre_call","patterns":["x"],"colour":"red"}]`, "guardrails[0]", "colour"},
		{`[{"kind":"regex","mode":"pre_call","patterns":["x"]}]`, "guardrails[0].name", "required"},
		{`[{"name":"a","kind":"regex","mode":"during_call","patterns":["x"]}]`, "guardrails[0].mode", "during_call"},
		{`[{"name":"a","kind":"lakera","mode":"pre_call"}]`, "guardrails[0].kind", "lakera"},
		{`[{"name":"a","kind":"regex","mode":"pre_call","patterns":["("]}]`, "guardrails[0].patterns[0]", "regular expression"},
		{`[{"name":"a","kind":"regex","mode":"pre_call"}]`, "guardrails[0].patterns", "at least one"},
		{`[{"name":"a","kind":"banned_words","mode":"pre_call","words":["ok",""]}]`, "guardrails[0].words[1]", "empty"},
		{`[{"name":"a","kind":"pii","mode":"pre_call","entities":["email","ssn"]}]`, "guardrails[0].entities[1]", "ssn"},
		{`[{"name":"a","kind":"pii","mode":"post_call","action":"mask"}]`, "guardrails[0].action", "pre_call"},
		{`[{"name":"a","kind":"pii","mode":"pre_call","action":"redact"}]`, "guardrails[0].action", "redact"},
		{`[{"name":"a","kind":"pii","mode":"pre_call","on_error":"retry"}]`, "guardrails[0].on_error", "retry"},
		{`[{"name":"a","kind":"regex","mode":"pre_call","patterns":["x"],"action":"mask"}]`, "guardrails[0].action", "secrets and pii"},
		{`[{"name":"a","kind":"pii","mode":"pre_call"},{"name":"a","kind":"pii","mode":"pre_call"}]`, "guardrails[1].name", "twice"},
	} {
		_, err := ParseGuardrails([]byte(c.json))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Error(), c.says) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", c.json, err)
		}
	}
	gs, err := ParseGuardrails([]byte(`[{"name":"m","kind":"moderation","mode":"pre_call","default_on":true,"on_error":"allow","categories":["hate"]}]`))
	if err != nil || len(gs) != 1 || !gs[0].DefaultOn || gs[0].OnError != GuardrailAllow {
		t.Fatalf("%+v %v", gs, err)
	}
	// New checks the moderation model against the providers it has.
	_, err = New(Options{Providers: fakeRegistry{"fake": newFake("fake")},
		Guardrails: []GuardrailConfig{{Name: "m", Kind: GuardrailModeration, Mode: GuardrailPreCall, Model: "fake/mod"}}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "guardrails[0].model" {
		t.Errorf("moderation model without a moderations API: %v", err)
	}
}

// TestBannedWordsWholeWords: a banned word matches in any case, alone or beside
// punctuation, not inside a longer word; a phrase matches as a whole.
func TestBannedWordsWholeWords(t *testing.T) {
	g, err := newBannedWordsGuardrail(GuardrailConfig{Words: []string{"Class", "top secret", "c++"}}, func(f string) string { return f })
	if err != nil {
		t.Fatal(err)
	}
	for text, blocked := range map[string]bool{
		"a class act": true, "CLASS.": true, "classified": false, "subclass": false,
		"this is Top Secret!": true, "top  secret": false, "I write c++ daily": true, "c+": false,
	} {
		v, _ := g.Check(context.Background(), GuardrailInput{Texts: []string{"ok", text}})
		if v.Blocked != blocked {
			t.Errorf("%q: blocked %v", text, v.Blocked)
		}
	}
}

// TestScopeGuardrails: a scope's guardrails (a virtual key's) run on its requests without
// the request naming them, beside those it names, and not on other scopes' requests; one
// the gateway does not configure refuses the request naming it (fails closed) and calls no
// model.
func TestScopeGuardrails(t *testing.T) {
	f := newFake("fake")
	g, _, _ := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "words", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"Project X"}},
		GuardrailConfig{Name: "more", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"Project Y"}})
	keyed := Scope{Owner: "k1", Guardrails: []string{"words"}}
	var ge *GuardrailError
	if _, err := g.Complete(context.Background(), keyed, userRequest("about project x")); !errors.As(err, &ge) || ge.Guardrail != "words" {
		t.Fatalf("the scope's guardrail did not run: %v", err)
	}
	if _, err := g.Stream(context.Background(), keyed, userRequest("about project x")); !errors.As(err, &ge) {
		t.Fatalf("stream: the scope's guardrail did not run: %v", err)
	}
	if _, err := g.Complete(context.Background(), keyed, userRequest("about project y", "more")); !errors.As(err, &ge) || ge.Guardrail != "more" {
		t.Fatalf("a request's guardrail beside the scope's: %v", err)
	}
	if _, err := g.Complete(context.Background(), Scope{Owner: "k2"}, userRequest("about project x")); err != nil {
		t.Fatalf("another scope ran the guardrail: %v", err)
	}
	calls := f.callCount("m")
	_, err := g.Complete(context.Background(), Scope{Owner: "k1", Guardrails: []string{"gone"}}, userRequest("hi"))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "guardrails" || !strings.Contains(err.Error(), `"gone"`) {
		t.Fatalf("an unconfigured scope guardrail: %v", err)
	}
	if f.callCount("m") != calls {
		t.Fatal("a request refused for its scope's unconfigured guardrail reached the upstream")
	}
	if err := g.CheckGuardrailNames("guardrails", []string{"words", "gone"}); !errors.As(err, &ve) || ve.Field != "guardrails[1]" {
		t.Fatalf("CheckGuardrailNames: %v", err)
	}
}
