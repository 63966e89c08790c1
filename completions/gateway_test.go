package completions

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

type harness struct {
	g      *Gateway
	a, b   *fakeProvider
	sleeps *sleepRecorder
	store  *store.Store
	ledger *recordingLedger
}

func newHarness(t *testing.T, tweak func(*Options)) *harness {
	t.Helper()
	h := &harness{a: newFake("a"), b: newFake("b"), sleeps: &sleepRecorder{}, store: memstore.New(), ledger: &recordingLedger{}}
	opts := Options{
		Providers:         fakeRegistry{"a": h.a, "b": h.b},
		Prices:            fakePrices{},
		Store:             h.store,
		Ledger:            h.ledger,
		Sleep:             h.sleeps.sleep,
		Backoff:           Backoff{Initial: time.Millisecond, Max: 8 * time.Millisecond, Jitter: -1, MaxRetryAfter: time.Second},
		AttemptTimeout:    2 * time.Second,
		FirstTokenTimeout: 2 * time.Second,
		StreamIdleTimeout: 2 * time.Second,
	}
	if tweak != nil {
		tweak(&opts)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	return h
}

func userReq(text string, models ...string) *Request {
	return &Request{Models: models, Messages: []Message{{Role: "user", Content: []ContentBlock{{Type: "text", Text: text}}}}}
}

func intp(i int) *int { return &i }

func TestCompleteAnswersWithUsageCostsAndConversation(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "Hello there", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 500, ReasoningTokens: 100, CachedTokens: 10}})
	req := userReq("  What is\nthe capital\tof France?  ", "a/priced")
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "k1"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "a" || resp.Model != "priced" || resp.Text() != "Hello there" {
		t.Fatalf("response = %+v", resp)
	}
	if resp.Message.Role != "assistant" || resp.Message.Type != "text" || len(resp.Message.Content) != 1 || resp.Message.Content[0].Type != "text" {
		t.Fatalf("message = %+v", resp.Message)
	}
	if _, err := uuid.Parse(resp.ResponseMessageID); err != nil || !isUUID(resp.ConversationID) {
		t.Fatalf("ids %q %q", resp.ResponseMessageID, resp.ConversationID)
	}
	u := resp.Usage
	if u.PromptTokens != 1000 || u.CompletionTokens != 500 || u.TotalTokens != 1500 || u.ReasoningTokens != 100 || u.CachedTokens != 10 {
		t.Fatalf("usage = %+v", u)
	}
	if !u.Costs.PriceKnown || u.Costs.InputTokensCost != 0.001 || u.Costs.OutputTokensCost != 0.001 || u.Costs.TotalTokensCost != 0.002 {
		t.Fatalf("costs = %+v", u.Costs)
	}
	if resp.ConversationTitle != "What is the capital of France?" {
		t.Fatalf("title = %q", resp.ConversationTitle)
	}
	if len(resp.Attempts) != 1 || resp.Attempts[0].Model != "a/priced" || resp.Attempts[0].Outcome != OutcomeOK {
		t.Fatalf("attempts = %+v", resp.Attempts)
	}
	if resp.Latency < resp.TTFT || resp.TTFT < 0 {
		t.Fatalf("latency %d ttft %d", resp.Latency, resp.TTFT)
	}
	c, msgs, err := h.g.Conversation(context.Background(), "k1", resp.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if c.MessageCount != 2 || len(msgs) != 2 || msgs[0].Role != "user" || msgs[1].Role != "assistant" ||
		msgs[1].Content[0].Text != "Hello there" || msgs[1].ID != resp.ResponseMessageID || msgs[1].Model != "a/priced" {
		t.Fatalf("stored %+v %+v", c, msgs)
	}
	if e := h.ledger.all(); len(e) != 1 || e[0].Owner != "k1" || e[0].Model != "a/priced" || e[0].Usage.PromptTokens != 1000 || !e[0].Complete {
		t.Fatalf("ledger = %+v", e)
	}
}

func TestUnknownPriceIsReportedNotGuessed(t *testing.T) {
	h := newHarness(t, nil)
	resp, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/unpriced"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.Costs != (Costs{}) {
		t.Fatalf("costs = %+v, want zero and price_known false", resp.Usage.Costs)
	}
}

