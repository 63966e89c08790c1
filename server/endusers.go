package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// End users (LiteLLM's and Bifrost's "customers") are the users of an app built on the
// gateway: the app names one in each request (OpenAI's user, Anthropic's metadata.user_id,
// LiteLLM's x-litellm-end-user-id header) and the gateway keeps that end user's spend and
// holds it to the end user's max_budget_usd (per budget_duration), models and block. An
// end user is made with no limits by the first request naming it that the gateway takes on
// (its call reserved), as LiteLLM's spend writer creates one, so every end user's spend is
// visible; a refused request makes none. The operator sets limits before or after.
//
// Records: the description in store.EndUsers under "<owner>/<end_user_id>" and the account
// in store.Budgets under endUserBudgetID; how many a key has in store.EndUserCounts
// (endusers_count.go). A request naming an end user draws on the end user's account
// besides its key's (and team's): completions.Budget.Within, so the call is reserved and
// charged in all in one store transaction and every replica holds to one account. End users are the calling key's, as its teams and virtual keys are.

// Bounds of an end user.
const (
	// maxEndUserIDLength bounds an end user's id.
	maxEndUserIDLength = 256
	// maxEndUserAliasLength bounds an end user's alias.
	maxEndUserAliasLength = 256
	// maxEndUsersAtOnce bounds the ids of one delete, block or unblock.
	maxEndUsersAtOnce = 1000
)

// endUserKind is the kind an end user's account has in refusals (BudgetExceededError.Kind).
const endUserKind = "end_user"

