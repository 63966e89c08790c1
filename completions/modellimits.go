package completions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Per-model limits of one account (BudgetLimits.Models): LiteLLM's model_max_budget,
// model_rpm_limit and model_tpm_limit of a virtual key. Each model a request may go to
// (its models, its fallbacks, a group's members) is held to its own entry
// (keyModelEntry), checked before the request's call is taken from the account and again
// as the model is called; a model refused is skipped for the next one, and the model that
// answers is charged:
// the entry's USD spend in its own period (stored with the account, charged in the same
// transaction as the account's spend), and its requests and tokens in the last minute
// (counted per process and, for a stored account, shared with the other processes through
// Options.SharedLimits, as the account's own tokens per minute are).

// ModelLimits bounds one model's use by an account. A nil bound is none; a bound of 0
// refuses every request for the model (LiteLLM's: its checks are spend >= budget and
// count >= limit).
type ModelLimits struct {
	// MaxCostUSD bounds the USD the model's answers may cost, per ResetEvery when set
	// (else for all time); checked before each request, so the spend may pass it by one
	// request's cost.
	MaxCostUSD *float64 `json:"max_cost_usd,omitempty"`
	// ResetEvery starts the model's spend afresh every ResetEvery from its first charge.
	ResetEvery time.Duration `json:"reset_every,omitempty"`
	// RequestsPerMinute bounds the requests for the model in the last minute.
	RequestsPerMinute *int64 `json:"requests_per_minute,omitempty"`
	// TokensPerMinute bounds the tokens the model's answers used in the last minute.
	TokensPerMinute *int64 `json:"tokens_per_minute,omitempty"`
}

// ModelUsage is what one entry of BudgetLimits.Models spent in its current period.
type ModelUsage struct {
	CostUSD float64 `json:"cost_usd"`
	// PeriodStart is when the current period began (zero until the first charge, and
	// always without ResetEvery).
	PeriodStart time.Time `json:"period_start,omitzero"`
}

// ModelBudgetError refuses a request for a model whose entry of the key's
// BudgetLimits.Models has spent its MaxCostUSD; it matches ErrBudgetExceeded. Its message
// is LiteLLM's (_PROXY_VirtualKeyModelMaxBudgetLimiter's), naming the key by KeyID and
// KeyAlias (the request's Scope's).
//
// An account the key's Budget sits inside (Within's: an end user's) may hold per-model
// budgets too (its BudgetLimits.Models' MaxCostUSD; their other bounds are not applied):
// its refusal is a ModelBudgetError with that account's Kind and Name.
type ModelBudgetError struct {
	Model            string // the entry: the model name as the key's limits name it
	SpentUSD, MaxUSD float64
	KeyID, KeyAlias  string
	// Kind and Name are the account's whose entry refused (Within's kind and name: an end
	// user's); both empty for the key's own.
	Kind, Name string
}

// Error is LiteLLM's message (a key's; an enclosing account's names its kind and name).
func (e *ModelBudgetError) Error() string {
	if e.Kind != "" || e.Name != "" {
		return fmt.Sprintf("%s %s: exceeded budget for model=%s", e.Kind, e.Name, e.Model)
	}
	return fmt.Sprintf("LiteLLM Virtual Key: %s, key_alias: %s, exceeded budget for model=%s", e.KeyID, pythonStr(e.KeyAlias), e.Model)
}

// Is matches ErrBudgetExceeded.
func (e *ModelBudgetError) Is(target error) bool { return target == ErrBudgetExceeded }

// ModelRateError refuses a request for a model whose entry of the key's
// BudgetLimits.Models is at its RequestsPerMinute or TokensPerMinute; it matches
// ErrTokenRate (a rate that clears with time). Its message is LiteLLM's (its rate
// limiter's, for rate limit type model_per_key).
type ModelRateError struct {
	Model string
	// Tokens says the bound is TokensPerMinute (else RequestsPerMinute); Used of Limit were
	// used in the last minute.
	Tokens      bool
	Used, Limit int64
	RetryAfter  time.Duration
	KeyID       string
	At          time.Time // when the request was refused
}

// Error is LiteLLM's message.
func (e *ModelRateError) Error() string {
	kind := "requests"
	if e.Tokens {
		kind = "tokens"
	}
	return fmt.Sprintf("Rate limit exceeded for model_per_key: %s:%s. Limit type: %s. Current limit: %d, Remaining: %d. Limit resets at: %s",
		e.KeyID, e.Model, kind, e.Limit, max(0, e.Limit-e.Used), e.At.Add(e.RetryAfter).UTC().Format("2006-01-02 15:04:05 UTC"))
}