func TestValidation(t *testing.T) {
	h := newHarness(t, nil)
	h.a.search = false
	h.b.search = true
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name  string
		mod   func(r *Request)
		field string
		msg   string
	}{
		{"no models", func(r *Request) { r.Models = nil }, "models", "at least one"},
		{"model without provider", func(r *Request) { r.Models = []string{"gpt-4o"} }, "models[0]", "provider/model"},
		{"unknown provider", func(r *Request) { r.Models = []string{"a/x", "zz/x"} }, "models[1]", "unknown provider"},
		{"bad fallback", func(r *Request) { r.FallbackModels = []string{"nope"} }, "fallback_models[0]", "provider/model"},
		{"no messages", func(r *Request) { r.Messages = nil }, "messages", "at least one"},
		{"bad role", func(r *Request) { r.Messages[0].Role = "tool" }, "messages[0].role", "system, user or assistant"},
		{"image block", func(r *Request) { r.Messages[0].Content = []ContentBlock{{Type: "image", Text: "x"}} }, "messages[0].content[0].type", "OpenAI-compatible surfaces only"},
		{"image in a stored conversation", func(r *Request) {
			r.Messages[0].Content = []ContentBlock{imageBlock(providers.Image{URL: "https://example.com/a.png"})}
		}, "messages[0].content[0].type", "OpenAI-compatible surfaces only"},
		{"video block", func(r *Request) { r.Messages[0].Content = []ContentBlock{{Type: "video", Text: "x"}} }, "messages[0].content[0].type", "must be text"},
		{"audio block", func(r *Request) { r.Messages[0].Content = []ContentBlock{{Type: "audio", Text: "x"}} }, "messages[0].content[0].type", "OpenAI-compatible surfaces only"},
		{"no blocks", func(r *Request) { r.Messages[0].Content = nil }, "messages[0].content", "at least one"},
		{"blank content", func(r *Request) { r.Messages[0].Content[0].Text = "  \n" }, "messages[0].content", "empty"},
		{"temperature high", func(r *Request) { r.Temperature = f(1.5) }, "temperature", "between 0 and 1"},
		{"temperature negative", func(r *Request) { r.Temperature = f(-0.1) }, "temperature", "between 0 and 1"},
		{"maxTokens negative", func(r *Request) { r.MaxTokens = -1 }, "maxTokens", "negative"},
		{"maxRetries negative", func(r *Request) { r.MaxRetries = intp(-1) }, "maxRetries", "between 0 and"},
		{"maxRetries huge", func(r *Request) { r.MaxRetries = intp(1000) }, "maxRetries", "between 0 and"},
		{"conversationId", func(r *Request) { r.ConversationID = "not-a-uuid" }, "conversationId", "UUID"},
		{"search unsupported", func(r *Request) { r.Search = true }, "search", "model a/x does not support search"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := userReq("hello", "a/x")
			c.mod(r)
			_, err := h.g.Complete(context.Background(), Scope{}, r)
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want *ValidationError", err)
			}
			if ve.Field != c.field || !strings.Contains(ve.Message, c.msg) {
				t.Fatalf("got %q / %q, want field %q containing %q", ve.Field, ve.Message, c.field, c.msg)
			}
			if unknown := errors.Is(err, providers.ErrUnknownProvider); unknown != (c.name == "unknown provider") {
				t.Fatalf("errors.Is(%v, providers.ErrUnknownProvider) = %v", err, unknown)
			}
		})
	}
	if n := h.a.callCount("x"); n != 0 {
		t.Fatalf("invalid requests reached the upstream %d times", n)
	}
	// Valid edge values pass.
	r := userReq("hello", "b/x")
	r.Temperature, r.MaxRetries, r.Search = f(1), intp(0), true
	if _, err := h.g.Complete(context.Background(), Scope{}, r); err != nil {
		t.Fatal(err)
	}
	if !h.b.lastRequest().Search {
		t.Fatal("search flag not passed to the provider")
	}
}

