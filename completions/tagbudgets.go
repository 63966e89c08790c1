package completions

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/switchyard-ai/switchyard/store"
)

// TagBudgetKind is the kind (BudgetExceededError.Kind, BudgetGoneError.Kind) of a tag's
// account (Options.TagBudgets): its Name is the tag.
const TagBudgetKind = "tag"

// TagBudgets finds the accounts of a request's tags: LiteLLM's tag budgets, where every
// request naming a tag that has a budget (its body's tags or metadata.tags, its
// x-litellm-tags header) also draws on that tag's account, which is reserved, charged and
// may refuse the request as a team's does. Implementations must be safe for concurrent use.
type TagBudgets interface {
	// TagBudgets returns owner's accounts of those of tags that have one, by tag; a tag
	// without one is left out. An error refuses the request.
	TagBudgets(ctx context.Context, owner string, tags []string) (map[string]*Budget, error)
}

// withTagBudgets is scope with its requests also drawing on the accounts of tags
// (Options.TagBudgets), in the tags' sorted order; scope unchanged without TagBudgets, without
// tags that have an account, or with tags the request is refused for anyway (CheckTags).
// A batch's own tag (batch:<id>) is never looked up.
func (g *Gateway) withTagBudgets(ctx context.Context, scope Scope, tags []string) (Scope, error) {
	if g.opts.TagBudgets == nil || len(tags) == 0 || CheckTags("tags", tags) != nil {
		return scope, nil
	}
	named := tags
	if slices.ContainsFunc(tags, isBatchTag) {
		named = slices.DeleteFunc(slices.Clone(tags), isBatchTag)
		if len(named) == 0 {
			return scope, nil
		}
	}
	accounts, err := g.opts.TagBudgets.TagBudgets(ctx, scope.Owner, named)
	if err != nil {
		return scope, fmt.Errorf("completions: the accounts of the request's tags: %w", err)
	}
	if len(accounts) == 0 {
		return scope, nil
	}
	b := scope.Budget
	if b == nil { // a caller without limits: an unbounded account of this request only
		b = NewBudget(BudgetLimits{})
	}
	// In the tags' own order, not the request's: the spend gate holds each account while it
	// waits for the next (spendGate.admit), so two requests naming the same tags in opposite
	// orders must not each hold the one the other waits for.
	seen := map[string]bool{}
	for _, t := range slices.Sorted(slices.Values(named)) {
		if a := accounts[t]; a != nil && !seen[t] {
			seen[t] = true
			b = b.Within(a, TagBudgetKind, t)
		}
	}
	scope.Budget = b
	return scope, nil
}

// TagBudgetID is the store.Budgets id of owner's account of tag (StoredTagBudgets reads it;
// whoever gives a tag a budget stores it with PutSharedBudget).
func TagBudgetID(owner, tag string) string { return "tag/" + owner + "/" + tag }

// StoredTagBudgets is the TagBudgets of accounts kept in Store under TagBudgetID (shared
// by every process on the store): a tag without a stored account has no budget. Each
// request naming tags reads one record per tag.
type StoredTagBudgets struct {
	Store *store.Store
}

// TagBudgets implements TagBudgets.
func (s StoredTagBudgets) TagBudgets(ctx context.Context, owner string, tags []string) (map[string]*Budget, error) {
	if s.Store == nil {
		return nil, nil
	}
	var out map[string]*Budget
	for _, t := range tags {
		b, err := LoadSharedBudget(ctx, s.Store, TagBudgetID(owner, t))
		switch {
		case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
			continue
		case err != nil:
			return nil, err
		}
		if out == nil {
			out = map[string]*Budget{}
		}
		out[t] = b
	}
	return out, nil
}
