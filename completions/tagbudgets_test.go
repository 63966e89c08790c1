package completions

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeTagBudgets is a test TagBudgets: fixed accounts by owner/tag, recording the tags it
// was asked about.
type fakeTagBudgets struct {
	accounts map[string]*Budget
	mu       sync.Mutex
	asked    [][]string
}

func (f *fakeTagBudgets) TagBudgets(_ context.Context, owner string, tags []string) (map[string]*Budget, error) {
	f.mu.Lock()
	f.asked = append(f.asked, slices.Clone(tags))
	f.mu.Unlock()
	out := map[string]*Budget{}
	for _, t := range tags {
		if b := f.accounts[owner+"/"+t]; b != nil {
			out[t] = b
		}
	}
	return out, nil
}

// TestTagBudgets: a request naming a tag with an account (Options.TagBudgets) draws on it
// besides the caller's own: charged to both, refused naming the tag (kind "tag") once the
// tag's account is spent, taking nothing from the caller's; the operator's own requests
// (no Budget) are bounded by it too; a request without the tag, another owner's request
// with it, and a batch's own tag are not; streams draw on it as Complete does.
func TestTagBudgets(t *testing.T) {
	ctx := context.Background()
	tags := &fakeTagBudgets{accounts: map[string]*Budget{"op/eng": NewBudget(BudgetLimits{MaxCostUSD: 0.005})}}
	h := newHarness(t, func(o *Options) { o.TagBudgets = tags })
	h.a.on("priced", step{text: "hi", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}})
	tagged := func(ts ...string) *Request { r := userReq("hi", "a/priced"); r.Tags = ts; return r }
	key := NewBudget(BudgetLimits{MaxCostUSD: 1})
	eng := tags.accounts["op/eng"]

	if _, err := h.g.Complete(ctx, Scope{Owner: "op", Budget: key}, tagged("eng", "other")); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Budget{"key": key, "tag": eng} {
		if u := b.Used(ctx); u.Calls != 1 || u.CostUSD < 0.0029 {
			t.Fatalf("the %s's account after one tagged request: %+v", name, u)
		}
	}
	st, err := h.g.Stream(ctx, Scope{Owner: "op"}, tagged("eng")) // the operator: no Budget of its own
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Recv(); err != nil {
			break
		}
	}
	st.Close()
	if u := eng.Used(ctx); u.Calls != 2 {
		t.Fatalf("the tag's account after a stream of the operator: %+v", u)
	}
	_, err = h.g.Complete(ctx, Scope{Owner: "op", Budget: key}, tagged("eng"))
	var be *BudgetExceededError
	if !errors.As(err, &be) || be.Kind != TagBudgetKind || be.Name != "eng" || be.Limits.MaxCostUSD != 0.005 {
		t.Fatalf("a request of a spent tag: %v, want its refusal naming tag eng", err)
	}
	if u := key.Used(ctx); u.Calls != 1 {
		t.Errorf("the key took a call of the refused request: %+v", u)
	}
	for _, c := range []struct {
		owner string
		tags  []string
	}{{"op", nil}, {"op", []string{"other"}}, {"someone", []string{"eng"}}, {"op", []string{BatchTagPrefix + "b1"}}} {
		if _, err := h.g.Complete(ctx, Scope{Owner: c.owner, Budget: key}, tagged(c.tags...)); err != nil {
			t.Errorf("owner %s tags %v: %v", c.owner, c.tags, err)
		}
	}
	for _, asked := range tags.asked {
		if slices.ContainsFunc(asked, isBatchTag) {
			t.Errorf("a batch's tag was looked up: %v", asked)
		}
	}
}