func TestRetriesWithExponentialBackoffThenSucceeds(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{err: upstreamErr(providers.KindOverloaded, 500, 0)}, step{text: "ok"})
	resp, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "ok" || len(resp.Attempts) != 3 || resp.Attempts[0].Kind != "overloaded" || resp.Attempts[2].Outcome != OutcomeOK {
		t.Fatalf("resp = %+v", resp)
	}
	if w := h.sleeps.all(); !slices.Equal(w, []time.Duration{time.Millisecond, 2 * time.Millisecond}) {
		t.Fatalf("waits = %v, want 1ms then 2ms", w)
	}
}

func TestBackoffJitterStaysWithinBounds(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: 300 * time.Millisecond, Jitter: 0.5, MaxRetryAfter: time.Second}
	for retry, want := range []time.Duration{100, 200, 300, 300} {
		want *= time.Millisecond
		for range 50 {
			d, ok := b.delay(retry, 0)
			if !ok || d > want || d < want/2 {
				t.Fatalf("retry %d: delay %v outside [%v, %v]", retry, d, want/2, want)
			}
		}
	}
	if d, ok := b.delay(0, 700*time.Millisecond); !ok || d != 700*time.Millisecond {
		t.Fatalf("Retry-After not honoured: %v %v", d, ok)
	}
	if _, ok := b.delay(0, 2*time.Second); ok {
		t.Fatal("Retry-After above the bound should not be waited for")
	}
}

func TestRetryAfterIsHonouredAndBounded(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindRateLimited, 429, 300*time.Millisecond)}, step{text: "ok"})
	if _, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/m")); err != nil {
		t.Fatal(err)
	}
	if w := h.sleeps.all(); !slices.Equal(w, []time.Duration{300 * time.Millisecond}) {
		t.Fatalf("waits = %v, want the Retry-After of 300ms", w)
	}

	// A Retry-After above MaxRetryAfter moves on to the fallback without waiting.
	h = newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindRateLimited, 429, time.Hour)})
	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"b/m"}
	resp, err := h.g.Complete(context.Background(), Scope{}, r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "b" || h.a.callCount("m") != 1 || len(h.sleeps.all()) != 0 {
		t.Fatalf("provider %s, primary calls %d, waits %v", resp.Provider, h.a.callCount("m"), h.sleeps.all())
	}

	// A wait that would pass the caller's deadline is not taken either.
	h = newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindRateLimited, 429, 900*time.Millisecond)})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	resp, err = h.g.Complete(ctx, Scope{}, r)
	if err != nil || resp.Provider != "b" || len(h.sleeps.all()) != 0 {
		t.Fatalf("err %v, waits %v", err, h.sleeps.all())
	}
}

func TestNonRetryableGoesStraightToFallback(t *testing.T) {
	for _, kind := range []providers.ErrorKind{providers.KindAuth, providers.KindContextLength, providers.KindBadRequest, providers.KindModelNotFound} {
		t.Run(kind.String(), func(t *testing.T) {
			h := newHarness(t, nil)
			h.a.on("m", step{err: upstreamErr(kind, 400, 0)})
			r := userReq("hi", "a/m")
			r.FallbackModels = []string{"b/m"}
			resp, err := h.g.Complete(context.Background(), Scope{}, r)
			if err != nil {
				t.Fatal(err)
			}
			if h.a.callCount("m") != 1 || resp.Provider != "b" || len(h.sleeps.all()) != 0 {
				t.Fatalf("primary calls %d, provider %s, waits %v", h.a.callCount("m"), resp.Provider, h.sleeps.all())
			}
			if resp.Attempts[0].Kind != kind.String() {
				t.Fatalf("attempts = %+v", resp.Attempts)
			}
		})
	}
}

// TestContentFilterIsNotOverridden: a provider's content-policy rejection ends the request;
// the fallback model is not asked (a policy decision must not be silently overridden).
func TestContentFilterIsNotOverridden(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindContentFilter, 400, 0)})
	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"b/m"}
	_, err := h.g.Complete(context.Background(), Scope{}, r)
	var cf *ContentFilterError
	if !errors.As(err, &cf) || !errors.Is(err, ErrContentFiltered) || cf.Model != "a/m" || len(cf.Attempts) != 1 {
		t.Fatalf("err = %v, want a *ContentFilterError for a/m", err)
	}
	if h.b.callCount("m") != 0 || h.a.callCount("m") != 1 {
		t.Fatalf("primary calls %d, fallback calls %d: the filter was overridden", h.a.callCount("m"), h.b.callCount("m"))
	}
	// Every model unknown: ModelNotFound (the surface's 404).
	h = newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindModelNotFound, 404, 0)})
	h.b.on("m", step{err: upstreamErr(providers.KindModelNotFound, 404, 0)})
	_, err = h.g.Complete(context.Background(), Scope{}, r)
	var af *AllFailedError
	if !errors.As(err, &af) || !af.ModelNotFound() || h.a.callCount("m") != 1 {
		t.Fatalf("err = %v (primary calls %d), want all failed with model not found, no retry", err, h.a.callCount("m"))
	}
}

