package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Organizations are LiteLLM's level above teams: an organization's models bound what its
// teams may name, and its account (max_budget per budget_duration, tpm_limit) is one more
// account every key of its teams spends from, beside the key's and the team's, with its
// rpm_limit shared by all those keys; a blocked or spent organization refuses them all
// (completions.Budget.AddParent). An organization takes a LiteLLM budget by budget_id as a
// virtual key does (keybudgets.go): the budget's max_budget, soft_budget, budget_duration,
// tpm_limit and rpm_limit become its own (LiteLLM's organization limits; not the budget's
// max_parallel_requests or model_max_budget, which LiteLLM does not hold an organization
// to), and a /budget/update reaches it. Members are users with an organization role (org_admin,
// internal_user, internal_user_viewer), kept as memberships.
//
// Records: the organization in store.Organizations under "<owner>/<organization_id>", its
// account in store.Budgets under organizationBudgetID, its memberships in
// store.OrganizationMembers under "<owner>/<organization_id>/<user_id>"; a team names its
// organization in its record, so every replica resolves a key of the team inside the
// organization's account. Organizations are the calling key's, as its teams are; deleting
// one deletes its teams, their keys and its memberships, as LiteLLM's /organization/delete
// does.

// Bounds of organizations.
const (
	// maxOrganizationsPerOwner bounds the organizations one key may have.
	maxOrganizationsPerOwner = 1000
	// maxOrganizationIDLength bounds an organization's id.
	maxOrganizationIDLength = 128
	// organizationKind is the kind of an organization's account in a key's refusals.
	organizationKind = "organization"
	// orgMemberKind is the kind of an organization membership's account in a key's
	// refusals.
	orgMemberKind = "organization_member"
)

// organizationRoles are the roles a member may have in an organization (LiteLLM's).
var organizationRoles = []string{"org_admin", "internal_user", "internal_user_viewer"}

// organization is an organization's record.
type organization struct {
	OrganizationID    string         `json:"organization_id"`
	Alias             string         `json:"organization_alias"`
	Models            []string       `json:"models,omitempty"`
	BudgetID          string         `json:"budget_id,omitempty"`
	MaxBudgetUSD      float64        `json:"max_budget_usd,omitempty"`
	SoftBudgetUSD     float64        `json:"soft_budget_usd,omitempty"`
	BudgetDuration    string         `json:"budget_duration,omitempty"`
	TokensPerMinute   int64          `json:"tokens_per_minute,omitempty"`
	RequestsPerMinute int            `json:"requests_per_minute,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	Blocked           bool           `json:"blocked,omitempty"`
	// BudgetBlock marks Blocked as LiteLLM's max_budget 0, which another max_budget lifts.
	BudgetBlock bool      `json:"budget_block,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	CreatedBy   string    `json:"created_by"`
	UpdatedAt   time.Time `json:"updated_at"`
	UpdatedBy   string    `json:"updated_by"`
}

// storedOrganization is an organization's record in store.Organizations.
type storedOrganization struct {
	organization
	Owner string `json:"owner"`
}