// endUserRequest is the body of POST /api/v1/customers (and, fields given, of PATCH).
type endUserRequest struct {
	EndUserID      string   `json:"end_user_id,omitempty" jsonschema:"description=The id the app gives this end user in its requests (at most 256 characters; required on create)"`
	Alias          string   `json:"alias,omitempty" jsonschema:"description=A label for the end user (at most 256 characters)"`
	Models         []string `json:"models,omitempty" jsonschema:"description=The models this end user's requests may call (as models of POST /api/v1/keys); empty allows every model"`
	MaxBudgetUSD   float64  `json:"max_budget_usd,omitempty" jsonschema:"description=USD the end user's requests may spend across every key (per budget_duration when set); 0 for no bound"`
	SoftBudgetUSD  float64  `json:"soft_budget_usd,omitempty" jsonschema:"description=USD mark that never blocks: crossing it sends a budget alert once per budget_duration; 0 for none"`
	BudgetDuration string   `json:"budget_duration,omitempty" jsonschema:"description=Period after which the end user's spend starts again from zero (30d); empty for all time"`
	Blocked        bool     `json:"blocked,omitempty" jsonschema:"description=true: every request naming this end user is refused until set false"`
	// TokensPerMinute bounds the tokens its answers use per minute (LiteLLM's tpm_limit).
	TokensPerMinute int64 `json:"tokens_per_minute,omitempty" jsonschema:"description=Tokens the end user's answers may use per minute across every key (a request past it is a 429 with Retry-After); 0 for no bound"`
	// RequestsPerMinute bounds the requests naming the end user per minute (LiteLLM's
	// end user rpm_limit).
	RequestsPerMinute int `json:"requests_per_minute,omitempty" jsonschema:"description=Requests naming the end user it may make per minute across every key of its owner (LiteLLM's rpm_limit: one more is a 429 with Retry-After); 0 for no bound"`
	// ModelMaxBudget bounds the end user's spend on single models (LiteLLM's end user
	// model_max_budget, end_user_model_max_budget), as a key's model_max_budget.
	ModelMaxBudget map[string]keyModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models of the end user across every key (LiteLLM's end user model_max_budget): an object of models (named as requests name them) each {max_budget_usd: USD; budget_duration: period}: a model whose budget is spent is skipped for the request's next model and a request all of whose models are refused is a 400 while its other models still work; the model that answers is charged; given on PATCH it replaces them all ({} or null removes them)"`
	// BudgetID names a LiteLLM budget (POST /budget/new) whose max_budget, soft_budget,
	// budget_duration, tpm_limit and rpm_limit become the end user's, now and on every
	// /budget/update.
	BudgetID string `json:"budget_id,omitempty" jsonschema:"description=A budget of this key (POST /budget/new) whose max_budget and soft_budget and budget_duration and tpm_limit and rpm_limit and model_max_budget the end user takes: now and whenever the budget changes; the end user's own budget fields given with it must have the budget's values (null asks for nothing); \"\" on PATCH leaves the budget and keeps its values as the end user's own"`
	// modelMaxBudgetGiven: the request gives model_max_budget, whose models are checked
	// against what the server routes to.
	modelMaxBudgetGiven bool
	// budgetBlock marks Blocked as LiteLLM's max_budget 0 (set by /customer/new only;
	// blocked given outright clears it), as a team's budgetBlock.
	budgetBlock bool
	// fields are the fields of the body that made the request (nil: those set non-zero),
	// for the budget fields given beside a budget_id (takeBudget).
	fields map[string]json.RawMessage
}

// endUser describes an end user.
type endUser struct {
	EndUserID      string   `json:"end_user_id"`
	Object         string   `json:"object" jsonschema:"description=Always end_user"`
	Alias          string   `json:"alias,omitempty"`
	Models         []string `json:"models,omitempty"`
	MaxBudgetUSD   float64  `json:"max_budget_usd,omitempty"`
	SoftBudgetUSD  float64  `json:"soft_budget_usd,omitempty"`
	BudgetDuration string   `json:"budget_duration,omitempty"`
	Blocked        bool     `json:"blocked,omitempty"`
	BudgetBlock    bool     `json:"budget_block,omitempty" jsonschema:"description=The block is LiteLLM's max_budget 0 (a budget of nothing): a new max_budget on /customer/update lifts it"`
	// TokensPerMinute is the end user's tokens per minute bound (0: none).
	TokensPerMinute int64 `json:"tokens_per_minute,omitempty"`
	// RequestsPerMinute is the end user's requests per minute bound (0: none).
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	// ModelMaxBudget is the end user's per-model budgets (spend.models: what each spent).
	ModelMaxBudget map[string]keyModelBudget `json:"model_max_budget,omitempty" jsonschema:"description=USD budgets of single models of the end user (spend.models says what each spent)"`
	// BudgetID is the LiteLLM budget the end user's limits come from ("": its own).
	BudgetID  string    `json:"budget_id,omitempty" jsonschema:"description=The LiteLLM budget (POST /budget/new) its max_budget_usd and soft_budget_usd and budget_duration and tokens_per_minute and requests_per_minute and model_max_budget come from"`
	CreatedAt time.Time `json:"created_at"`
	FirstSeen bool      `json:"created_by_request,omitempty" jsonschema:"description=true: made by the first request that named it (not by POST /api/v1/customers)"`
	Spend     keySpend  `json:"spend" jsonschema:"description=What the end user's requests used across every key (in the current period with budget_duration)"`
}

// storedEndUser is an end user's record in store.EndUsers.
type storedEndUser struct {
	endUser
	Owner string `json:"owner"`
}

// endUserList is the answer of GET /api/v1/customers.
type endUserList struct {
	Object string    `json:"object" jsonschema:"description=Always list"`
	Data   []endUser `json:"data" jsonschema:"description=The end users of this key oldest first"`
	// NextCursor fetches the next page; absent on the last.
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"description=Pass as cursor for the next page; absent on the last page"`
}

// endUserDeletion is the answer of DELETE /api/v1/customers/{end_user_id}.
type endUserDeletion struct {
	EndUserID string `json:"end_user_id"`
	Object    string `json:"object" jsonschema:"description=Always end_user"`
	Deleted   bool   `json:"deleted" jsonschema:"description=Always true (a failed delete is an error)"`
}

// endUserBudgetID is the store.Budgets id of owner's end user id.
func endUserBudgetID(owner, id string) string { return "enduser/" + owner + "/" + id }

// endUserRoutes registers the native end user endpoints; g checks the models one names.
func (s *Server) endUserRoutes(g *completions.Gateway) {
	tags := []string{"End users"}
	notFound := "no end user of this key has this id"
	s.Handle(Route{Method: "POST", Path: "/api/v1/customers", Summary: "Create an end user of an app (LiteLLM's customer): a budget and model list for every request that names it",
		Tags: tags, Request: endUserRequest{}, Response: endUser{}, Status: http.StatusCreated,
		Errors: map[int]string{
			403: "the calling key is itself limited in scope (a virtual or job key)",
			404: "budget_id names no budget of this key (POST /budget/new makes one)",
			409: "an end user of this key has this end_user_id already (made by a request that named it: PATCH it)",
			422: "validation error: the message names the field",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req endUserRequest
			var body []byte
			if err := decodeJSON(r, &req, decodeOptions{Rewrite: keepBody(&body)}); err != nil {
				return err
			}
			req.fields = bodyFields(body)
			e, err := s.createEndUser(r.Context(), g, owner(r), req, "end_user_id")
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusCreated, e)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/customers", Summary: "The end users of this key with their spend, oldest first, a page at a time",
		Tags: tags, Response: endUserList{}, Query: endUserListParams(),
		Errors: map[int]string{422: "a bad listing parameter: the message names it"}},
		listing(s.endUserPage))
	s.Handle(Route{Method: "GET", Path: "/api/v1/customers/{end_user_id}", Summary: "One end user of this key with its spend",
		Tags: tags, Response: endUser{}, Errors: map[int]string{404: notFound}},
		getOwned("end_user_id", s.endUserInfo))
	s.Handle(Route{Method: "PATCH", Path: "/api/v1/customers/{end_user_id}", Summary: "Change an end user's alias or limits or block (the fields given); its spend is kept",
		Tags: tags, Request: endUserRequest{}, Response: endUser{}, Errors: map[int]string{
			404: notFound + ", or budget_id names no budget of this key",
			422: "validation error: the message names the field",
		}},
		patchOwned("end_user_id", func(ctx context.Context, owner, id string) error {
			_, err := storedEndUserOf(ctx, s.cfg.Store, owner, id)
			return err
		}, func(ctx context.Context, owner, id string, body json.RawMessage) (*endUser, error) {
			return s.updateEndUser(ctx, g, owner, id, body)
		}))
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/customers/{end_user_id}", Summary: "Delete an end user and its spend (a later request naming it makes it again with no limits)",
		Tags: tags, Response: endUserDeletion{}, Errors: map[int]string{404: notFound}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("end_user_id")
			if err := s.deleteEndUsers(r.Context(), owner(r), []string{id}); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, endUserDeletion{EndUserID: id, Object: "end_user", Deleted: true})
			return nil
		})
}

// endUserNotFound is the 404 of owner's missing end user id.
func endUserNotFound(id string) *APIError {
	return paramNotFound("end_user_id", "end_user_id: no end user %q of this key (POST /api/v1/customers or /customer/new makes one, as does a request naming it)", id)
}

// storedEndUserOf reads owner's end user id through rd, or answers 404 naming end_user_id.
func storedEndUserOf(ctx context.Context, rd store.Reader, owner, id string) (storedEndUser, error) {
	if id == "" {
		return storedEndUser{}, paramNotFound("end_user_id", "end_user_id: no end user given")
	}
	return ownedRecord[storedEndUser](ctx, rd, store.EndUsers, owner, id, "end user", func() error { return endUserNotFound(id) })
}

// checkEndUserID refuses an end user id that is empty, too long, not UTF-8, holds control
// characters or is "." or ".." (field names the field in the message).
func checkEndUserID(field, id string) error {
	if err := endUserIDProblem(field, id); err != nil {
		err.Param = field
		return err
	}
	return nil
}

// endUserIDProblem is checkEndUserID's refusal, before it names field as its param.
func endUserIDProblem(field, id string) *APIError {
	switch {
	case id == "":
		return Validation(http.StatusUnprocessableEntity, "%s: required: the id the app gives the end user", field)
	case len(id) > maxEndUserIDLength:
		return Validation(http.StatusUnprocessableEntity, "%s: at most %d characters, got %d", field, maxEndUserIDLength, len(id))
	case !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		return Validation(http.StatusUnprocessableEntity, "%s: must be text without control characters, got %q", field, id)
	}
	// A URL path cleans "." and ".." away: /api/v1/customers/{id} could not reach it.
	return unreachableIDProblem(field, id, "an end user's", http.StatusUnprocessableEntity)
}

// checkEndUserRequest validates req (its checks are a key's, on the fields an end user
// has) and returns the end user account's limits.
func checkEndUserRequest(g *completions.Gateway, req endUserRequest, checkModels bool) (completions.BudgetLimits, error) {
	if len(req.Alias) > maxEndUserAliasLength {
		return completions.BudgetLimits{}, Validation(http.StatusUnprocessableEntity, "alias: at most %d characters, got %d", maxEndUserAliasLength, len(req.Alias))
	}
	return checkKeyRequest(g, keyRequest{Models: req.Models, MaxBudgetUSD: req.MaxBudgetUSD, SoftBudgetUSD: req.SoftBudgetUSD,
		BudgetDuration: req.BudgetDuration, Blocked: req.Blocked, TokensPerMinute: req.TokensPerMinute, RequestsPerMinute: req.RequestsPerMinute,
		ModelMaxBudget: req.ModelMaxBudget, modelLimitsGiven: req.modelMaxBudgetGiven}, time.Now(), checkModels)
}

// applyTo sets e's fields to req's (limits is req checked).
func (req endUserRequest) applyTo(e *endUser, limits completions.BudgetLimits) {
	e.Alias, e.Models, e.MaxBudgetUSD, e.SoftBudgetUSD = req.Alias, limits.AllowedModels, req.MaxBudgetUSD, req.SoftBudgetUSD
	e.BudgetDuration, e.Blocked, e.TokensPerMinute, e.BudgetID = req.BudgetDuration, req.Blocked, req.TokensPerMinute, req.BudgetID
	e.RequestsPerMinute, e.ModelMaxBudget = req.RequestsPerMinute, nil
	if len(req.ModelMaxBudget) > 0 {
		e.ModelMaxBudget = req.ModelMaxBudget
	}
	e.BudgetBlock = req.Blocked && req.budgetBlock
	if len(e.Models) == 0 {
		e.Models = nil
	}
}

// requestOf is the request that would make e as it is.
func (e endUser) requestOf() endUserRequest {
	return endUserRequest{EndUserID: e.EndUserID, Alias: e.Alias, Models: e.Models, MaxBudgetUSD: e.MaxBudgetUSD,
		SoftBudgetUSD: e.SoftBudgetUSD, BudgetDuration: e.BudgetDuration, Blocked: e.Blocked, budgetBlock: e.BudgetBlock,
		TokensPerMinute: e.TokensPerMinute, RequestsPerMinute: e.RequestsPerMinute, ModelMaxBudget: e.ModelMaxBudget, BudgetID: e.BudgetID}
}

// endUserLimits is the account limits of e as stored (its fields were checked when set).
func endUserLimits(e endUser) completions.BudgetLimits {
	l := completions.BudgetLimits{AllowedModels: e.Models, MaxCostUSD: e.MaxBudgetUSD, SoftCostUSD: e.SoftBudgetUSD,
		TokensPerMinute: e.TokensPerMinute, Blocked: e.Blocked, Models: keyModelLimitsOf(virtualKey{ModelMaxBudget: e.ModelMaxBudget})}
	if e.BudgetDuration != "" {
		l.ResetEvery, _ = parseBudgetDuration(e.BudgetDuration)
	}
	return l
}

// createEndUser validates req and stores the end user and its account in one transaction
// (idField names the id in a refusal past Config.MaxEndUsersPerKey).
func (s *Server) createEndUser(ctx context.Context, g *completions.Gateway, owner string, req endUserRequest, idField string) (*endUser, error) {
	if err := checkEndUserID("end_user_id", req.EndUserID); err != nil {
		return nil, err
	}
	if _, err := checkEndUserRequest(g, req, true); err != nil {
		return nil, err
	}
	e := endUser{EndUserID: req.EndUserID, Object: "end_user", CreatedAt: time.Now().UTC()}
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(endUserBudgetID(owner, e.EndUserID)), func(tx store.Tx) error {
		if err := takeBudgetOf(ctx, tx, owner, &req, req.budgetFieldsGiven()); err != nil {
			return err
		}
		limits, err := checkEndUserRequest(g, req, false)
		if err != nil {
			return err
		}
		req.applyTo(&e, limits)
		if _, err := store.GetJSON[storedEndUser](ctx, tx, store.EndUsers, owner+"/"+e.EndUserID); err == nil {
			c := Errorf(http.StatusConflict, KindConflict, "end_user_id: this key has an end user %q already", e.EndUserID)
			c.Param = "end_user_id"
			return c
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		have, err := s.endUserRoom(ctx, tx, owner, idField, 1)
		if err != nil {
			return err
		}
		if err := completions.PutSharedBudget(ctx, tx, endUserBudgetID(owner, e.EndUserID), limits); err != nil {
			return err
		}
		if err := store.PutJSON(ctx, tx, store.EndUsers, owner+"/"+e.EndUserID, storedEndUser{endUser: e, Owner: owner}); err != nil {
			return err
		}
		if err := moveBudgetCustomer(ctx, tx, owner, e.EndUserID, "", e.BudgetID); err != nil {
			return err
		}
		return putEndUserCount(ctx, tx, owner, have+1)
	})
	if err != nil {
		return nil, fmt.Errorf("server: creating end user %s: %w", e.EndUserID, err)
	}
	s.endUserChanged(owner, e.EndUserID)
	s.log.InfoContext(ctx, "end user created", "owner", owner, "end_user_id", e.EndUserID)
	return &e, nil
}

// endUserInfo returns owner's end user id with its spend, or a 404.
func (s *Server) endUserInfo(ctx context.Context, owner, id string) (*endUser, error) {
	rec, err := storedEndUserOf(ctx, s.cfg.Store, owner, id)
	if err != nil {
		return nil, err
	}
	e := s.endUserWithSpend(ctx, owner, rec.endUser)
	return &e, nil
}

// endUserWithSpend fills in e's spend from its account.
func (s *Server) endUserWithSpend(ctx context.Context, owner string, e endUser) endUser {
	if b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, endUserBudgetID(owner, e.EndUserID)); err == nil {
		u := b.Used(ctx)
		e.Spend = keySpend{Requests: u.Calls, Tokens: u.Tokens, CostUSD: u.CostUSD, Models: keyModelSpendOf(virtualKey{ModelMaxBudget: e.ModelMaxBudget}, u)}
		if !u.PeriodStart.IsZero() {
			e.Spend.PeriodStart = &u.PeriodStart
		}
	}
	return e
}

// updateEndUser applies body (the fields to change) to owner's end user id: read, merged,
// checked and written with its account's limits in one transaction, so a failed update
// changes nothing and the end user's spend is kept. adjust, when given, changes the
// request against the stored end user inside the transaction (the lift of LiteLLM's
// max_budget 0).
func (s *Server) updateEndUser(ctx context.Context, g *completions.Gateway, owner, id string, body json.RawMessage, adjust ...func(req *endUserRequest, prev endUser)) (*endUser, error) {
	var given map[string]json.RawMessage
	if json.Unmarshal(body, &given) != nil || given == nil {
		return nil, Validation(http.StatusUnprocessableEntity, "the body must be a JSON object of the fields to change")
	}
	_, modelsGiven := given["models"]
	var e endUser
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(endUserBudgetID(owner, id)), func(tx store.Tx) error {
		rec, err := storedEndUserOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		req := rec.requestOf()
		if _, ok := given["blocked"]; ok {
			req.budgetBlock = false // blocked said outright
		}
		if _, ok := given["model_max_budget"]; ok {
			req.ModelMaxBudget, req.modelMaxBudgetGiven = nil, true // replaced whole (decoding would merge the maps)
		}
		if err := decodeExact(body, &req, http.StatusUnprocessableEntity); err != nil {
			return err
		}
		for _, a := range adjust {
			a(&req, rec.endUser)
		}
		if req.EndUserID != rec.EndUserID {
			v := Validation(http.StatusUnprocessableEntity, "end_user_id: an end user's id cannot be changed (it is %q)", rec.EndUserID)
			v.Param = "end_user_id"
			return v
		}
		if err := takeBudgetOf(ctx, tx, owner, &req, given); err != nil {
			return err
		}
		limits, err := checkEndUserRequest(g, req, modelsGiven)
		if err != nil {
			return err
		}
		e = rec.endUser
		req.applyTo(&e, limits)
		if err := completions.SetSharedBudgetLimits(ctx, tx, endUserBudgetID(owner, id), limits); err != nil {
			return err
		}
		if err := moveBudgetCustomer(ctx, tx, owner, id, rec.BudgetID, e.BudgetID); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.EndUsers, owner+"/"+id, storedEndUser{endUser: e, Owner: owner})
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating end user %s: %w", id, err)
	}
	s.endUserChanged(owner, id)
	s.log.InfoContext(ctx, "end user updated", "owner", owner, "end_user_id", id)
	e = s.endUserWithSpend(ctx, owner, e)
	return &e, nil
}

// setEndUsersBlocked blocks or unblocks owner's end users ids in one transaction and
// returns them. Blocking makes those not yet seen (as LiteLLM's /customer/block does);
// unblocking one not seen is refused with *endUsersMissing, listing them, and changes
// none.
func (s *Server) setEndUsersBlocked(ctx context.Context, owner string, ids []string, blocked bool) ([]endUser, error) {
	for i, id := range ids {
		if err := checkEndUserID(fmt.Sprintf("user_ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	var out []endUser
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(eachAccount(ids, func(id string) string { return endUserBudgetID(owner, id) })...), func(tx store.Tx) error {
		out = out[:0]
		var missing []string
		for _, id := range ids {
			if _, err := tx.Get(ctx, store.EndUsers, owner+"/"+id); errors.Is(err, store.ErrNotFound) {
				if !slices.Contains(missing, id) { // an id given twice is made once
					missing = append(missing, id)
				}
			} else if err != nil {
				return err
			}
		}
		if !blocked && len(missing) > 0 {
			return &endUsersMissing{ids: missing}
		}
		have := 0
		if len(missing) > 0 {
			var err error
			if have, err = s.endUserRoom(ctx, tx, owner, "user_ids", len(missing)); err != nil {
				return err
			}
			if err := putEndUserCount(ctx, tx, owner, have+len(missing)); err != nil {
				return err
			}
		}
		for _, id := range ids {
			rec, err := store.GetJSON[storedEndUser](ctx, tx, store.EndUsers, owner+"/"+id)
			switch {
			case errors.Is(err, store.ErrNotFound):
				rec = storedEndUser{endUser: endUser{EndUserID: id, Object: "end_user", CreatedAt: time.Now().UTC()}, Owner: owner}
				if err := completions.PutSharedBudget(ctx, tx, endUserBudgetID(owner, id), completions.BudgetLimits{}); err != nil {
					return err
				}
			case err != nil:
				return err
			}
			rec.Blocked, rec.BudgetBlock = blocked, false
			if err := completions.SetSharedBudgetLimits(ctx, tx, endUserBudgetID(owner, id), endUserLimits(rec.endUser)); err != nil {
				return err
			}
			if err := store.PutJSON(ctx, tx, store.EndUsers, owner+"/"+id, rec); err != nil {
				return err
			}
			out = append(out, rec.endUser)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("server: blocking end users: %w", err)
	}
	s.log.InfoContext(ctx, "end users blocked", "owner", owner, "end_user_ids", ids, "blocked", blocked)
	for i := range out {
		out[i] = s.endUserWithSpend(ctx, owner, out[i])
	}
	return out, nil
}

// deleteEndUsers deletes owner's end users ids and their accounts in one transaction: all
// or, when one is not found, none (the error lists the missing).
func (s *Server) deleteEndUsers(ctx context.Context, owner string, ids []string) error {
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(eachAccount(ids, func(id string) string { return endUserBudgetID(owner, id) })...), func(tx store.Tx) error {
		var missing []string
		for _, id := range ids {
			if _, err := store.GetJSON[storedEndUser](ctx, tx, store.EndUsers, owner+"/"+id); errors.Is(err, store.ErrNotFound) {
				missing = append(missing, id)
			} else if err != nil {
				return err
			}
		}
		if len(missing) > 0 {
			return &endUsersMissing{ids: missing}
		}
		have, err := endUserCount(ctx, tx, owner) // before any is deleted
		if err != nil {
			return err
		}
		deleted := 0
		for _, id := range ids {
			rec, err := store.GetJSON[storedEndUser](ctx, tx, store.EndUsers, owner+"/"+id)
			if errors.Is(err, store.ErrNotFound) {
				continue // given twice: deleted already
			} else if err != nil {
				return err
			}
			if err := moveBudgetCustomer(ctx, tx, owner, id, rec.BudgetID, ""); err != nil {
				return err
			}
			if err := tx.Delete(ctx, store.Budgets, endUserBudgetID(owner, id)); err != nil {
				return err
			}
			if err := tx.Delete(ctx, store.EndUsers, owner+"/"+id); err != nil {
				return err
			}
			deleted++
		}
		return putEndUserCount(ctx, tx, owner, have-deleted)
	})
	var m *endUsersMissing
	if errors.As(err, &m) {
		if len(ids) == 1 {
			return endUserNotFound(ids[0])
		}
		return m
	}
	if err != nil {
		return fmt.Errorf("server: deleting end users %s: %w", strings.Join(ids, ", "), err)
	}
	s.endUserChanged(owner, ids...)
	s.log.InfoContext(ctx, "end users deleted", "owner", owner, "end_user_ids", ids)
	return nil
}

// endUsersMissing is deleteEndUsers' refusal: ids are not end users of the owner.
type endUsersMissing struct{ ids []string }

func (e *endUsersMissing) Error() string {
	return "end users not found: " + strings.Join(e.ids, ", ")
}

// endUserKey is the context key of a gateway request's end user (withEndUserOf).
type endUserKey struct{}

// endUserNamed is a gateway request's end user id and the header or body field that named
// it (for refusals of it).
type endUserNamed struct{ field, id string }

// litellmEndUserFields names withEndUserNamed's fromBody on chat and text completions,
// in LiteLLM's order; responsesEndUserFields on /v1/responses, where OpenAI's
// safety_identifier follows user.
var (
	litellmEndUserFields   = []string{"user", "litellm_metadata.user", "metadata.user_id"}
	responsesEndUserFields = []string{"user", "safety_identifier", "litellm_metadata.user", "metadata.user_id"}
)

// withEndUserOf returns r carrying its end user (requestEndUser) for gatewayScope;
// fromBody is the body's user (the surfaces with no other field naming one).
func withEndUserOf(r *http.Request, fromBody ...string) *http.Request {
	return withEndUserNamed(r, []string{"user"}, fromBody...)
}

// withEndUserNamed is withEndUserOf with fromBody's field names (names[i] names
// fromBody[i]).
func withEndUserNamed(r *http.Request, names []string, fromBody ...string) *http.Request {
	e := requestEndUser(r, names, fromBody...)
	if e.id == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), endUserKey{}, e))
}

// keyScope is the gateway scope of an authenticated request (completionsScope) drawing
// on its end user's account too: the one withEndUserOf named, else its headers'.
func (s *Server) keyScope(r *http.Request, received time.Time) (completions.Scope, error) {
	sc := completionsScope(r, received)
	e, _ := r.Context().Value(endUserKey{}).(endUserNamed)
	if e.id == "" {
		e = requestEndUser(r, nil)
	}
	sc.EndUser = e.id // recorded in the request history (/spend/logs' end_user)
	return s.withEndUser(r.Context(), sc, e.field, e.id)
}

// gatewayScope is the gateway scope of an authenticated request (keyScope) drawing on the
// proxy-wide account too (Config.ProxyMaxBudgetUSD).
func (s *Server) gatewayScope(r *http.Request, received time.Time) (completions.Scope, error) {
	sc, err := s.keyScope(r, received)
	if err != nil {
		return sc, err
	}
	return s.withProxyBudget(sc), nil
}

// withProxyBudget is sc drawing on the proxy-wide account (sc itself without one).
func (s *Server) withProxyBudget(sc completions.Scope) completions.Scope {
	if s.proxyBudget == nil {
		return sc
	}
	return drawingOn(sc, s.proxyBudget, proxyBudgetKind, ProxyBudgetID)
}

// drawingOn is sc drawing on outer too (kind and name say which in its refusals): the
// operator's own key, which has no account, gets an unbounded one of this request only.
func drawingOn(sc completions.Scope, outer *completions.Budget, kind, name string) completions.Scope {
	b := sc.Budget
	if b == nil {
		b = completions.NewBudget(completions.BudgetLimits{})
	}
	sc.Budget = b.Within(outer, kind, name)
	return sc
}

// requestEndUser names the end user of a gateway request r, as LiteLLM reads it: its
// x-litellm-customer-id or x-litellm-end-user-id header, else the first of fromBody not
// empty (in LiteLLM's order: the body's user, OpenAI's safety_identifier on /v1/responses,
// litellm_metadata.user, metadata.user_id), with the header or field (names[i] for
// fromBody[i]; user past names) that gave it.
func requestEndUser(r *http.Request, names []string, fromBody ...string) endUserNamed {
	for _, h := range []string{"X-Litellm-Customer-Id", "X-Litellm-End-User-Id"} {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return endUserNamed{field: strings.ToLower(h), id: v}
		}
	}
	for i, v := range fromBody {
		if v != "" {
			field := "user"
			if i < len(names) {
				field = names[i]
			}
			return endUserNamed{field: field, id: v}
		}
	}
	return endUserNamed{}
}

// withEndUser makes sc's requests draw on the account of its owner's end user id as well
// ("": sc unchanged); an end user not stored yet is made by the request's reserved call
// (endUserAccount). The request is one of the end user's requests_per_minute
// (endUserWithinRate). field names where id came from in a refusal of it.
func (s *Server) withEndUser(ctx context.Context, sc completions.Scope, field, id string) (completions.Scope, error) {
	if id == "" || s.cfg.Store == nil {
		return sc, nil
	}
	if err := checkEndUserID(field, id); err != nil {
		return sc, err
	}
	eb, err := s.endUserAccount(ctx, sc.Owner, field, id)
	if err != nil {
		return sc, err
	}
	if err := s.endUserWithinRate(ctx, sc.Owner, id, time.Now()); err != nil {
		return sc, err
	}
	return drawingOn(sc, eb, endUserKind, id), nil
}

// endUserWithinRate takes a request of owner's end user id at now from its
// requests_per_minute (LiteLLM's end user rpm_limit, a budget's rpm_limit it took), in
// this process's bucket and, through the shared counters, the other replicas' (as a
// virtual key's own rate): past it a 429 with Retry-After in LiteLLM's words (its rate
// limiter's for an end_user). An end user not stored yet, or without a bound, takes
// nothing.
func (s *Server) endUserWithinRate(ctx context.Context, owner, id string, now time.Time) error {
	rate, err := s.endUserRPM(ctx, owner, id, now)
	if err != nil {
		return err
	}
	if rate <= 0 {
		return nil
	}
	bucket := endUserBudgetID(owner, id)
	ok, wait, _ := s.vkRL.takeLeft(bucket, rate, now)
	if ok {
		if s.shared != nil {
			s.shared.Add(sharedVirtualRate+strconv.Itoa(rate)+"/"+bucket, 1, now)
		}
		return nil
	}
	secs := int(wait/time.Second) + 1
	ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests,
		"Rate limit exceeded for end_user: %s. Limit type: requests. Current limit: %d, Remaining: 0. Limit resets at: %s",
		id, rate, now.Add(time.Duration(secs)*time.Second).UTC().Format("2006-01-02 15:04:05 UTC"))
	ae.Header = http.Header{"Retry-After": []string{strconv.Itoa(secs)}}
	ae.Retryable = true
	return ae
}

// endUserRPM is the requests_per_minute of owner's end user id (0: none, or not stored
// yet), read from its record at most every endUserRateTTL (endUserRates).
func (s *Server) endUserRPM(ctx context.Context, owner, id string, now time.Time) (int, error) {
	k := ownedEndUser{owner, id}
	rpm, gen, ok := s.endUserRates.lookup(k, now)
	if ok {
		return rpm, nil
	}
	rec, err := store.GetJSON[storedEndUser](ctx, s.cfg.Store, store.EndUsers, owner+"/"+id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rec = storedEndUser{} // made by its first request with no bound, or by an operator (forgets this)
	case err != nil:
		return 0, fmt.Errorf("server: reading end user %s: %w", id, err)
	}
	s.endUserRates.keep(k, rec.RequestsPerMinute, gen, now)
	return rec.RequestsPerMinute, nil
}

// endUserAccount loads the account of owner's end user id; one not stored yet is made,
// with no limits, by the first call the gateway reserves on it (completions.
// PendingSharedBudget: the end user's description and account in that call's store
// transaction), so a request the gateway refuses before (a blocked or spent key, a model
// the key may not call, a bad request) makes no end user.
func (s *Server) endUserAccount(ctx context.Context, owner, field, id string) (*completions.Budget, error) {
	bid := endUserBudgetID(owner, id)
	b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, bid)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return b, err
	}
	// Refused here, before any model is called, past the bound; checked again when made.
	if _, err := s.endUserRoom(ctx, s.cfg.Store, owner, field, 1); err != nil {
		return nil, err
	}
	return completions.PendingSharedBudget(s.cfg.Store, bid, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.Get(ctx, store.EndUsers, owner+"/"+id); err == nil {
			return nil // made meanwhile
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		have, err := s.endUserRoom(ctx, tx, owner, field, 1)
		if err != nil {
			return err
		}
		e := endUser{EndUserID: id, Object: "end_user", CreatedAt: time.Now().UTC(), FirstSeen: true}
		if err := store.PutJSON(ctx, tx, store.EndUsers, owner+"/"+id, storedEndUser{endUser: e, Owner: owner}); err != nil {
			return err
		}
		return putEndUserCount(ctx, tx, owner, have+1)
	}), nil
}

// blockedEndUser reports whether err is the refusal of a blocked end user's account.
func blockedEndUser(err error) bool {
	var be *completions.BudgetExceededError
	return errors.As(err, &be) && be.Kind == endUserKind && be.Limits.Blocked
}

// endUserRefusal is an end user account's refusal in LiteLLM's words and status: 400
// for a blocked end user, 429 (as a key's or team's spent budget) for one over budget.
func endUserRefusal(e *completions.BudgetExceededError) *APIError {
	if e.Limits.Blocked {
		return Errorf(http.StatusBadRequest, KindBadRequest, "User blocked from making LLM API Calls. User=%s", e.Name)
	}
	return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "ExceededBudget: End User=%s over budget. Spend=%s, Budget=%s",
		e.Name, pythonFloat(e.Used.CostUSD), pythonFloat(e.Limits.MaxCostUSD))
}
