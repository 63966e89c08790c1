package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// A virtual key takes a LiteLLM budget (litellmbudgets.go) by budget_id as an end user
// does (LiteLLM's /key/generate and /key/update budget_id, and budget_id on POST and PATCH
// /api/v1/keys): the budget's max_budget, soft_budget, budget_duration, tpm_limit,
// rpm_limit and max_parallel_requests become the key's max_budget_usd, soft_budget_usd,
// budget_duration, tokens_per_minute, requests_per_minute and max_parallel_requests, and
// its model_max_budget the key's when the key has none of its own (LiteLLM's rule), its
// own account spending against them on its own; a /budget/update rewrites them on every key
// naming the budget in the same store transaction; a budget some key names cannot be
// deleted; and the key's own budget fields beside a budget_id (given, or the key's) are
// refused unless they have the budget's values (takeBudget; budget_id "" on an update
// leaves the budget, keeping its values as the key's own). The keys of a
// budget are found by reading the owner's virtual keys (at most MaxVirtualKeysPerOwner),
// as a team's and a user's keys are, so no index has to be kept in step with every path
// that writes or deletes a key.

// maxBudgetKeysNamed bounds the keys a refused /budget/delete names.
const maxBudgetKeysNamed = 20

// budgetFieldsGiven is the fields of the body that made req, or, without one, the budget
// fields req sets (budgetFieldsSet).
func (req keyRequest) budgetFieldsGiven() map[string]json.RawMessage {
	if req.fields != nil {
		return req.fields
	}
	return budgetFieldsSet(req.MaxBudgetUSD, req.SoftBudgetUSD, req.BudgetDuration, req.TokensPerMinute, req.RequestsPerMinute, req.MaxParallelRequests, req.Blocked && req.budgetBlock)
}

// takeKeyBudgetOf sets req's budget fields to those of owner's budget req.BudgetID, read
// through tx ("": req unchanged), refusing those given (the fields of the request's body)
// with other values, or answers 404 naming budget_id (takeBudget).
func takeKeyBudgetOf(ctx context.Context, tx store.Tx, owner string, req *keyRequest, given map[string]json.RawMessage) error {
	return takeBudget(ctx, tx, owner, req.BudgetID, "key", given, budgetTarget{maxUSD: &req.MaxBudgetUSD, softUSD: &req.SoftBudgetUSD, duration: &req.BudgetDuration,
		tokensPerMinute: &req.TokensPerMinute, blocked: &req.Blocked, budgetBlock: &req.budgetBlock, maxParallel: &req.MaxParallelRequests,
		requestsPerMinute: &req.RequestsPerMinute, modelMaxBudget: &req.ModelMaxBudget})
}

// keyLimits is the account limits of vk as stored (its fields were checked when set), as
// checkKeyRequest makes them.
func keyLimits(vk virtualKey) completions.BudgetLimits {
	l := completions.BudgetLimits{AllowedModels: vk.Models, MaxCostUSD: vk.MaxBudgetUSD, SoftCostUSD: vk.SoftBudgetUSD,
		MaxTokens: vk.MaxTokens, MaxCalls: vk.MaxRequests, TokensPerMinute: vk.TokensPerMinute, Blocked: vk.Blocked, Models: keyModelLimitsOf(vk)}
	if vk.BudgetDuration != "" {
		l.ResetEvery, _ = parseBudgetDuration(vk.BudgetDuration)
	}
	return l
}

// accountLocks names the stored budget accounts ids to Store.UpdateLocked, as the
// requests' admissions and charges name them (completions.BudgetLocks): an operator's
// write of an account (its limits changed, the account created or deleted with its key,
// team, user, organization, end user or tag) and the charges of the requests drawing on it
// then wait for one another on PostgreSQL instead of aborting one another, which past the
// store's retries failed the operator's request. More than maxAccountLocks accounts (a
// bulk delete) are not named, each advisory lock taking a slot of PostgreSQL's shared lock
// table: such a transaction is a plain Update, whose run again after losing to a charge
// still waits for the records it touched.
func accountLocks(ids ...string) []store.Ref {
	if len(ids) > maxAccountLocks {
		return nil
	}
	return completions.BudgetLocks(ids...)
}

// maxAccountLocks bounds the accounts accountLocks names (pgstore's bound of the records
// a run again locks).
const maxAccountLocks = 64

// eachAccount is the stored account idOf(id) of each of ids.
func eachAccount(ids []string, idOf func(id string) string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = idOf(id)
	}
	return out
}