func TestAllFailedReportsEveryAttempt(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	h.b.on("m", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"b/m"}
	r.MaxRetries = intp(1)
	_, err := h.g.Complete(context.Background(), Scope{}, r)
	var af *AllFailedError
	if !errors.As(err, &af) || !errors.Is(err, ErrAllFailed) {
		t.Fatalf("err = %v", err)
	}
	got := []string{}
	for _, a := range af.Attempts {
		got = append(got, a.Model+":"+a.Kind)
	}
	if want := []string{"a/m:overloaded", "a/m:overloaded", "b/m:auth"}; !slices.Equal(got, want) {
		t.Fatalf("attempts = %v, want %v", got, want)
	}
	// The attempts' own errors are reachable: the first is the primary's overload.
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindOverloaded || len(af.Unwrap()) != 3 {
		t.Fatalf("errors.As(*providers.Error) = %v, %d unwrapped: want the attempts' upstream errors", pe, len(af.Unwrap()))
	}
	if !strings.Contains(err.Error(), "b/m") || !strings.Contains(err.Error(), "auth") {
		t.Fatalf("message %q should name models and reasons", err)
	}
	// Nothing is stored for a failed request.
	if es, _ := h.store.List(context.Background(), store.Conversations, store.ListOptions{}); len(es) != 0 {
		t.Fatalf("%d conversations stored after a failure", len(es))
	}
}

func TestOrderPrimariesThenFallbacks(t *testing.T) {
	h := newHarness(t, nil)
	fail := step{err: upstreamErr(providers.KindAuth, 401, 0)}
	h.a.on("1", fail).on("2", fail)
	h.b.on("3", fail)
	r := userReq("hi", "a/1", "a/2")
	r.FallbackModels = []string{"b/3", "b/4"}
	resp, err := h.g.Complete(context.Background(), Scope{}, r)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, a := range resp.Attempts {
		order = append(order, a.Model)
	}
	if want := []string{"a/1", "a/2", "b/3", "b/4"}; !slices.Equal(order, want) {
		t.Fatalf("order = %v, want %v", order, want)
	}
}

type reverseRanker struct{ calls int }

func (r *reverseRanker) Rank(_ context.Context, _ []providers.Message, models []string) ([]string, error) {
	r.calls++
	slices.Reverse(models)
	return models, nil
}

type brokenRanker struct{}

func (brokenRanker) Rank(context.Context, []providers.Message, []string) ([]string, error) {
	return []string{"a/other", "a/1"}, nil
}

func TestRankerOrdersPrimariesOnly(t *testing.T) {
	rk := &reverseRanker{}
	h := newHarness(t, func(o *Options) { o.Ranker = rk })
	r := userReq("hi", "a/1", "a/2")
	r.FallbackModels = []string{"b/3"}
	resp, err := h.g.Complete(context.Background(), Scope{}, r)
	if err != nil || resp.Model != "2" {
		t.Fatalf("resp %+v err %v, want ranked a/2 first", resp, err)
	}
	// A single model is not ranked.
	if _, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/1")); err != nil || rk.calls != 1 {
		t.Fatalf("ranker calls %d", rk.calls)
	}
	// A ranking that is not a permutation is ignored.
	h = newHarness(t, func(o *Options) { o.Ranker = brokenRanker{} })
	resp, err = h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/1", "a/2"))
	if err != nil || resp.Model != "1" {
		t.Fatalf("resp %+v err %v, want given order", resp, err)
	}
}

