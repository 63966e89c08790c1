package completions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// BudgetLimits bound what a scoped key (an optimization job's key, a virtual key an
// operator issued) may spend through the gateway. Zero values mean "no limit".
type BudgetLimits struct {
	// AllowedModels lists the models the key may call: "provider/model" names, bare names
	// (allowing the model they resolve to), model group names (allowing the group's
	// models) and, as LiteLLM's keys hold them, patterns with '*' ("openai/*", "my-ft-*",
	// "*": the whole name asked, or the provider/model it resolves to, matches, '*' any run
	// of characters); empty allows all.
	AllowedModels []string `json:"allowed_models,omitempty"`
	// MaxTokens caps the total (prompt + completion) tokens of all answered requests. It is
	// checked before each request, whose maxTokens is then capped to what is left, so the
	// total can pass the cap by at most one request's prompt.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxCalls caps the number of completion requests (not upstream retries); a request
	// counts once it passed validation, whether or not an upstream answered it.
	MaxCalls int64 `json:"max_calls,omitempty"`
	// MaxCostUSD caps the USD cost of all answered requests, as the gateway prices them. It
	// is checked before each request, so the total can pass it by one request's cost; of
	// requests sent at once, the gateway admits only as many as the budget's mean cost per
	// answered request says it can pay for (per process, or, for a Budget kept in the store
	// with Options.SharedLimits, over every process sharing it).
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	// ResetEvery, when positive, starts the account afresh (nothing used) every ResetEvery
	// from its first use: a monthly budget is 30 days. Zero: the limits are for all time.
	ResetEvery time.Duration `json:"reset_every,omitempty"`
	// TokensPerMinute caps the tokens the answers of the last minute used, counted per
	// process (LiteLLM's tpm_limit); a request over it fails with a *TokenRateError.
	TokensPerMinute int64 `json:"tokens_per_minute,omitempty"`
	// Blocked refuses every request with ErrBudgetExceeded: a budget of nothing (LiteLLM's
	// max_budget 0), kept apart from MaxCostUSD, whose zero means no bound.
	Blocked bool `json:"blocked,omitempty"`
	// SoftCostUSD is a USD mark that never blocks (LiteLLM's soft_budget): reaching it is
	// reported once per period (Options.BudgetAlert), as are 85% and 100% of MaxCostUSD.
	SoftCostUSD float64 `json:"soft_cost_usd,omitempty"`
	// CostAboveOnly refuses on MaxCostUSD only once the spend is above it, not when it
	// equals it: LiteLLM's rule for its proxy-wide max_budget (global_proxy_spend >
	// max_budget), where its keys and teams refuse at spend >= max_budget (the default).
	CostAboveOnly bool `json:"cost_above_only,omitempty"`
	// Models bounds the account's use of single models, by the name a request asks for
	// (LiteLLM's model_max_budget, model_rpm_limit and model_tpm_limit of a key): a request
	// for a model whose entry is spent or at its rate is refused, the account's other models
	// unaffected. Only the account's own: a parent's Models are not consulted.
	Models map[string]ModelLimits `json:"models,omitempty"`
}