// Is matches ErrTokenRate.
func (e *ModelRateError) Is(target error) bool { return target == ErrTokenRate }

// pythonStr is s as Python prints an optional string: None when empty.
func pythonStr(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

// modelEntry is the entry of l.Models a request asking for asked is held to: asked itself,
// else asked without its provider ("openai/gpt-4o" is held to "gpt-4o", as LiteLLM looks
// the name up), else the "provider/model" a bare name resolves to (expand); "" when none.
func (l BudgetLimits) modelEntry(asked string, expand func(string) []string) string {
	if len(l.Models) == 0 || asked == "" {
		return ""
	}
	if _, ok := l.Models[asked]; ok {
		return asked
	}
	if i := strings.LastIndex(asked, "/"); i >= 0 {
		if _, ok := l.Models[asked[i+1:]]; ok {
			return asked[i+1:]
		}
	}
	if expand != nil && !strings.Contains(asked, "/") {
		if full := expand(asked); len(full) == 1 {
			if _, ok := l.Models[full[0]]; ok {
				return full[0]
			}
		}
	}
	return ""
}

// roll starts a new period of mu when m.ResetEvery has passed since it began (a whole
// number of periods later, as BudgetLimits.roll).
func (m ModelLimits) roll(mu *ModelUsage, now time.Time) {
	if m.ResetEvery <= 0 {
		return
	}
	if mu.PeriodStart.IsZero() {
		mu.PeriodStart = now.UTC()
		return
	}
	if elapsed := now.Sub(mu.PeriodStart); elapsed >= m.ResetEvery {
		*mu = ModelUsage{PeriodStart: mu.PeriodStart.Add(elapsed / m.ResetEvery * m.ResetEvery)}
	}
}

// rollModels rolls each model's usage in u (a copy: u.Models is not shared) by l's entries.
func (l BudgetLimits) rollModels(u *BudgetUsage, now time.Time) {
	for name, mu := range u.Models {
		if ml, ok := l.Models[name]; ok && !mu.PeriodStart.IsZero() {
			ml.roll(&mu, now)
			u.Models[name] = mu
		}
	}
}

// chargeModel adds cost to model's entry of u, when l has one.
func (l BudgetLimits) chargeModel(u *BudgetUsage, model string, cost float64, now time.Time) {
	ml, ok := l.Models[model]
	if !ok || model == "" {
		return
	}
	if u.Models == nil {
		u.Models = map[string]ModelUsage{}
	}
	mu := u.Models[model]
	ml.roll(&mu, now)
	mu.CostUSD += cost
	u.Models[model] = mu
}

// The Kinds of an attempt skipped because its model's entry of the key's
// BudgetLimits.Models refused it: its budget spent, its requests or tokens of the minute
// used up.
const (
	modelBudgetKind = "model_budget_exceeded"
	modelRateKind   = "model_rate_limited"
)

// keyModelEntry is the entry of b's own Models that target t of p is held to and charged
// to: the entry of the name t was asked by (t.group: a model group, a bare name's
// provider/model, a deployment's name; for a request other than chat, whose targets do
// not say, the name it asked for), else of t's own "provider/model" (so a member of a
// group, or a fallback, is held to its own model's entry when the key has none for the
// name it was asked by); "" for none.
func (g *Gateway) keyModelEntry(p *plan, b *Budget, t target) string {
	if b == nil {
		return ""
	}
	return g.accountEntry(p, b.limits, t)
}

// accountEntry is keyModelEntry of an account with limits l.
func (g *Gateway) accountEntry(p *plan, l BudgetLimits, t target) string {
	if len(l.Models) == 0 {
		return ""
	}
	asked := t.group
	if asked == "" {
		asked = p.asked
	}
	if entry := l.modelEntry(asked, g.allowedAs); entry != "" {
		return entry
	}
	return l.modelEntry(t.name, g.allowedAs)
}

// modelEntries is the entry of each account of b (b.accounts(): its own, then those it
// sits inside) that target t of p is charged to ("" for none); nil when none has one.
func (g *Gateway) modelEntries(p *plan, b *Budget, t target) []string {
	var out []string
	for i, x := range b.accounts() {
		if entry := g.accountEntry(p, x.limits, t); entry != "" {
			if out == nil {
				out = make([]string, 1+len(b.parents))
			}
			out[i] = entry
		}
	}
	return out
}

// enclosingModels reports whether an account b sits inside has per-model limits.
func (b *Budget) enclosingModels() bool {
	for _, e := range b.parents {
		if len(e.b.limits.Models) > 0 {
			return true
		}
	}
	return false
}

// enclosingRefusal is why an account b sits inside refuses target t of p by its entry's
// budget (nil: none does): a *ModelBudgetError naming the account. used reads parent i's
// usage (once per request, by the caller's cache).
func (g *Gateway) enclosingRefusal(p *plan, b *Budget, t target, used func(i int) BudgetUsage) error {
	for i, e := range b.parents {
		entry := g.accountEntry(p, e.b.limits, t)
		if entry == "" {
			continue
		}
		ml := e.b.limits.Models[entry]
		if ml.MaxCostUSD == nil {
			continue
		}
		if mu := used(i).Models[entry]; mu.CostUSD >= *ml.MaxCostUSD {
			return &ModelBudgetError{Model: entry, SpentUSD: mu.CostUSD, MaxUSD: *ml.MaxCostUSD, KeyID: p.scope.KeyID, KeyAlias: p.scope.KeyAlias, Kind: e.kind, Name: e.name}
		}
	}
	return nil
}

// modelRefusal is why entry of b's own Models refuses a call at now (nil: it does not): a
// spent budget is a *ModelBudgetError, a minute's tokens or requests used up a
// *ModelRateError. used is the account's usage (read once by the caller, when needed).
func (g *Gateway) modelRefusal(p *plan, b *Budget, entry string, used func() BudgetUsage, now time.Time) error {
	ml := b.limits.Models[entry]
	if ml.MaxCostUSD != nil {
		if mu := used().Models[entry]; mu.CostUSD >= *ml.MaxCostUSD {
			return &ModelBudgetError{Model: entry, SpentUSD: mu.CostUSD, MaxUSD: *ml.MaxCostUSD, KeyID: p.scope.KeyID, KeyAlias: p.scope.KeyAlias}
		}
	}
	if ml.TokensPerMinute != nil {
		limit := *ml.TokensPerMinute
		if total, below := g.spend.modelMinute(b, entry, true, now, limit); total >= limit {
			return &ModelRateError{Model: entry, Tokens: true, Used: total, Limit: limit, RetryAfter: max(below.Sub(now), time.Second), KeyID: p.scope.KeyID, At: now}
		}
	}
	if ml.RequestsPerMinute != nil {
		limit := *ml.RequestsPerMinute
		if total, below := g.spend.modelMinute(b, entry, false, now, limit); total >= limit {
			return &ModelRateError{Model: entry, Used: total, Limit: limit, RetryAfter: max(below.Sub(now), time.Second), KeyID: p.scope.KeyID, At: now}
		}
	}
	return nil
}

// enterModel holds p's request to the entries of b's own BudgetLimits.Models of the
// models in lists (the request's models and fallbacks, as resolved), before anything is
// taken from the account. A model whose entry refuses it is taken out of its list and
// recorded as a skipped attempt (skipModel), so the request goes to the models left, as
// its fallbacks; when it refuses every model the request could go to (the fit ones), the
// request is refused with the first one's refusal (a *ModelBudgetError or a
// *ModelRateError) and nothing is recorded. Nothing is counted here: a model's requests
// are counted when it is called (admitModel).
func (g *Gateway) enterModel(ctx context.Context, p *plan, b *Budget, lists ...*[]target) error {
	enclosing := b.enclosingModels()
	if len(b.limits.Models) == 0 && !enclosing {
		return nil
	}
	now := g.opts.Now()
	var usage *BudgetUsage
	used := func() BudgetUsage {
		if usage == nil {
			u := b.Used(ctx)
			usage = &u
		}
		return *usage
	}
	parentUsage := map[int]BudgetUsage{}
	parentUsed := func(i int) BudgetUsage {
		u, ok := parentUsage[i]
		if !ok {
			u = b.parents[i].b.Used(ctx)
			parentUsage[i] = u
		}
		return u
	}
	refusals := map[string]error{} // by entry: each checked once
	type refused struct {
		t   target
		err error
	}
	var out []refused
	callable := 0
	kept := make([][]target, len(lists))
	for i, ts := range lists {
		for _, t := range *ts {
			var err error
			if entry := g.keyModelEntry(p, b, t); entry != "" {
				var ok bool
				if err, ok = refusals[entry]; !ok {
					err = g.modelRefusal(p, b, entry, used, now)
					refusals[entry] = err
				}
			}
			if err == nil && enclosing {
				err = g.enclosingRefusal(p, b, t, parentUsed)
			}
			if err != nil {
				out = append(out, refused{t, err})
				continue
			}
			kept[i] = append(kept[i], t)
			if t.unfit == "" {
				callable++
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	if callable == 0 {
		return out[0].err
	}
	for i, ts := range lists {
		*ts = kept[i] // new arrays: the lists given may be shared
	}
	for _, r := range out {
		p.skipModel(r.t, r.err)
		if errors.Is(r.err, ErrTokenRate) && r.t.unfit == "" {
			p.setAside = append(p.setAside, r.t) // its minute moves on: a wait may go back to it
		}
	}
	return nil
}

// admitModel is enterModel's check of target t as it is about to be called (its entry's
// budget or minute may have been used up since, by this request's own earlier attempts or
// by others, or t may be a fallback switched in since): the refusal, nil when t may be
// called. Nothing is counted: countModel does once t is called.
func (g *Gateway) admitModel(ctx context.Context, p *plan, t target, now time.Time) error {
	b := p.scope.Budget
	if b == nil {
		return nil
	}
	if entry := g.keyModelEntry(p, b, t); entry != "" {
		if err := g.modelRefusal(p, b, entry, func() BudgetUsage { return b.Used(ctx) }, now); err != nil {
			return err
		}
	}
	if !b.enclosingModels() {
		return nil
	}
	return g.enclosingRefusal(p, b, t, func(i int) BudgetUsage { return b.parents[i].b.Used(ctx) })
}

// countModel counts a call of target t at now in its entry's requests of the minute (when
// the key bounds them): each model called is counted, a fallback's in its own entry.
func (g *Gateway) countModel(p *plan, t target, now time.Time) {
	b := p.scope.Budget
	entry := g.keyModelEntry(p, b, t)
	if entry == "" {
		return
	}
	if ml := b.limits.Models[entry]; ml.RequestsPerMinute != nil {
		g.spend.modelCount(b, entry, false, 1, now)
	}
}

// skipModel records that target t was skipped, its entry of the key's Models refusing it
// (err); the first such refusal is the request's when no model is called (allFailed).
func (p *plan) skipModel(t target, err error) {
	kind := modelBudgetKind
	if errors.Is(err, ErrTokenRate) {
		kind = modelRateKind
	}
	p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeSkipped, Kind: kind, Error: "skipped: " + err.Error(), Err: err})
	if p.modelRefused == nil {
		p.modelRefused = err
	}
}

// refusedByKey is the error of a plan no model of which was called, at least one being
// refused by its entry of the key's Models (skipModel): the first such refusal, as a
// request for that model alone is refused. nil when a model was called.
func (p *plan) refusedByKey() error {
	if p.modelRefused == nil {
		return nil
	}
	for _, a := range p.attempts {
		if a.Outcome != OutcomeSkipped {
			return nil
		}
	}
	return p.modelRefused
}

// The key prefixes of a stored account's per-model requests and tokens in
// Options.SharedLimits: prefix, then the account's id, "|" and the entry's model name.
const (
	sharedModelRequests = "mrpm/"
	sharedModelTokens   = "mtpm/"
)

// modelWindow is the spend gate's key of the minute of one entry of an account's Models:
// its requests, or its tokens.
type modelWindow struct {
	account accountKey // gateKey
	model   string
	tokens  bool
}

// modelMinute is what the minute to now holds of entry of b's Models (its tokens, else its
// requests) and, when that reaches limit, when it drops below it.
func (sg *spendGate) modelMinute(b *Budget, entry string, tokens bool, now time.Time, limit int64) (total int64, below time.Time) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	w := sg.models[modelWindow{gateKey(b), entry, tokens}]
	if w == nil {
		return 0, now.Add(time.Minute)
	}
	return w.sum(now, limit)
}

// modelCount counts n requests or tokens of entry of b's Models at now, and shares them
// with the other processes for a stored account.
func (sg *spendGate) modelCount(b *Budget, entry string, tokens bool, n int64, now time.Time) {
	if n <= 0 {
		return
	}
	countIn(sg, &sg.models, modelWindow{gateKey(b), entry, tokens}, n, now)
	if b.st != nil {
		prefix := sharedModelRequests
		if tokens {
			prefix = sharedModelTokens
		}
		sg.shared.Add(prefix+b.id+"|"+entry, n, now)
	}
}

// shareModels makes the gate count the other processes' requests and tokens of the
// stored accounts' models (share's part).
func (sg *spendGate) shareModels() {
	for _, prefix := range []string{sharedModelRequests, sharedModelTokens} {
		tokens := prefix == sharedModelTokens
		sg.shared.Subscribe(prefix, func(key string, n int64, now time.Time) {
			id, model, ok := strings.Cut(strings.TrimPrefix(key, prefix), "|")
			if ok {
				countIn(sg, &sg.models, modelWindow{storedAccount(id), model, tokens}, n, now)
			}
		})
	}
}