func TestConversationContinues(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	h.a.on("m", step{text: "Paris."}, step{text: "About 2 million."})
	first, err := h.g.Complete(ctx, Scope{Owner: "alice"}, userReq("Capital of France?", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	r := userReq("Population?", "a/m")
	r.ConversationID = first.ConversationID
	second, err := h.g.Complete(ctx, Scope{Owner: "alice"}, r)
	if err != nil {
		t.Fatal(err)
	}
	if second.ConversationID != first.ConversationID || second.ConversationTitle != "Capital of France?" {
		t.Fatalf("second = %+v", second)
	}
	sent := h.a.lastRequest().Messages
	want := []providers.Message{{Role: "user", Content: "Capital of France?"}, {Role: "assistant", Content: "Paris."}, {Role: "user", Content: "Population?"}}
	if !reflect.DeepEqual(sent, want) {
		t.Fatalf("sent %+v, want %+v", sent, want)
	}
	_, msgs, err := h.g.Conversation(ctx, "alice", first.ConversationID)
	if err != nil || len(msgs) != 4 || msgs[3].Content[0].Text != "About 2 million." || msgs[3].Seq != 3 {
		t.Fatalf("msgs %+v err %v", msgs, err)
	}

	// UUIDs compare case-insensitively: the upper-case form continues the same conversation.
	r3 := userReq("Area?", "a/m")
	r3.ConversationID = strings.ToUpper(first.ConversationID)
	h.a.on("m", step{text: "105 km²."})
	third, err := h.g.Complete(ctx, Scope{Owner: "alice"}, r3)
	if err != nil || third.ConversationID != first.ConversationID {
		t.Fatalf("upper-case id: err %v, conversation %q", err, third.ConversationID)
	}
	if _, msgs, err := h.g.Conversation(ctx, "alice", strings.ToUpper(first.ConversationID)); err != nil || len(msgs) != 6 {
		t.Fatalf("upper-case id: %d messages, err %v", len(msgs), err)
	}

	// Another owner's conversation, or one that does not exist, is not found and untouched.
	r.ConversationID = first.ConversationID
	if _, err := h.g.Complete(ctx, Scope{Owner: "mallory"}, r); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other owner: err = %v", err)
	}
	r.ConversationID = uuid.NewString()
	if _, err := h.g.Complete(ctx, Scope{Owner: "alice"}, r); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing conversation: err = %v", err)
	}
	if _, msgs, _ := h.g.Conversation(ctx, "alice", first.ConversationID); len(msgs) != 6 {
		t.Fatalf("conversation changed: %d messages", len(msgs))
	}
	if h.a.callCount("m") != 3 {
		t.Fatalf("upstream called %d times, want 3", h.a.callCount("m"))
	}
}

func TestTitle(t *testing.T) {
	long := strings.Repeat("word ", 30)
	cases := map[string]string{
		"  hello\n\nworld\t ": "hello world",
		"a\x00b":              "ab",
		"":                    "",
	}
	for in, want := range cases {
		if got := Title(in); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
	got := Title(long)
	if n := len([]rune(got)); n > MaxTitleLength || !strings.HasSuffix(got, "…") || strings.Contains(got, "wor…") {
		t.Errorf("Title(long) = %q (%d runes)", got, n)
	}
	if got := Title(strings.Repeat("é", 100)); len([]rune(got)) != MaxTitleLength {
		t.Errorf("Title of one long word = %q", got)
	}
	if got := titleFor([]Message{{Role: "system", Content: []ContentBlock{{Type: "text", Text: "be brief"}}}, {Role: "user", Content: []ContentBlock{{Type: "text", Text: "Hi!"}}}}); got != "Hi!" {
		t.Errorf("titleFor = %q, want the first user message", got)
	}
}

func TestBudget(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	h.a.on("m", step{text: "ok", usage: providers.Usage{PromptTokens: 60, CompletionTokens: 40}})
	b := NewBudget(BudgetLimits{AllowedModels: []string{"a/m"}, MaxTokens: 250, MaxCalls: 10})
	scope := Scope{Owner: "job", Tag: "job-1", Budget: b}

	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"b/m"}
	if _, err := h.g.Complete(ctx, scope, r); !errors.Is(err, ErrModelNotAllowed) || !strings.Contains(err.Error(), "b/m") {
		t.Fatalf("err = %v, want ErrModelNotAllowed naming b/m", err)
	}
	r = userReq("hi", "a/m")
	r.MaxTokens = 1000
	for i := range 3 {
		if _, err := h.g.Complete(ctx, scope, r); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i == 2 && h.a.lastRequest().MaxTokens != 50 {
			t.Fatalf("maxTokens sent = %d, want capped to the 50 tokens left", h.a.lastRequest().MaxTokens)
		}
	}
	if u := b.Used(context.Background()); u.Calls != 3 || u.Tokens != 300 {
		t.Fatalf("used = %+v", u)
	}
	if _, err := h.g.Complete(ctx, scope, r); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("err = %v, want ErrBudgetExceeded", err)
	}
	if h.a.callCount("m") != 3 {
		t.Fatalf("upstream called %d times", h.a.callCount("m"))
	}
	if e := h.ledger.all(); len(e) != 3 || e[0].Tag != "job-1" {
		t.Fatalf("ledger = %+v", e)
	}

	calls := NewBudget(BudgetLimits{MaxCalls: 1})
	if _, err := h.g.Complete(ctx, Scope{Budget: calls}, r); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(ctx, Scope{Budget: calls}, r); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestClientCancelStopsUpstream(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.g.Complete(ctx, Scope{}, userReq("hi", "a/m"))
		done <- err
	}()
	for h.a.callCount("m") == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	if h.a.canceled != 1 || h.a.calls["m"] != 1 {
		t.Fatalf("upstream cancelled %d times, called %d times", h.a.canceled, h.a.calls["m"])
	}
}