// organizationMember is a membership's record in store.OrganizationMembers.
type organizationMember struct {
	OrganizationID string `json:"organization_id"`
	UserID         string `json:"user_id"`
	Role           string `json:"user_role"`
	// MaxBudgetInOrganization bounds what the user's keys of the organization (its own and
	// its teams') spend together (0: no bound unless BudgetBlock).
	MaxBudgetInOrganization float64 `json:"max_budget_in_organization,omitempty"`
	// BudgetBlock is max_budget_in_organization 0: the user's keys of the organization's
	// teams are refused.
	BudgetBlock bool      `json:"budget_block,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// limits is the membership account's limits.
func (m organizationMember) limits() completions.BudgetLimits {
	return completions.BudgetLimits{MaxCostUSD: m.MaxBudgetInOrganization, Blocked: m.BudgetBlock}
}

// maxBudget is m's max_budget_in_organization in LiteLLM's terms: nil for none, 0 for a
// block.
func (m organizationMember) maxBudget() *float64 {
	switch {
	case m.BudgetBlock:
		return new(float64)
	case m.MaxBudgetInOrganization > 0:
		v := m.MaxBudgetInOrganization
		return &v
	}
	return nil
}

// orgMemberBudgetID is the store.Budgets id of user's membership of owner's organization
// org: the account the user's keys of the organization (its own and its teams') spend
// from together.
func orgMemberBudgetID(owner, org, user string) string {
	return "orgmember/" + owner + "/" + org + "/" + user
}

// checkMaxBudgetInOrganization reads max_budget_in_organization: the membership's bound
// and block.
func checkMaxBudgetInOrganization(v *float64) (bound float64, block bool, err error) {
	if v == nil {
		return 0, false, nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
		return 0, false, paramError("max_budget_in_organization", "max_budget_in_organization: must be a number of at least 0 (0 blocks the member's keys of the organization), got %v", *v)
	}
	return *v, *v == 0, nil
}

// putOrganizationMember stores owner's membership m and its account (its limits replaced
// when it has one, its spend kept) through tx.
func putOrganizationMember(ctx context.Context, tx store.Tx, owner string, m organizationMember) error {
	if err := store.PutJSON(ctx, tx, store.OrganizationMembers, owner+"/"+m.OrganizationID+"/"+m.UserID, m); err != nil {
		return err
	}
	id := orgMemberBudgetID(owner, m.OrganizationID, m.UserID)
	if _, err := tx.Get(ctx, store.Budgets, id); errors.Is(err, store.ErrNotFound) {
		return completions.PutSharedBudget(ctx, tx, id, m.limits())
	} else if err != nil {
		return fmt.Errorf("server: reading the account of %s in organization %s: %w", m.UserID, m.OrganizationID, err)
	}
	return completions.SetSharedBudgetLimits(ctx, tx, id, m.limits())
}

// deleteOrganizationMember removes user's membership of owner's organization org and its
// account through tx; a missing one is not an error.
func deleteOrganizationMember(ctx context.Context, tx store.Tx, owner, org, user string) error {
	if err := tx.Delete(ctx, store.OrganizationMembers, owner+"/"+org+"/"+user); err != nil {
		return err
	}
	return tx.Delete(ctx, store.Budgets, orgMemberBudgetID(owner, org, user))
}

// joinOrganizationMember puts a virtual key's budget b (of user, of owner's organization
// org or of a team in it) inside the account of the user's membership of the organization, in
// st, when the membership has one: a key whose user is not a member (or whose membership
// an earlier build made, without an account) draws on nothing more.
func joinOrganizationMember(ctx context.Context, st *store.Store, owner, org, user string, b *completions.Budget) error {
	mb, err := completions.LoadSharedBudget(ctx, st, orgMemberBudgetID(owner, org, user))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b.AddParent(mb, orgMemberKind, user+" in Organization="+org)
	return nil
}

// organizationBudgetID is the store.Budgets id of owner's organization id.
func organizationBudgetID(owner, id string) string { return "org/" + owner + "/" + id }

// organizationLimits is the account limits of o (its fields checked when set).
func organizationLimits(o organization) completions.BudgetLimits {
	l := completions.BudgetLimits{AllowedModels: o.Models, MaxCostUSD: o.MaxBudgetUSD, SoftCostUSD: o.SoftBudgetUSD,
		TokensPerMinute: o.TokensPerMinute, Blocked: o.Blocked}
	if o.BudgetDuration != "" {
		l.ResetEvery, _ = parseBudgetDuration(o.BudgetDuration)
	}
	return l
}

// organizationNotFound is the 404 of an organization id that owner has not, naming param.
func organizationNotFound(param, id string) *APIError {
	return paramNotFound(param, "%s: no organization %q of this key (POST /organization/new makes one)", param, id)
}

// storedOrganizationOf reads owner's organization id through rd, or answers 404 naming
// param.
func storedOrganizationOf(ctx context.Context, rd store.Reader, owner, id, param string) (storedOrganization, error) {
	if id == "" {
		return storedOrganization{}, paramError(param, "%s: required: the organization", param)
	}
	return ownedRecord[storedOrganization](ctx, rd, store.Organizations, owner, id, "organization", func() error {
		return organizationNotFound(param, id)
	})
}

// checkOrganizationID refuses an organization id that is too long, holds anything but
// letters, digits and . _ - : (it is part of store keys), or is "." or "..".
func checkOrganizationID(id string) error {
	if len(id) > maxOrganizationIDLength {
		return paramError("organization_id", "organization_id: at most %d characters, got %d", maxOrganizationIDLength, len(id))
	}
	for _, c := range id {
		if !(c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("._-:", c))) {
			return paramError("organization_id", "organization_id: letters, digits and . _ - : only, got %q", id)
		}
	}
	if e := unreachableIDProblem("organization_id", id, "an organization's", http.StatusBadRequest); e != nil {
		return e
	}
	return nil
}

// organizationNativeNames are the native check's field names and LiteLLM's organization
// fields, for the failures.
var organizationNativeNames = []litellmName{
	{"max_budget_usd", "max_budget"}, {"name", "organization_alias"}, {"tokens_per_minute", "tpm_limit"},
	{"requests_per_minute", "rpm_limit"}, {"budget_duration", "budget_duration"}, {"soft_budget_usd", "soft_budget"},
	{"models", "models"}, {"metadata", "metadata"}, {"budget_id", "budget_id"},
}

// checkOrganization validates o's fields (a team's checks, on the fields an organization
// has) and returns its account's limits; failures are 400s naming LiteLLM's fields.
func checkOrganization(g *completions.Gateway, o organization, checkModels bool) (completions.BudgetLimits, error) {
	if strings.TrimSpace(o.Alias) == "" {
		return completions.BudgetLimits{}, paramError("organization_alias", "organization_alias: required: the organization's name")
	}
	if math.IsNaN(o.SoftBudgetUSD) || math.IsInf(o.SoftBudgetUSD, 0) || o.SoftBudgetUSD < 0 {
		return completions.BudgetLimits{}, paramError("soft_budget", "soft_budget: must be a number of at least 0, got %v", o.SoftBudgetUSD)
	}
	_, err := checkTeamRequest(g, teamRequest{Name: o.Alias, Models: o.Models, MaxBudgetUSD: o.MaxBudgetUSD, BudgetDuration: o.BudgetDuration,
		RequestsPerMinute: o.RequestsPerMinute, TokensPerMinute: o.TokensPerMinute, Metadata: o.Metadata, Blocked: o.Blocked}, checkModels)
	if err != nil {
		return completions.BudgetLimits{}, organizationFieldNames(err)
	}
	return organizationLimits(o), nil
}

// organizationFieldNames rewrites a 422 of the native checks as a 400 naming LiteLLM's
// organization fields.
func organizationFieldNames(err error) error {
	err = litellmRenamed(err, organizationNativeNames)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity {
		out := *ae
		out.Status = http.StatusBadRequest
		return &out
	}
	return err
}

// checkOrganizationModels answers 422 naming models (a 400 on LiteLLM's routes) when one of models is not among those
// of owner's organization id (an organization without models allows every model), as g
// resolves them; who says whose models they are. An unknown organization is a 404 naming
// organization_id.
func checkOrganizationModels(ctx context.Context, g *completions.Gateway, rd store.Reader, owner, id string, models []string, who string) error {
	rec, err := storedOrganizationOf(ctx, rd, owner, id, "organization_id")
	if err != nil {
		return err
	}
	return modelsWithin(g, rec.organization, models, who)
}

// modelsWithin answers 422 naming models (a 400 on LiteLLM's routes) when one of models
// is not among o's.
func modelsWithin(g *completions.Gateway, o organization, models []string, who string) error {
	if len(o.Models) == 0 {
		return nil
	}
	scope := completions.Scope{Budget: completions.NewBudget(completions.BudgetLimits{AllowedModels: o.Models})}
	for i, m := range models {
		if !g.Allows(scope, m) {
			e := Validation(http.StatusUnprocessableEntity, "models[%d]: %q is not among the models of organization %s (%s): %s may name only the organization's models",
				i, m, o.OrganizationID, strings.Join(o.Models, ", "), who)
			e.Param = "models"
			return e
		}
	}
	return nil
}

// checkTeamOrganization, for a team of owner naming models in organization id ("": none),
// answers 404 naming organization_id when there is no such organization and 400 naming
// models when the team names a model outside the organization's.
func checkTeamOrganization(ctx context.Context, g *completions.Gateway, rd store.Reader, owner, id string, models []string) error {
	if id == "" {
		return nil
	}
	return checkOrganizationModels(ctx, g, rd, owner, id, models, "a team in an organization")
}

// checkTeamKeysInOrganization answers 422 naming organization_id (a 400 on LiteLLM's
// routes) when a virtual key of owner's team teamID, read through rd, names a model
// outside organization o's, naming the key and the model: a team moved into an
// organization, or an organization's narrowed models, must leave its keys within them
// (change the key's models first with /key/update). A key without models calls what its
// team and the organization allow.
func checkTeamKeysInOrganization(ctx context.Context, g *completions.Gateway, rd store.Reader, owner, teamID string, o organization) error {
	if len(o.Models) == 0 {
		return nil
	}
	scope := completions.Scope{Budget: completions.NewBudget(completions.BudgetLimits{AllowedModels: o.Models})}
	return eachTeamKey(ctx, rd, owner, teamID, func(rec storedVirtualKey) error {
		for i, m := range rec.Models {
			if !g.Allows(scope, m) {
				e := Validation(http.StatusUnprocessableEntity, "organization_id: key %s of team %s names %q (its models[%d]), which is not among the models of organization %s (%s): change the key's models first (/key/update)",
					rec.ID, teamID, m, i, o.OrganizationID, strings.Join(o.Models, ", "))
				e.Param = "organization_id"
				return e
			}
		}
		return nil
	})
}

// checkKeyOrganization, for a key of owner in organization req.OrganizationID ("": none),
// read through rd, answers 404 naming organization_id when owner has no such organization,
// 422 naming organization_id when req.TeamID is a team outside it (a key of a team is in
// the team's organization), and 422 naming models when a key without a team asks for a
// model outside the organization's (a key of a team is held to them by checkKeyTeam).
// A key is made in an organization by an operator key that has it, or by an org_admin's
// virtual key (orgadmincreate.go, checked before this).
func checkKeyOrganization(ctx context.Context, g *completions.Gateway, rd store.Reader, owner string, req keyRequest) error {
	if req.OrganizationID == "" {
		return nil
	}
	rec, err := storedOrganizationOf(ctx, rd, owner, req.OrganizationID, "organization_id")
	if err != nil {
		return err
	}
	if req.TeamID == "" {
		return modelsWithin(g, rec.organization, req.Models, "a key of an organization")
	}
	t, err := storedTeamOf(ctx, rd, owner, req.TeamID)
	if err != nil {
		return err
	}
	if t.OrganizationID != req.OrganizationID {
		in := "in no organization"
		if t.OrganizationID != "" {
			in = "in organization " + t.OrganizationID
		}
		e := Validation(http.StatusUnprocessableEntity, "organization_id: team %s is %s, not in %s: a key of a team is in the team's organization (give the team's organization_id, or none)",
			req.TeamID, in, req.OrganizationID)
		e.Param = "organization_id"
		return e
	}
	return nil
}

// checkOrganizationKeys answers 422 naming models when a virtual key of owner's
// organization o without a team (a key of one of its teams is checkTeamKeysInOrganization's),
// read through rd, names a model outside o's, naming the key and the model: an
// organization's narrowed models must leave its keys within them.
func checkOrganizationKeys(ctx context.Context, g *completions.Gateway, rd store.Reader, owner string, o organization) error {
	if len(o.Models) == 0 {
		return nil
	}
	es, err := rd.List(ctx, store.VirtualKeys, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return fmt.Errorf("server: listing the keys of organization %s: %w", o.OrganizationID, err)
	}
	scope := completions.Scope{Budget: completions.NewBudget(completions.BudgetLimits{AllowedModels: o.Models})}
	for _, e := range es {
		rec, err := readKeyRecord(e.Value)
		if err != nil {
			return fmt.Errorf("server: key record %s: %w", e.Key, err)
		}
		if rec.OrganizationID != o.OrganizationID || rec.TeamID != "" {
			continue
		}
		for i, m := range rec.Models {
			if !g.Allows(scope, m) {
				e := Validation(http.StatusUnprocessableEntity, "models: key %s of organization %s names %q (its models[%d]), which is not among the new models (%s): change the key's models first (/key/update)",
					rec.ID, o.OrganizationID, m, i, strings.Join(o.Models, ", "))
				e.Param = "models"
				return e
			}
		}
	}
	return nil
}

// organizationFields are LiteLLM's organization fields the routes take.
var organizationFields = []string{"organization_id", "organization_alias", "models", "budget_id", "max_budget", "soft_budget",
	"budget_duration", "tpm_limit", "rpm_limit", "metadata", "blocked"}

// organizationIgnored are fields LiteLLM's clients send that describe the record, not a
// change: accepted and not kept.
var organizationIgnored = []string{"created_by", "updated_by", "created_at", "updated_at", "spend"}

// applyOrganizationFields sets o's fields from LiteLLM's fields (update: a change of a
// stored organization, where null removes a limit or label) and returns those given in
// the native names budgetFieldsBeside reads. max_budget 0 blocks the organization (a
// budget of nothing, as for a team); another max_budget, or null, lifts that block. A
// LiteLLM field Switchyard's organizations do not have is refused naming it unless it asks
// for nothing.
func applyOrganizationFields(o *organization, fields map[string]json.RawMessage, update bool) (map[string]json.RawMessage, error) {
	given := map[string]json.RawMessage{}
	for name, raw := range fields {
		if !slices.Contains(organizationFields, name) && !slices.Contains(organizationIgnored, name) && !emptyJSON(raw) {
			return nil, paramError(name, "%s: Switchyard's organizations have no %s (an organization bounds its teams' models and holds one account for their keys; keep labels in metadata)", name, name)
		}
	}
	var blocked *bool
	budgetBlock := false
	for _, name := range organizationFields {
		raw, ok := fields[name]
		if !ok {
			continue
		}
		isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if isNull && !update {
			continue
		}
		bad := func(want string) error {
			return paramError(name, "%s: must be %s, got %s", name, want, raw)
		}
		switch name {
		case "organization_id":
			// Read by the caller (made on /organization/new, the organization to change on update).
		case "organization_alias":
			if isNull || json.Unmarshal(raw, &o.Alias) != nil {
				return nil, bad("a string (the organization's name)")
			}
		case "models":
			if isNull {
				return nil, bad("a list of models ([] allows every model)")
			}
			if json.Unmarshal(raw, &o.Models) != nil {
				return nil, bad("a list of model names")
			}
			if len(o.Models) == 0 || litellmAllModels(raw) {
				o.Models = nil
			}
		case "budget_id":
			o.BudgetID = ""
			if !isNull && json.Unmarshal(raw, &o.BudgetID) != nil {
				return nil, bad("a string (a budget of POST /budget/new)")
			}
		case "max_budget":
			var v float64
			if !isNull && json.Unmarshal(raw, &v) != nil {
				return nil, bad("a number")
			}
			if !isNull && (math.IsNaN(v) || v < 0) {
				return nil, bad("a number of at least 0 (0 blocks the organization)")
			}
			given["max_budget_usd"] = raw
			if !isNull && v == 0 {
				o.MaxBudgetUSD, budgetBlock = 0, true
				given["blocked"] = json.RawMessage(`true`)
				continue
			}
			o.MaxBudgetUSD = v
			if o.Blocked && o.BudgetBlock {
				o.Blocked, o.BudgetBlock = false, false // the budget of nothing, replaced
			}
		case "soft_budget":
			o.SoftBudgetUSD = 0
			if !isNull && json.Unmarshal(raw, &o.SoftBudgetUSD) != nil {
				return nil, bad("a number")
			}
			given["soft_budget_usd"] = raw
		case "budget_duration":
			o.BudgetDuration = ""
			if !isNull && json.Unmarshal(raw, &o.BudgetDuration) != nil {
				return nil, bad(`a period such as "30d"`)
			}
			if strings.EqualFold(o.BudgetDuration, "none") || strings.EqualFold(o.BudgetDuration, "null") {
				o.BudgetDuration = ""
			}
			given["budget_duration"] = raw
		case "tpm_limit", "rpm_limit":
			var v int64
			if !isNull && json.Unmarshal(raw, &v) != nil {
				return nil, bad("a whole number")
			}
			if !isNull && v == 0 {
				return nil, paramError(name, "%s: 0 blocks every request on LiteLLM, which Switchyard's limit cannot express: to block the organization send blocked true or max_budget 0; null for no bound", name)
			}
			if name == "tpm_limit" {
				o.TokensPerMinute = v
				given["tokens_per_minute"] = raw
			} else {
				if v > math.MaxInt32 {
					return nil, bad("at most 1000000")
				}
				o.RequestsPerMinute = int(v)
				given["requests_per_minute"] = raw
			}
		case "metadata":
			o.Metadata = nil
			if !isNull && json.Unmarshal(raw, &o.Metadata) != nil {
				return nil, bad("a JSON object")
			}
			if len(o.Metadata) == 0 {
				o.Metadata = nil
			}
		case "blocked":
			if isNull {
				continue
			}
			var v bool
			if json.Unmarshal(raw, &v) != nil {
				return nil, bad("true or false")
			}
			blocked = &v
		}
	}
	switch {
	case budgetBlock && blocked != nil && !*blocked:
		return nil, paramError("blocked", "blocked: false contradicts max_budget 0 (a budget of nothing blocks the organization)")
	case budgetBlock:
		o.Blocked, o.BudgetBlock = true, blocked == nil
	case blocked != nil:
		o.Blocked, o.BudgetBlock = *blocked, false
	}
	return given, nil
}

// takeOrganizationBudget sets o's budget fields to those of owner's budget o.BudgetID,
// read through tx ("": o unchanged), refusing those of given with other values (400
// naming the field), or answers 404 naming budget_id.
func takeOrganizationBudget(ctx context.Context, tx store.Tx, owner string, o *organization, given map[string]json.RawMessage) error {
	err := takeBudget(ctx, tx, owner, o.BudgetID, "organization", given,
		budgetTarget{maxUSD: &o.MaxBudgetUSD, softUSD: &o.SoftBudgetUSD, duration: &o.BudgetDuration, tokensPerMinute: &o.TokensPerMinute, blocked: &o.Blocked, budgetBlock: &o.BudgetBlock,
			requestsPerMinute: &o.RequestsPerMinute})
	return organizationFieldNames(err)
}

// createOrganization makes owner's organization of LiteLLM's fields, and its account, in
// one transaction.
func (s *Server) createOrganization(ctx context.Context, g *completions.Gateway, owner string, fields map[string]json.RawMessage) (*organization, error) {
	var id string
	if raw, ok := fields["organization_id"]; ok && !isJSONNull(raw) {
		if json.Unmarshal(raw, &id) != nil {
			return nil, paramError("organization_id", "organization_id: must be a string, got %s", raw)
		}
	}
	if id == "" {
		id = uuid.NewString()
	}
	if err := checkOrganizationID(id); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	o := organization{OrganizationID: id, CreatedAt: now, CreatedBy: owner, UpdatedAt: now, UpdatedBy: owner}
	given, err := applyOrganizationFields(&o, fields, false)
	if err != nil {
		return nil, err
	}
	err = s.cfg.Store.UpdateLocked(ctx, accountLocks(organizationBudgetID(owner, id)), func(tx store.Tx) error {
		if _, err := store.GetJSON[storedOrganization](ctx, tx, store.Organizations, owner+"/"+id); err == nil {
			e := Errorf(http.StatusConflict, KindConflict, "organization_id: this key has an organization %q already", id)
			e.Param = "organization_id"
			return e
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		have, err := tx.List(ctx, store.Organizations, store.ListOptions{Prefix: owner + "/", Limit: maxOrganizationsPerOwner})
		if err != nil {
			return err
		}
		if len(have) >= maxOrganizationsPerOwner {
			return Errorf(http.StatusConflict, KindConflict, "this key has %d organizations, the most it may have: delete some first (DELETE /organization/delete)", len(have))
		}
		if err := takeOrganizationBudget(ctx, tx, owner, &o, given); err != nil {
			return err
		}
		limits, err := checkOrganization(g, o, true)
		if err != nil {
			return err
		}
		if err := completions.PutSharedBudget(ctx, tx, organizationBudgetID(owner, id), limits); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.Organizations, owner+"/"+id, storedOrganization{organization: o, Owner: owner})
	})
	if err != nil {
		return nil, fmt.Errorf("server: creating organization %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "organization created", "owner", owner, "organization_id", id)
	return &o, nil
}

// updateOrganization applies LiteLLM's fields to owner's organization id: read, merged,
// checked and written with its account's limits in one transaction, so a failed update
// changes nothing and the organization's spend is kept. New models are refused while a
// team of the organization names a model outside them.
func (s *Server) updateOrganization(ctx context.Context, g *completions.Gateway, owner, id string, fields map[string]json.RawMessage) (*organization, error) {
	_, modelsGiven := fields["models"]
	var o organization
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(organizationBudgetID(owner, id)), func(tx store.Tx) error {
		rec, err := storedOrganizationOf(ctx, tx, owner, id, "organization_id")
		if err != nil {
			return err
		}
		o = rec.organization
		given, err := applyOrganizationFields(&o, fields, true)
		if err != nil {
			return err
		}
		if err := takeOrganizationBudget(ctx, tx, owner, &o, given); err != nil {
			return err
		}
		limits, err := checkOrganization(g, o, modelsGiven)
		if err != nil {
			return err
		}
		if modelsGiven {
			teams, err := organizationTeams(ctx, tx, owner, id)
			if err != nil {
				return err
			}
			for _, t := range teams {
				if err := modelsWithin(g, o, t.Models, "team "+t.TeamID+" (change its models first with /team/update): a team in an organization"); err != nil {
					return err
				}
				if err := checkTeamKeysInOrganization(ctx, g, tx, owner, t.TeamID, o); err != nil {
					return litellmRenamed(err, []litellmName{{"organization_id", "models"}})
				}
			}
			if err := checkOrganizationKeys(ctx, g, tx, owner, o); err != nil {
				return err
			}
		}
		o.UpdatedAt, o.UpdatedBy = time.Now().UTC(), owner
		if err := completions.SetSharedBudgetLimits(ctx, tx, organizationBudgetID(owner, id), limits); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.Organizations, owner+"/"+id, storedOrganization{organization: o, Owner: owner})
	})
	if err != nil {
		return nil, fmt.Errorf("server: updating organization %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "organization updated", "owner", owner, "organization_id", id)
	return &o, nil
}

// deleteOrganizations deletes owner's organizations ids with their teams (their accounts,
// memberships and virtual keys: revoked at once on every replica), their own virtual keys
// (those without a team, revoked the same way), their memberships and their accounts, as
// LiteLLM's /organization/delete deletes an organization's teams, members and keys, in one
// transaction: all or, when one is not found, none (404 naming it). It returns the ids of
// the teams deleted and of the keys revoked.
func (s *Server) deleteOrganizations(ctx context.Context, owner string, ids []string) (teams, keys []string, err error) {
	err = s.cfg.Store.UpdateLocked(ctx, accountLocks(eachAccount(ids, func(id string) string { return organizationBudgetID(owner, id) })...), func(tx store.Tx) error {
		teams, keys = nil, nil
		for _, id := range ids {
			if _, err := storedOrganizationOf(ctx, tx, owner, id, "organization_ids"); err != nil {
				return err
			}
		}
		for _, id := range ids {
			ts, err := organizationTeams(ctx, tx, owner, id)
			if err != nil {
				return err
			}
			for _, t := range ts {
				teams = append(teams, t.TeamID)
			}
		}
		var err error
		if keys, err = deleteTeamsIn(ctx, tx, owner, teams); err != nil {
			return err
		}
		own, err := revokeKeysOf(ctx, tx, owner, func(vk virtualKey) bool {
			return vk.OrganizationID != "" && slices.Contains(ids, vk.OrganizationID)
		})
		if err != nil {
			return err
		}
		keys = append(keys, own...)
		for _, id := range ids {
			ms, err := organizationMembersOf(ctx, tx, owner, id)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if err := deleteOrganizationMember(ctx, tx, owner, id, m.UserID); err != nil {
					return err
				}
			}
			if err := tx.Delete(ctx, store.Budgets, organizationBudgetID(owner, id)); err != nil {
				return err
			}
			if err := tx.Delete(ctx, store.Organizations, owner+"/"+id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("server: deleting organizations %s: %w", strings.Join(ids, ", "), err)
	}
	s.log.InfoContext(ctx, "organizations deleted", "owner", owner, "organization_ids", ids, "teams", teams, "revoked_keys", keys)
	return teams, keys, nil
}

// organizationTeams returns owner's teams in organization id, read through rd.
func organizationTeams(ctx context.Context, rd store.Reader, owner, id string) ([]team, error) {
	ts, err := storedTeamsOf(ctx, rd, owner)
	if err != nil {
		return nil, fmt.Errorf("server: listing the teams of organization %s: %w", id, err)
	}
	return slices.DeleteFunc(ts, func(t team) bool { return t.OrganizationID != id }), nil
}

// teamOrganizations maps each of owner's teams in an organization, read through rd, to
// that organization: the organization a key of the team spends through.
func teamOrganizations(ctx context.Context, rd store.Reader, owner string) (map[string]string, error) {
	ts, err := storedTeamsOf(ctx, rd, owner)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range ts {
		if t.OrganizationID != "" {
			out[t.TeamID] = t.OrganizationID
		}
	}
	return out, nil
}

// storedTeamsOf returns owner's teams as stored (without their spend), read through rd.
func storedTeamsOf(ctx context.Context, rd store.Reader, owner string) ([]team, error) {
	es, err := rd.List(ctx, store.Teams, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, err
	}
	out := make([]team, 0, len(es))
	for _, e := range es {
		var rec storedTeam
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return nil, fmt.Errorf("server: team record %s: %w", e.Key, err)
		}
		out = append(out, rec.team)
	}
	return out, nil
}

// organizationMembersOf returns the memberships of owner's organization id, read through
// rd, in the order of their user ids.
func organizationMembersOf(ctx context.Context, rd store.Reader, owner, id string) ([]organizationMember, error) {
	es, err := rd.List(ctx, store.OrganizationMembers, store.ListOptions{Prefix: owner + "/" + id + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing the members of organization %s: %w", id, err)
	}
	out := make([]organizationMember, 0, len(es))
	for _, e := range es {
		var m organizationMember
		if err := json.Unmarshal(e.Value, &m); err != nil {
			return nil, fmt.Errorf("server: organization membership %s: %w", e.Key, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// organizationMemberOf reads owner's membership of user in organization id through rd.
func organizationMemberOf(ctx context.Context, rd store.Reader, owner, id, user string) (organizationMember, bool, error) {
	m, err := store.GetJSON[organizationMember](ctx, rd, store.OrganizationMembers, owner+"/"+id+"/"+user)
	if errors.Is(err, store.ErrNotFound) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("server: reading the membership of %s in organization %s: %w", user, id, err)
	}
	return m, true, nil
}

// deleteUserOrganizationMemberships deletes, in tx, owner's user's memberships of every
// organization (a deleted user leaves them).
func deleteUserOrganizationMemberships(ctx context.Context, tx store.Tx, owner, user string) error {
	es, err := tx.List(ctx, store.OrganizationMembers, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return fmt.Errorf("server: listing organization memberships: %w", err)
	}
	for _, e := range es {
		// "<owner>/<organization_id>/<user_id>": organization ids hold no '/'.
		org, u, ok := strings.Cut(strings.TrimPrefix(e.Key, owner+"/"), "/")
		if ok && u == user {
			if err := deleteOrganizationMember(ctx, tx, owner, org, user); err != nil {
				return err
			}
		}
	}
	return nil
}

// organizationRefusal is an organization account's refusal in LiteLLM's words (which name
// the organization).
func organizationRefusal(e *completions.BudgetExceededError) string {
	return accountRefusal("Organization", "/organization/update", e)
}

// organizationsNamingBudget returns owner's organizations naming budget id, read through
// tx.
func organizationsNamingBudget(ctx context.Context, tx store.Tx, owner, id string) ([]organization, error) {
	es, err := tx.List(ctx, store.Organizations, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing the organizations of budget %s: %w", id, err)
	}
	var out []organization
	for _, e := range es {
		var rec storedOrganization
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return nil, fmt.Errorf("server: organization record %s: %w", e.Key, err)
		}
		if rec.BudgetID == id {
			out = append(out, rec.organization)
		}
	}
	return out, nil
}

// applyBudgetToOrganizations sets the budget fields of every organization of owner naming
// budget b to b's, and their accounts' limits with them, through tx, marking them updated
// (updated_at now, updated_by owner) as /organization/update does; it returns how many it
// changed. Their spend is kept.
func applyBudgetToOrganizations(ctx context.Context, tx store.Tx, owner string, b litellmBudgetRecord) (int, error) {
	os, err := organizationsNamingBudget(ctx, tx, owner, b.BudgetID)
	if err != nil {
		return 0, err
	}
	now := time.Now().UTC()
	for _, o := range os {
		o.MaxBudgetUSD, o.SoftBudgetUSD, o.BudgetDuration, o.TokensPerMinute = b.MaxBudgetUSD, b.SoftBudgetUSD, b.BudgetDuration, b.TokensPerMinute
		o.RequestsPerMinute = b.RequestsPerMinute
		o.UpdatedAt, o.UpdatedBy = now, owner
		if err := completions.SetSharedBudgetLimits(ctx, tx, organizationBudgetID(owner, o.OrganizationID), organizationLimits(o)); err != nil {
			return 0, err
		}
		if err := store.PutJSON(ctx, tx, store.Organizations, owner+"/"+o.OrganizationID, storedOrganization{organization: o, Owner: owner}); err != nil {
			return 0, err
		}
	}
	return len(os), nil
}