// budgetKeys returns owner's virtual keys naming budget id, read through tx, in the order
// of their ids.
func budgetKeys(ctx context.Context, tx store.Tx, owner, id string) ([]storedVirtualKey, error) {
	es, err := tx.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing the keys of budget %s: %w", id, err)
	}
	var out []storedVirtualKey
	for _, e := range es {
		rec, err := readKeyRecord(e.Value)
		if err != nil {
			return nil, fmt.Errorf("server: key record %s: %w", e.Key, err)
		}
		if rec.BudgetID == id {
			out = append(out, rec)
		}
	}
	return out, nil
}

// applyBudgetToKeys sets the budget fields of every virtual key of owner naming budget b
// (before the change: old) to b's, and their accounts' limits with them, through tx; it
// returns how many keys it changed. A key's spend is kept. A key's model_max_budget is
// b's when it had none or old's (it took the budget's), else its own is kept (LiteLLM's
// rule: the key's own wins). tx should name the keys' accounts to UpdateLocked
// (budgetAccountLocks), as the requests charging them do.
func applyBudgetToKeys(ctx context.Context, tx store.Tx, owner string, old, b litellmBudgetRecord) (int, error) {
	recs, err := budgetKeys(ctx, tx, owner, b.BudgetID)
	if err != nil {
		return 0, err
	}
	for _, rec := range recs {
		vk := rec.virtualKey
		vk.MaxBudgetUSD, vk.SoftBudgetUSD, vk.BudgetDuration, vk.TokensPerMinute = b.MaxBudgetUSD, b.SoftBudgetUSD, b.BudgetDuration, b.TokensPerMinute
		// max_parallel_requests and requests_per_minute are held from the shared-key record.
		parallelChanged := vk.MaxParallelRequests != b.MaxParallelRequests || vk.RequestsPerMinute != b.RequestsPerMinute
		vk.MaxParallelRequests, vk.RequestsPerMinute = b.MaxParallelRequests, b.RequestsPerMinute
		if len(vk.ModelMaxBudget) == 0 || maps.Equal(vk.ModelMaxBudget, old.ModelMaxBudget) {
			vk.ModelMaxBudget = maps.Clone(b.ModelMaxBudget)
		}
		if err := completions.SetSharedBudgetLimits(ctx, tx, "key/"+vk.ID, keyLimits(vk)); err != nil {
			return 0, err
		}
		// The description, and the shared-key record only when it holds a field that
		// changed (max_parallel_requests, requests_per_minute) and is still there: an expired key's, gone at its
		// first use after expiry, stays gone.
		if parallelChanged {
			if _, err := tx.Get(ctx, store.ScopedKeys, rec.Hash); err == nil {
				if err := putKeyRecords(ctx, tx, owner, rec.Hash, &vk); err != nil {
					return 0, err
				}
				continue
			} else if !errors.Is(err, store.ErrNotFound) {
				return 0, fmt.Errorf("server: reading key %s: %w", vk.ID, err)
			}
		}
		if err := putKeyDescription(ctx, tx, owner, rec.Hash, &vk); err != nil {
			return 0, err
		}
	}
	return len(recs), nil
}

// budgetInUse is the 400 of a /budget/delete of budget id that end users (customers, at
// most maxBudgetCustomersNamed of them, more telling there are others) or virtual keys
// (keys, all of them) name.
func budgetInUse(id string, customers []string, more bool, keys []string) *APIError {
	var of, how []string
	if len(customers) > 0 {
		and := ""
		if more {
			and = " and more"
		}
		of = append(of, "customers "+pythonList(customers)+and)
		how = append(how, "give them another budget_id (/customer/update) or delete them (/customer/delete)")
	}
	if n := len(keys); n > 0 {
		noun, them := "virtual keys", "them"
		if n == 1 {
			noun, them = "virtual key", "it"
		}
		named := strings.Join(keys[:min(n, maxBudgetKeysNamed)], ", ")
		if n > maxBudgetKeysNamed {
			named += ", …"
		}
		of = append(of, fmt.Sprintf("%d %s (%s)", n, noun, named))
		how = append(how, fmt.Sprintf("give %s another budget_id or budget_id null (/key/update) or delete %s (/key/delete)", them, them))
	}
	return paramError("id", "id: budget %q is the budget of %s: %s first", id, strings.Join(of, " and of "), strings.Join(how, "; "))
}