// TestAttemptTimeoutFallsOver: a model that times out is left for the fallback at once,
// without retries (a silent model rarely answers the second time); the last model left
// is retried.
func TestAttemptTimeoutFallsOver(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.AttemptTimeout = 20 * time.Millisecond })
	h.a.on("m", step{hang: true})
	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"b/m"}
	r.MaxRetries = intp(1)
	resp, err := h.g.Complete(context.Background(), Scope{}, r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "b" || len(resp.Attempts) != 2 || resp.Attempts[0].Kind != "timeout" || h.a.callCount("m") != 1 {
		t.Fatalf("resp = %+v", resp.Attempts)
	}

	h = newHarness(t, func(o *Options) { o.AttemptTimeout = 20 * time.Millisecond })
	h.a.on("m", step{hang: true}, step{text: "late"})
	r.FallbackModels = nil
	resp, err = h.g.Complete(context.Background(), Scope{}, r)
	if err != nil || len(resp.Attempts) != 2 || resp.Attempts[0].Kind != "timeout" {
		t.Fatalf("err %v, attempts %+v", err, resp)
	}
}

func TestNewNeedsProviders(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrNoProviders) {
		t.Fatalf("err = %v", err)
	}
}

func TestStoreOptional(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Store = nil })
	resp, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/m"))
	if err != nil || !isUUID(resp.ConversationID) {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	r := userReq("hi", "a/m")
	r.ConversationID = resp.ConversationID
	if _, err := h.g.Complete(context.Background(), Scope{}, r); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
}

// The providers package's types plug straight into the gateway.
var (
	_ ProviderLookup = (*providers.Registry)(nil)
	_ PriceCatalogue = (*providers.Catalog)(nil)
)

