package server

import (
	"context"
	"encoding/json"
	"slices"
	"sort"

	"github.com/switchyard-ai/switchyard/store"
)

// An org_admin's virtual key may also make teams in its organization (/team/new) and keys
// of it (/key/generate), as LiteLLM lets an org_admin call its management routes for an
// organization_id it administers (auth_checks' _user_is_org_admin needs organization_id in
// the body). Only the fields below may be given, organization_id is required and must be
// an organization the key's user is org_admin of, a team of a key must be in it, a key's
// user_id may only be the caller's own (LiteLLM's _is_allowed_to_make_key_request: "User
// can only create keys for themselves") and a member of the key's team (LiteLLM's
// _team_key_operation_team_member_check), and no budget or rate may be set above the
// organization's. Every check is made again inside the transaction that stores the team
// or key, so a role taken away meanwhile refuses it. Everything else stays operator-only.

// orgAdminTeamFields are the /team/new fields an org_admin's key may give.
var orgAdminTeamFields = []string{"organization_id", "team_id", "team_alias", "models", "max_budget", "budget_duration", "tpm_limit", "rpm_limit", "blocked"}

// orgAdminKeyFields are the /key/generate fields an org_admin's key may give.
var orgAdminKeyFields = []string{"organization_id", "team_id", "user_id", "key_alias", "models", "max_budget", "soft_budget", "budget_duration", "tpm_limit", "rpm_limit", "duration", "tags"}

// orgAdminCreation is what an org_admin's /team/new or /key/generate asks for, checked by
// check against the store.
type orgAdminCreation struct {
	caller orgCaller
	owner  string
	// org is the body's organization_id; team and user a key's team_id and user_id.
	org, team, user string
	// maxBudget, tpm and rpm are the limits asked for (0: none given).
	maxBudget float64
	tpm       int64
	rpm       int
}

// orgAdminFields answers 403 naming the field when fields, the body of route by a virtual
// key, gives one outside allowed, or no organization_id; otherwise the organization_id.
// An empty value (emptyJSON: null, "", [], {}, 0 or false) passes, as LiteLLM's clients
// send their defaults: it asks for nothing, since every field outside the lists whose
// empty value would mean something is refused for it later anyway (a 0 limit is a 400)
// or has it as its default (a new key's or team's blocked is false);
// TestOrgAdminFieldsEmptyValues keeps that true of the bool fields.
func orgAdminFields(route string, fields map[string]json.RawMessage, allowed []string) (string, error) {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names) // the first refused named alike every time
	for _, n := range names {
		if slices.Contains(allowed, n) || emptyJSON(fields[n]) {
			continue
		}
		return "", forbiddenParam(n, "%s: a virtual key (an org_admin's) may not set %s on %s: an operator key may", n, n, route)
	}
	var org string
	if raw, ok := fields["organization_id"]; !ok || json.Unmarshal(raw, &org) != nil || org == "" {
		return "", forbiddenParam("organization_id", "organization_id: required of a virtual key on %s: an organization its user_id is org_admin of (others are the operator keys')", route)
	}
	return org, nil
}

// check answers nil when o may be stored, read through tx: the caller org_admin of o.org,
// a key's team in it and its user the caller's own and a member of the team, and no limit
// above the organization's.
func (o orgAdminCreation) check(ctx context.Context, tx store.Reader) error {
	if err := checkOrgCaller(ctx, tx, o.owner, o.caller, o.org, "organization_id", true); err != nil {
		return err
	}
	if o.user != "" && o.user != o.caller.userID {
		return forbiddenParam("user_id", "user_id: User can only create keys for themselves. Got user_id=%s, Your ID=%s", o.user, o.caller.userID)
	}
	if o.team != "" {
		t, err := storedTeamOf(ctx, tx, o.owner, o.team)
		if err != nil || t.OrganizationID != o.org {
			// Not told apart from a missing team: teams of other organizations stay unseen.
			return forbiddenParam("team_id", "team_id: %q is not a team of organization %q", o.team, o.org)
		}
		if o.user != "" {
			if _, ok, err := memberOf(ctx, tx, o.owner, o.team, o.user); err != nil {
				return err
			} else if !ok {
				return paramError("user_id", "user_id: User=%s not assigned to team=%s", o.user, o.team)
			}
		}
	}
	org, err := storedOrganizationOf(ctx, tx, o.owner, o.org, "organization_id")
	if err != nil {
		return err
	}
	if org.MaxBudgetUSD > 0 && o.maxBudget > org.MaxBudgetUSD {
		return forbiddenParam("max_budget", "max_budget: %g is above organization %s's max_budget %g", o.maxBudget, o.org, org.MaxBudgetUSD)
	}
	if org.TokensPerMinute > 0 && o.tpm > org.TokensPerMinute {
		return forbiddenParam("tpm_limit", "tpm_limit: %d is above organization %s's tpm_limit %d", o.tpm, o.org, org.TokensPerMinute)
	}
	if org.RequestsPerMinute > 0 && o.rpm > org.RequestsPerMinute {
		return forbiddenParam("rpm_limit", "rpm_limit: %d is above organization %s's rpm_limit %d", o.rpm, o.org, org.RequestsPerMinute)
	}
	return nil
}