// BudgetUsage is what a Budget has consumed so far (in its current period, with
// BudgetLimits.ResetEvery).
type BudgetUsage struct {
	Calls   int64   `json:"calls"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// PeriodStart is when the current period began (zero until the first use, and always
	// without ResetEvery).
	PeriodStart time.Time `json:"period_start,omitzero"`
	// Answered counts the requests that were answered (one each, however many attempts a
	// hedge or a continuation charged): the spend gate's mean cost is per answered request.
	Answered int64 `json:"answered,omitempty"`
	// AnsweredKept says Answered is kept for the account: set by every charge and every
	// new period of this build. A record without it is one from before Answered was kept,
	// whose past requests its next charge counts as answered.
	AnsweredKept bool `json:"answered_kept,omitempty"`
	// Crossed lists the thresholds (ThresholdSoft, ThresholdNear, ThresholdMax) the cost
	// reached in this period: each is reported once, by the charge that reached it (in
	// the same store transaction, so one process of those sharing the account reports it).
	Crossed BudgetCrossings `json:"crossed,omitzero"`
	// Models is what each entry of BudgetLimits.Models spent, each in its own period: it
	// is charged in the same store transaction as the account's own spend, from the same
	// charges, and is not reset with the account's period.
	Models map[string]ModelUsage `json:"models,omitempty"`
}

// Budget is a concurrency-safe spending account attached to a request through Scope. One
// Budget is shared by every request made with the same scoped key. A Budget from
// NewBudget keeps its usage in memory (one process); one from CreateSharedBudget or
// LoadSharedBudget keeps it in the store, so every process on the same store (gateway
// replicas behind a load balancer) meters one account.
type Budget struct {
	limits BudgetLimits

	mu   sync.Mutex
	used BudgetUsage

	// st and id locate the shared account (nil st: in memory).
	st *store.Store
	id string

	now func() time.Time // the clock of ResetEvery; nil: time.Now

	// parents are the accounts b sits inside (SetParent's, a team's, AddParent's, a user's,
	// then Within's, an end user's): every call b reserves and every charge is taken from each, and any refuses.
	// Each is named in its refusals (a *BudgetExceededError).
	parents []enclosing

	// origin, for a Budget from Within, is the Budget whose own account it is (its usage
	// in memory; nil: b's own).
	origin *Budget

	// create, for a Budget from PendingSharedBudget, stores the records that go with its
	// account, in the transaction of the first call reserved on it, which stores the account.
	create func(ctx context.Context, tx store.Tx) error
}

// enclosing is an account a Budget sits inside, with what its refusals call it.
type enclosing struct {
	b          *Budget
	kind, name string
}

// sharedBudget is a shared Budget's record in store.Budgets.
type sharedBudget struct {
	Limits BudgetLimits `json:"limits"`
	Used   BudgetUsage  `json:"used"`
	// InFlight are the requests the processes sharing the account (Options.SharedLimits)
	// admitted and have not ended: one lease per process (spendlease.go).
	InFlight []spendLease `json:"in_flight,omitempty"`
	// Applied are the ids of the last pending charges applied to the account (at most
	// maxAppliedCharges; pendingcharges.go), so that none is applied twice.
	Applied []string `json:"applied_charges,omitempty"`
}

// sharedBudgetUsed is the part of a shared Budget's record (sharedBudget) Used reads: its
// usage, without the limits, leases and applied charges' ids a whole record's decoding
// would allocate.
type sharedBudgetUsed struct {
	Used BudgetUsage `json:"used"`
}

// CreateSharedBudget stores a new account id with limits l and nothing used, and returns
// the Budget on it. Each reserved call and each charge is then one store transaction, so
// processes sharing the store never both take the last call.
func CreateSharedBudget(ctx context.Context, st *store.Store, id string, l BudgetLimits) (*Budget, error) {
	if err := PutSharedBudget(ctx, st, id, l); err != nil {
		return nil, err
	}
	return &Budget{limits: l, st: st, id: id}, nil
}

// PutSharedBudget stores a new account id with limits l and nothing used through w (a
// store.Tx, to create it together with the records that refer to it); LoadSharedBudget
// then returns a Budget on it.
func PutSharedBudget(ctx context.Context, w store.Writer, id string, l BudgetLimits) error {
	l.AllowedModels, l.Models = slices.Clone(l.AllowedModels), maps.Clone(l.Models)
	if err := store.PutJSON(ctx, w, store.Budgets, id, sharedBudget{Limits: l}); err != nil {
		return fmt.Errorf("completions: create budget %s: %w", id, err)
	}
	return nil
}

// LoadSharedBudget returns the Budget on the stored account id (from CreateSharedBudget in
// any process), or an error matching store.ErrNotFound once it was deleted.
func LoadSharedBudget(ctx context.Context, st *store.Store, id string) (*Budget, error) {
	rec, err := store.GetJSON[sharedBudget](ctx, st, store.Budgets, id)
	if err != nil {
		return nil, fmt.Errorf("completions: budget %s: %w", id, err)
	}
	return &Budget{limits: rec.Limits, st: st, id: id}, nil
}

// PendingSharedBudget returns a Budget on the account id that is not stored yet (one made
// on first sight: an end user's), with no limits. The first call reserved on it, alone or
// with the Budgets it is Within, stores it with that call used, and calls create (nil:
// none) to store the records that go with it, in the same store transaction: a request
// refused before its call is reserved (a spent or blocked key, a model not allowed, a bad
// request) stores nothing. Found stored by then (made meanwhile), the stored account and
// its limits are used. From then on it is as LoadSharedBudget's.
func PendingSharedBudget(st *store.Store, id string, create func(ctx context.Context, tx store.Tx) error) *Budget {
	if create == nil {
		create = func(context.Context, store.Tx) error { return nil }
	}
	return &Budget{st: st, id: id, create: create}
}

// readToReserve reads x's stored account in tx for a call to be reserved on it: a
// PendingSharedBudget's account not stored yet is a new one (its records stored by create
// in tx; the caller writes the account). limits are what the call is held to: the stored
// limits of a pending account, else x's.
func (x *Budget) readToReserve(ctx context.Context, tx store.Tx) (rec sharedBudget, limits BudgetLimits, err error) {
	rec, err = store.GetJSON[sharedBudget](ctx, tx, store.Budgets, x.id)
	switch {
	case errors.Is(err, store.ErrNotFound) && x.create != nil:
		if err := x.create(ctx, tx); err != nil {
			return rec, limits, fmt.Errorf("completions: budget %s: %w", x.id, err)
		}
		return sharedBudget{}, BudgetLimits{}, nil
	case errors.Is(err, store.ErrNotFound):
		return rec, limits, &BudgetGoneError{ID: x.id}
	case err != nil:
		return rec, limits, fmt.Errorf("completions: budget %s: %w", x.id, err)
	case x.create != nil:
		return rec, rec.Limits, nil
	}
	return rec, x.limits, nil
}

// BudgetLocks names the stored accounts ids to Store.UpdateLocked: every request writes
// its accounts (a proxy-wide one, every request of every key), so on PostgreSQL their
// writers wait for each other instead of aborting each other past the store's retries.
// An operator's transaction that writes accounts (PutSharedBudget, SetSharedBudgetLimits,
// a delete) names them the same way, so that it and the requests' charges wait for one
// another rather than abort one another.
func BudgetLocks(ids ...string) []store.Ref {
	refs := make([]store.Ref, len(ids))
	for i, id := range ids {
		refs[i] = store.Ref{Collection: store.Budgets, Key: id}
	}
	return refs
}

// storedLocks is BudgetLocks of the accounts of xs kept in a store.
func storedLocks(xs []*Budget) []store.Ref {
	var ids []string
	for _, x := range xs {
		if x.st != nil {
			ids = append(ids, x.id)
		}
	}
	return BudgetLocks(ids...)
}

// DeleteSharedBudget removes the stored account id; deleting a missing one is not an error.
func DeleteSharedBudget(ctx context.Context, st *store.Store, id string) error {
	return st.Delete(ctx, store.Budgets, id)
}

// update applies fn to the shared account in one transaction.
func (b *Budget) update(ctx context.Context, fn func(u *BudgetUsage) error) error {
	return b.updateRec(ctx, func(rec *sharedBudget) error { return fn(&rec.Used) })
}

// updateRec is update with the account's stored limits at hand.
func (b *Budget) updateRec(ctx context.Context, fn func(rec *sharedBudget) error) error {
	return b.st.UpdateLocked(ctx, BudgetLocks(b.id), func(tx store.Tx) error {
		rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, b.id)
		if errors.Is(err, store.ErrNotFound) {
			return &BudgetGoneError{ID: b.id}
		}
		if err != nil {
			return fmt.Errorf("completions: budget %s: %w", b.id, err)
		}
		if err := fn(&rec); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.Budgets, b.id, rec)
	})
}

// SetParent puts b inside parent (a team's account that the budgets of every key of the
// team sit inside): from then on each request of b is refused when either account is spent
// or refuses its model, its call is reserved in both and its cost charged to both. When b
// and parent are shared Budgets on one store, both are updated in one store transaction.
// name names parent in refusals (a *BudgetExceededError, a team's id). Call it before b is
// used; a parent may not itself have a parent (nil parent: none).
func (b *Budget) SetParent(parent *Budget, name string) {
	if parent != nil && len(parent.parents) > 0 {
		panic("completions: a parent Budget may not itself have a parent")
	}
	b.parents = nil
	if parent != nil {
		b.parents = []enclosing{{b: parent, name: name}}
	}
}

// AddParent puts b inside one more account, after those it is in already (SetParent's):
// a user's account that every key made for the user draws on, beside the team's of its
// key. The added account is reserved, charged and may refuse as SetParent's; kind and name
// say which in its refusals (a *BudgetExceededError) and in a *BudgetGoneError, as
// Within's do. Call it before b is used; parent may not itself have a parent (nil parent:
// b is unchanged).
func (b *Budget) AddParent(parent *Budget, kind, name string) {
	if parent == nil {
		return
	}
	if len(parent.parents) > 0 {
		panic("completions: a parent Budget may not itself have a parent")
	}
	b.parents = append(slices.Clip(b.parents), enclosing{b: parent, kind: kind, name: name})
}

// Parent returns the Budget b sits inside (SetParent), or nil.
func (b *Budget) Parent() *Budget {
	if len(b.parents) == 0 {
		return nil
	}
	return b.parents[0].b
}

// Within returns a Budget for requests of b that also draw on outer (an end user's
// account, for one request that names the end user): b's own account and those it sits
// inside are unchanged and shared with b, and outer is one more that is reserved, charged
// and may refuse, as SetParent's (kind and name say which in its refusals, a
// *BudgetExceededError). Shared Budgets on one store are all read and written in one store
// transaction. b itself is not changed; outer may not have a parent (nil outer: b).
func (b *Budget) Within(outer *Budget, kind, name string) *Budget {
	if outer == nil {
		return b
	}
	if len(outer.parents) > 0 {
		panic("completions: a parent Budget may not itself have a parent")
	}
	parents := append(slices.Clip(b.parents), enclosing{b: outer, kind: kind, name: name})
	return &Budget{limits: b.limits, st: b.st, id: b.id, now: b.now, parents: parents, origin: b.own()}
}

// own is the Budget that holds b's own account in memory: b, or the one Within made b of.
func (b *Budget) own() *Budget {
	if b.origin != nil {
		return b.origin
	}
	return b
}

// NewBudget returns a Budget with the given limits and nothing used.
func NewBudget(l BudgetLimits) *Budget {
	l.AllowedModels, l.Models = slices.Clone(l.AllowedModels), maps.Clone(l.Models)
	return &Budget{limits: l}
}

// BlockedBy reports whether b or an account it sits inside (a team's, an organization's,
// a user's, an end user's) is blocked, with the kind and name its refusals give that
// account ("" and "" for b's own). Each account's limits are those b was made with, as
// the gateway's own refusals read them.
func (b *Budget) BlockedBy() (kind, name string, blocked bool) {
	if b.limits.Blocked {
		return "", "", true
	}
	for _, p := range b.parents {
		if p.b.limits.Blocked {
			return p.kind, p.name, true
		}
	}
	return "", "", false
}

// Limits returns the Budget's limits.
func (b *Budget) Limits() BudgetLimits {
	l := b.limits
	l.AllowedModels, l.Models = slices.Clone(l.AllowedModels), maps.Clone(l.Models)
	return l
}

// Used returns what has been consumed so far. A shared Budget reads its account (ctx
// bounds the read); if that fails it returns what this process last saw.
func (b *Budget) Used(ctx context.Context) BudgetUsage {
	if b.st != nil {
		if rec, err := store.GetJSON[sharedBudgetUsed](ctx, b.st, store.Budgets, b.id); err == nil {
			o := b.own()
			o.mu.Lock()
			o.used = rec.Used
			o.mu.Unlock()
		}
	}
	o := b.own()
	o.mu.Lock()
	defer o.mu.Unlock()
	u := o.used
	u.Models = maps.Clone(u.Models) // rolled below: the account's own stays as stored
	if !u.PeriodStart.IsZero() {    // a read starts no period: the first use does
		b.limits.roll(&u, b.clock())
	}
	b.limits.rollModels(&u, b.clock())
	return u
}

func (b *Budget) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return time.Now()
}

// allows reports whether model ("provider/model", as resolved) may be called, where
// expand names the models an allowed name that is not one stands for (a bare name's
// provider/model, a model group's models); expand may be nil.
func (b *Budget) allows(model string, expand func(allowed string) []string) bool {
	for _, p := range b.parents {
		if !p.b.allows(model, expand) {
			return false
		}
	}
	return b.allowsOwn(model, expand)
}

// allowsAsked reports whether model (as resolved) may be called for the name asked: by
// allows, or by a pattern of AllowedModels that matches asked, at b and each parent.
func (b *Budget) allowsAsked(asked, model string, expand func(allowed string) []string) bool {
	for _, p := range b.parents {
		if !p.b.allowsAsked(asked, model, expand) {
			return false
		}
	}
	return b.allowsOwn(model, expand) || b.allowsOwn(asked, nil)
}

// allowedPattern reports whether one of allowed with a '*' matches the whole of model,
// '*' standing for any run of characters (LiteLLM's wildcard models of a key or team).
func allowedPattern(allowed []string, model string) bool {
	for _, a := range allowed {
		if strings.Contains(a, "*") && globMatch(a, model) {
			return true
		}
	}
	return false
}

// globMatch reports whether pattern, whose '*' match any run of characters and whose
// other characters match themselves, matches the whole of s.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// allowsOwn is allows by b's own AllowedModels, without its parent's.
func (b *Budget) allowsOwn(model string, expand func(allowed string) []string) bool {
	if len(b.limits.AllowedModels) == 0 || slices.Contains(b.limits.AllowedModels, model) || allowedPattern(b.limits.AllowedModels, model) {
		return true
	}
	if expand == nil {
		return false
	}
	for _, a := range b.limits.AllowedModels {
		if slices.Contains(expand(a), model) {
			return true
		}
	}
	return false
}

// reserveCall takes one call from the budget, or fails with ErrBudgetExceeded when the
// calls or tokens are used up. It returns the tokens still available (0 = unlimited).
func (b *Budget) reserveCall(ctx context.Context) (tokensLeft int64, err error) {
	if len(b.parents) > 0 {
		return b.reserveAll(ctx)
	}
	return b.reserveOwn(ctx, b.clock())
}

// usable fails with ErrBudgetExceeded when b has no call, token or dollar left, taking
// nothing (an answer from the response cache calls no model, but a spent key gets none).
func (b *Budget) usable(ctx context.Context) error {
	u := b.Used(ctx)
	if _, err := b.limits.take(&u, b.clock()); err != nil {
		return err
	}
	for i, p := range b.parents {
		pu := p.b.Used(ctx)
		if _, err := p.b.limits.take(&pu, p.b.clock()); err != nil {
			return b.parentRefusal(i, pu, err)
		}
	}
	return nil
}

// roll starts a new period in u when ResetEvery has passed since its start (a whole number
// of periods later, so a budget used now and then keeps its calendar).
func (l BudgetLimits) roll(u *BudgetUsage, now time.Time) {
	if l.ResetEvery <= 0 {
		return
	}
	if u.PeriodStart.IsZero() {
		u.PeriodStart = now.UTC()
		return
	}
	if elapsed := now.Sub(u.PeriodStart); elapsed >= l.ResetEvery {
		// The models' spends have periods of their own (rollModels).
		*u = BudgetUsage{PeriodStart: u.PeriodStart.Add(elapsed / l.ResetEvery * l.ResetEvery), AnsweredKept: true, Models: u.Models}
	}
}

// costSpent reports whether spending usd uses MaxCostUSD up: at or above it, or only
// above it with CostAboveOnly.
func (l BudgetLimits) costSpent(usd float64) bool {
	if l.MaxCostUSD <= 0 {
		return false
	}
	if l.CostAboveOnly {
		return usd > l.MaxCostUSD
	}
	return usd >= l.MaxCostUSD
}

// take counts one call against u, or fails when the calls, tokens or cost are used up.
func (l BudgetLimits) take(u *BudgetUsage, now time.Time) (int64, error) {
	l.roll(u, now)
	if l.Blocked {
		return 0, blockedError{}
	}
	if l.MaxCalls > 0 && u.Calls >= l.MaxCalls {
		return 0, fmt.Errorf("%w: %d of %d calls used", ErrBudgetExceeded, u.Calls, l.MaxCalls)
	}
	if l.MaxTokens > 0 && u.Tokens >= l.MaxTokens {
		return 0, fmt.Errorf("%w: %d of %d tokens used", ErrBudgetExceeded, u.Tokens, l.MaxTokens)
	}
	if l.costSpent(u.CostUSD) {
		return 0, &CostExceededError{SpentUSD: u.CostUSD, MaxUSD: l.MaxCostUSD}
	}
	u.Calls++
	if l.MaxTokens > 0 {
		return l.MaxTokens - u.Tokens, nil
	}
	return 0, nil
}

// charge records the tokens and cost of an answered (or partly answered) attempt. A
// shared Budget's charge is written even when ctx was cancelled after the answer (the
// tokens were spent). It returns the thresholds this charge's cost reached first in the
// period (BudgetUsage.Crossed), of b and of its parent.
func (b *Budget) charge(ctx context.Context, tokens int64, cost float64, answered bool) ([]BudgetAlert, error) {
	alerts, _, err := b.chargeAccounts(ctx, tokens, cost, answered, nil)
	return alerts, err
}

// chargeAccounts is charge that also returns the accounts charged as they stand after the
// charge (b's own first, then its parents'; one that could not be charged is left out).
// models[i], when not "", is the entry of the BudgetLimits.Models of account i of
// b.accounts() (b's own first, then those it sits inside) the cost is charged to too
// (modelEntry); nil for none.
func (b *Budget) chargeAccounts(ctx context.Context, tokens int64, cost float64, answered bool, models []string) ([]BudgetAlert, []AccountState, error) {
	return b.chargeEnding(ctx, tokens, cost, answered, models, nil)
}

// chargeEnding is chargeAccounts that also ends the request's leases ends holds (nil:
// none) in the transactions that charge their accounts (leaseHold.ending).
func (b *Budget) chargeEnding(ctx context.Context, tokens int64, cost float64, answered bool, models []string, ends *leaseHold) ([]BudgetAlert, []AccountState, error) {
	if len(b.parents) > 0 {
		return b.chargeAll(ctx, tokens, cost, answered, models, ends)
	}
	alerts, state, err := b.chargeOwn(ctx, tokens, cost, answered, modelAt(models, 0), ends)
	if err != nil {
		return alerts, nil, err
	}
	return alerts, []AccountState{state}, nil
}

// modelAt is models[i], "" past its end.
func modelAt(models []string, i int) string {
	if i < len(models) {
		return models[i]
	}
	return ""
}

// chargeOwn is charge of b's own account; state is the account after it (Kind and Name
// empty: the caller names a parent's); model is chargeAccounts'.
func (b *Budget) chargeOwn(ctx context.Context, tokens int64, cost float64, answered bool, model string, ends *leaseHold) (alerts []BudgetAlert, state AccountState, err error) {
	now := b.clock()
	if b.st != nil {
		fold, done := ends.ending()
		err := b.updateRec(context.WithoutCancel(ctx), func(rec *sharedBudget) error {
			// A store transaction may run fn again. The stored limits, not those b was
			// loaded with, say which thresholds are crossed: they may have changed since.
			alerts = b.chargeAdd(rec.Limits, &rec.Used, now, tokens, cost, answered, model)
			state = rec.Limits.state(rec.Used)
			fold(b, rec, time.Now())
			return nil
		})
		done(err == nil)
		if err != nil {
			if !errors.Is(err, ErrBudgetGone) {
				err = &chargeError{accounts: []*Budget{b}, models: []string{model}, err: err}
			}
			return nil, AccountState{}, err
		}
		return alerts, state, nil
	}
	o := b.own()
	o.mu.Lock()
	defer o.mu.Unlock()
	alerts = b.chargeAdd(b.limits, &o.used, now, tokens, cost, answered, model)
	return alerts, b.limits.state(o.used), nil
}

// AccountState is a budget account as a request's last charge left it
// (RequestRecord.Accounts), for LiteLLM's budget gauges.
type AccountState struct {
	// Kind and Name say which account it is as its refusals do (a *BudgetExceededError):
	// both empty for the request's own Budget (a virtual key's); Kind empty and Name the
	// team's id for a team's (Budget.SetParent); else AddParent's or Within's.
	Kind, Name string
	// MaxCostUSD is its limit (0: none; see Blocked), SpentUSD what its period has spent.
	MaxCostUSD, SpentUSD float64
	// Blocked says it refuses every request (a budget of nothing).
	Blocked bool
	// ResetAt is when its period ends and its spend starts afresh (zero: never); the
	// periods after it are Period long.
	ResetAt time.Time
	Period  time.Duration
}

// state is the account with limits l and usage u.
func (l BudgetLimits) state(u BudgetUsage) AccountState {
	s := AccountState{MaxCostUSD: l.MaxCostUSD, SpentUSD: u.CostUSD, Blocked: l.Blocked}
	if l.ResetEvery > 0 && !u.PeriodStart.IsZero() {
		s.ResetAt, s.Period = u.PeriodStart.Add(l.ResetEvery), l.ResetEvery
	}
	return s
}

// chargeAdd adds a charge to u, b's account with limits l, at now and returns the alert
// thresholds it reached first in the period (marked in u.Crossed, so that each is sent
// once). model, when l.Models has it, is charged the cost too (chargeModel).
func (b *Budget) chargeAdd(l BudgetLimits, u *BudgetUsage, now time.Time, tokens int64, cost float64, answered bool, model string) []BudgetAlert {
	l.roll(u, now)
	l.chargeModel(u, model, cost, now)
	if !u.AnsweredKept {
		if u.Answered == 0 && u.Calls > 1 && (u.Tokens > 0 || u.CostUSD > 0) {
			// A record from before Answered was kept: its past requests count as
			// answered (this one, in flight, is the last of Calls). Only such a record:
			// one of this build whose first charges were requests cut short (a stream
			// broken midway, charged unanswered) has Answered 0 rightly.
			u.Answered = u.Calls - 1
		}
		u.AnsweredKept = true
	}
	if answered {
		u.Answered++
	}
	u.Tokens += tokens
	u.CostUSD += cost
	var alerts []BudgetAlert
	for _, th := range l.reached(*u) {
		if !u.Crossed.has(th) {
			u.Crossed.set(th, true)
			alerts = append(alerts, BudgetAlert{Budget: b.id, Threshold: th, SpentUSD: u.CostUSD,
				SoftUSD: l.SoftCostUSD, MaxUSD: l.MaxCostUSD, PeriodStart: u.PeriodStart, Time: now})
		}
	}
	return alerts
}

// allowedAs returns the models an allowed name of a Budget stands for besides itself: a
// model group's models, a deployment's own name's members (Options.DeploymentNames), a
// bare name's "provider/model" (chat, embedding, audio or rerank
// model). The names are resolved at each request, so a key keeps meaning what it named
// when the gateway's groups or providers change.
func (g *Gateway) allowedAs(name string) []string {
	rt := g.routes()
	if grp, ok := rt.groups[name]; ok {
		return grp.Models
	}
	if members := rt.namedMembers(name); members != nil {
		return members // a deployment's own name (Options.DeploymentNames)
	}
	if strings.Contains(name, "/") {
		return nil
	}
	if full, _ := g.bareModel(name); full != "" {
		return []string{full}
	}
	if full, _ := g.ResolveEmbeddingModel(name); full != name {
		return []string{full}
	}
	if full, err := g.audioModel("model", name); err == nil {
		return []string{full}
	}
	if full, err := g.rerankModel("model", name); err == nil {
		return []string{full}
	}
	if full, ok := g.ResolveImageModel(name); ok {
		return []string{full}
	}
	return nil
}

// Allows reports whether scope may call model (a name as a request would give it: a
// "provider/model", a bare name or a model group): always without a Budget; with one, when
// its AllowedModels name the model or every model the name stands for. GET /v1/models
// uses it to list only what a key may call.
func (g *Gateway) Allows(scope Scope, model string) bool {
	if scope.Budget == nil {
		return true
	}
	return g.budgetAllowsName(scope.Budget, model)
}

// budgetAllowsName is Allows by b and its parents.
func (g *Gateway) budgetAllowsName(b *Budget, model string) bool {
	for _, p := range b.parents {
		if !g.allowsName(p.b, model) {
			return false
		}
	}
	return g.allowsName(b, model)
}

// ownGrant returns, under Options.ListConfigured (a LiteLLM config), what an allowed name
// of a key grants a request naming model besides itself, as LiteLLM's proxy grants a key
// the names in its models only (can_key_call_model; else key_model_access_denied): for a
// model group, another group of the same deployments (a model_group_alias of an allowed
// group, or the group an allowed alias stands for); any other name asked is granted only
// by itself or a pattern (allowedPattern) matching it or its provider/model (allowsName) —
// not by another name of the
// deployment it reaches (a model_name with '/' by its litellm_params.model or another
// model_name of that model, a bare name by the provider/model a wildcard makes of it,
// a group's member by its internal name), which may be routed, limited or priced
// otherwise. nil without ListConfigured: every allowed name stands for what allowedAs
// says (a bare gpt-4o for openai/gpt-4o: the same model by the same route).
func (g *Gateway) ownGrant(model string) func(allowed string) []string {
	if !g.opts.ListConfigured {
		return nil
	}
	rt := g.routes()
	asked, askedGroup := rt.groups[model]
	return func(allowed string) []string {
		if grp, isGroup := rt.groups[allowed]; askedGroup && isGroup && slices.Equal(grp.Models, asked.Models) {
			return grp.Models
		}
		return nil
	}
}

// AllowsAnswer reports whether scope may have been answered by model, the model an answer
// reports (a pasted completion's): when Allows it, or when model is another version of a
// model scope allows (providers.CanonicalModel: an upstream answers a request for gpt-4o,
// which the key allows, as gpt-4o-2024-08-06) at the same provider when model names one
// (sameModelVersion), as the gateway admits requests by the name asked, whatever the
// answer names.
func (g *Gateway) AllowsAnswer(scope Scope, model string) bool {
	b := scope.Budget
	if b == nil {
		return true
	}
	for _, p := range b.parents {
		if !g.allowsAnswerName(p.b, model) {
			return false
		}
	}
	return g.allowsAnswerName(b, model)
}

// allowsAnswerName is AllowsAnswer by b's own AllowedModels.
func (g *Gateway) allowsAnswerName(b *Budget, model string) bool {
	if g.allowsName(b, model) {
		return true
	}
	same := func(m string) bool { return sameModelVersion(m, model) }
	for _, a := range b.limits.AllowedModels {
		if same(a) || slices.ContainsFunc(g.allowedAs(a), same) {
			return true
		}
	}
	return false
}

// sameModelVersion reports whether answer, the model an answer reports, is another version
// of allowed (providers.CanonicalModel) at the same provider: an answer naming its provider
// ("azure/gpt-4o-2024-08-06") is another version only of a model named with that provider
// ("azure/gpt-4o"), so that a key allowed openai/gpt-4o is not taken to allow Azure's; a
// bare answer (as upstreams name their models) may be a version of any allowed model.
func sameModelVersion(allowed, answer string) bool {
	if providers.CanonicalModel(allowed) != providers.CanonicalModel(answer) {
		return false
	}
	prov, _, named := strings.Cut(answer, "/")
	if !named {
		return true
	}
	aprov, _, ok := strings.Cut(allowed, "/")
	return ok && aprov == prov
}

// allowsName is Allows by b's own AllowedModels.
func (g *Gateway) allowsName(b *Budget, model string) bool {
	if len(b.limits.AllowedModels) == 0 || slices.Contains(b.limits.AllowedModels, model) || allowedPattern(b.limits.AllowedModels, model) {
		return true
	}
	expand := g.allowedAs
	if own := g.ownGrant(model); own != nil {
		if _, group := g.routes().groups[model]; !group {
			// A LiteLLM config's name that is no group is granted by itself only (above) or
			// by a pattern matching the provider/model it resolves to (LiteLLM matches a
			// key's wildcards against the model's provider): not by another name of the
			// model it reaches.
			return slices.ContainsFunc(g.allowedAs(model), func(m string) bool { return allowedPattern(b.limits.AllowedModels, m) })
		}
		expand = own // a LiteLLM config's: a group grants itself, not its members' names
	}
	resolved := g.allowedAs(model)
	if len(resolved) == 0 {
		return b.allowsOwn(model, expand)
	}
	for _, m := range resolved {
		if !b.allowsOwn(m, expand) {
			return false
		}
	}
	return true
}

// SetSharedBudgetLimits replaces the limits of the stored account id through tx (a
// store.Tx, to change them together with the records that refer to it), keeping what it
// used: every Budget loaded on it afterwards (LoadSharedBudget) holds to the new limits.
func SetSharedBudgetLimits(ctx context.Context, tx store.Tx, id string, l BudgetLimits) error {
	rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, id)
	if err != nil {
		return fmt.Errorf("completions: budget %s: %w", id, err)
	}
	rec.Limits = l
	rec.Limits.AllowedModels, rec.Limits.Models = slices.Clone(l.AllowedModels), maps.Clone(l.Models)
	for m := range rec.Used.Models {
		if _, kept := l.Models[m]; !kept {
			delete(rec.Used.Models, m) // a model's entry removed: its spend goes with it
		}
	}
	// A threshold the new limits put out of reach again is reported again when reached.
	reached := l.reached(rec.Used)
	for _, th := range []string{ThresholdSoft, ThresholdNear, ThresholdMax} {
		if !slices.Contains(reached, th) {
			rec.Used.Crossed.set(th, false)
		}
	}
	return store.PutJSON(ctx, tx, store.Budgets, id, rec)
}