func TestRealCatalogueCosts(t *testing.T) {
	openai := newFake("openai").on("gpt-4o-mini", step{text: "ok", usage: providers.Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}})
	g, err := New(Options{Providers: providers.NewRegistry(openai), Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Complete(context.Background(), Scope{}, userReq("hi", "openai/gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Usage.Costs
	// gpt-4o-mini lists at $0.15 / 1M input and $0.60 / 1M output tokens.
	if !c.PriceKnown || c.InputTokensCost < 0.1499 || c.InputTokensCost > 0.1501 || c.OutputTokensCost < 0.5999 || c.OutputTokensCost > 0.6001 ||
		c.TotalTokensCost != c.InputTokensCost+c.OutputTokensCost {
		t.Fatalf("costs = %+v", c)
	}
}

// Concurrent turns on one conversation each land whole, in distinct slots, on both
// backends' guarantee that Update is atomic.
func TestConcurrentTurnsOnOneConversation(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	first, err := h.g.Complete(ctx, Scope{Owner: "o"}, userReq("start", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() {
			r := userReq(fmt.Sprintf("turn %d", i), "a/m")
			r.ConversationID = first.ConversationID
			_, err := h.g.Complete(ctx, Scope{Owner: "o"}, r)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c, msgs, err := h.g.Conversation(ctx, "o", first.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if c.MessageCount != 2+2*n || len(msgs) != 2+2*n {
		t.Fatalf("count %d, %d messages; want %d", c.MessageCount, len(msgs), 2+2*n)
	}
	for i, m := range msgs {
		if m.Seq != i {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			t.Fatalf("message %d is %s, want %s (turns interleaved)", i, m.Role, want)
		}
	}
}

// TestLibraryTopPAndStop: a library caller sets TopP and Stop on a Request; they reach the
// upstream, and out-of-range values are refused naming the field.
func TestLibraryTopPAndStop(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "ok"})
	r := userReq("hi", "a/m")
	p := 0.5
	r.TopP, r.Stop = &p, []string{"END"}
	if _, err := h.g.Complete(context.Background(), Scope{}, r); err != nil {
		t.Fatal(err)
	}
	if sent := h.a.lastRequest(); sent.TopP == nil || *sent.TopP != 0.5 || len(sent.Stop) != 1 || sent.Stop[0] != "END" {
		t.Fatalf("sent top_p %v stop %v", sent.TopP, sent.Stop)
	}
	bad := 1.5
	r.TopP = &bad
	var ve *ValidationError
	if _, err := h.g.Complete(context.Background(), Scope{}, r); !errors.As(err, &ve) || ve.Field != "top_p" {
		t.Fatalf("top_p 1.5: %v", err)
	}
	r.TopP, r.Stop = nil, strings.Split("abcdefghijklmnopq", "") // 17
	if _, err := h.g.Complete(context.Background(), Scope{}, r); !errors.As(err, &ve) || ve.Field != "stop" {
		t.Fatalf("17 stop sequences: %v", err)
	}
}

func TestNilRequestIsInvalid(t *testing.T) {
	h := newHarness(t, nil)
	if _, err := h.g.Complete(context.Background(), Scope{}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Complete(nil) = %v, want ErrInvalid", err)
	}
	if _, err := h.g.Stream(context.Background(), Scope{}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Stream(nil) = %v, want ErrInvalid", err)
	}
}

func TestZeroGatewayIsAnError(t *testing.T) {
	var g Gateway
	if _, err := g.Complete(context.Background(), Scope{}, userReq("hi", "a/m")); !errors.Is(err, ErrZeroGateway) {
		t.Errorf("Complete on a zero Gateway: %v", err)
	}
	if _, err := g.Stream(context.Background(), Scope{}, userReq("hi", "a/m")); !errors.Is(err, ErrZeroGateway) {
		t.Errorf("Stream on a zero Gateway: %v", err)
	}
	if g.HasModel("a/m") {
		t.Error("a zero Gateway has a model")
	}
	if len(g.BreakerStates()) != 0 {
		t.Error("a zero Gateway has breakers")
	}
}

// Library callers use tools like the OpenAI surface: a tool result turn goes back, and the
// OpenAI options are checked as they set them.
func TestLibraryToolResultsAndOptions(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "it is sunny"})
	r := userReq("weather?", "a/m")
	r.Tools = []providers.Tool{{Name: "weather"}}
	r.Messages = append(r.Messages,
		Message{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "c1", Name: "weather", Arguments: "{}"}}},
		Message{Role: "tool", ToolCallID: "c1", Content: []ContentBlock{{Type: "text", Text: "sunny"}}})
	if _, err := h.g.Complete(context.Background(), Scope{}, r); err != nil {
		t.Fatalf("tool result from a library caller: %v", err)
	}
	bad := userReq("x", "a/m")
	pen := 5.0
	bad.FrequencyPenalty = &pen
	var ve *ValidationError
	if _, err := h.g.Complete(context.Background(), Scope{}, bad); !errors.As(err, &ve) || ve.Field != "frequency_penalty" {
		t.Errorf("frequency_penalty 5 on a library request: %v", err)
	}
}
